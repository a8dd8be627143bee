"""cgroup-pids-limit-reached on real kernel logs from public threads (fixtures/pastes, SOURCES.md): a
systemd service's TasksMax (unifi, icinga2), and bash's fork retry with no kernel line, which is
nproc-limit-too-low's (ulimit -u) and not this rule's."""

from __future__ import annotations

import pytest

from conftest import NODES
from rulekit import facts, fired, recorded_paste_facts, run_rule
from hpcdoctor.checks import affinity
from hpcdoctor.sysroot import ReplaySysRoot


@pytest.mark.parametrize("paste, unit", [
    ("unifi-linux-utils-17-pids-controller-fork-rejected.txt", "unifi.service"),
    ("icinga2-4918-pids-controller-fork-rejected.txt", "icinga2.service"),
])
def test_the_pids_controllers_line_names_the_cgroup_and_its_tasksmax(paste, unit):
    (f,) = fired("cgroup-pids-limit-reached", recorded_paste_facts(paste))
    assert f.severity == "error" and f"/system.slice/{unit}" in f.message and "ulimit -u is not the limit" in f.message
    assert f"cat /sys/fs/cgroup/system.slice/{unit}/pids.max" in f.fix
    assert f"sudo systemctl set-property {unit} TasksMax=infinity" in f.fix


def test_the_same_paste_is_not_read_as_ulimit_u():
    findings, _ = run_rule("nproc-limit-too-low", recorded_paste_facts("icinga2-4918-pids-controller-fork-rejected.txt"))
    assert findings == []


def test_silent_on_a_fork_retry_without_the_kernels_line():
    # the paste holds no cgroup files: the node's own limits are not judged, and the line is not this rule's
    findings, skipped = run_rule("cgroup-pids-limit-reached", recorded_paste_facts("cmc-csci143-283-bash-fork-retry.txt"))
    assert not findings and [s["reason"] for s in skipped] == [
        "needs affinity.pids_limits: no cgroup pids files readable (not recorded, or no pids controller)"]


# --- on a node: checks/affinity.py reads pids.max, pids.current and pids.events up the process's cgroups

NODE = "cpu-kvm-2core-pids-refused-2026-11-27"


def test_forks_refused_before_in_this_cgroup_are_a_warning():
    # recorded on the development VM (cgroup v1 in systemd's hybrid mode): a shell in a pids cgroup
    # limited to 12 started 20 sleeps (bash: "fork: retry: Resource temporarily unavailable"), then the
    # limit was raised to 256 and `hpcdoctor snapshot` ran in the same cgroup
    (f,) = fired("cgroup-pids-limit-reached", facts(NODE))
    assert f.severity == "warning" and f.message.startswith("cgroup /hpcd-rec: 4 of its 256 tasks in use, 6 fork(s) refused")
    assert "/sys/fs/cgroup/pids/hpcd-rec/pids.events" in f.fix


def test_a_cgroup_at_its_limit_is_an_error_and_one_with_room_is_silent():
    full = dict(facts(NODE)["facts"]["affinity"]["pids_limits"][0], current=256)
    (f,) = fired("cgroup-pids-limit-reached", facts(NODE, **{"affinity.pids_limits": [full]}))
    assert f.severity == "error" and "no process or thread can start" in f.message
    room = dict(full, current=4, refused=0)
    assert not fired("cgroup-pids-limit-reached", facts(NODE, **{"affinity.pids_limits": [room]}))


def test_the_hybrid_host_reads_its_v1_pids_hierarchy():
    a = affinity.collect(ReplaySysRoot(NODES / NODE), None)["affinity"]
    assert a["cgroup"] == "v1"   # a 0:: line, but the controllers are v1's
    # read at the process's own memory cgroup (memory:/process_api/...: its memory.stat says no limit),
    # and the v1 cpu hierarchy: known, where the v2 reading found no cpu.max or memory.max at all
    assert a["memory_limit_bytes"] is None and a["cpu_quota"] is None
    assert a["pids_limits"] == [{"cgroup": "/hpcd-rec", "max": 256, "current": 4, "refused": 6}]
