"""cgroup-pids-limit-reached on real kernel logs from public threads (fixtures/pastes, SOURCES.md): a
systemd service's TasksMax (unifi, icinga2), and bash's fork retry with no kernel line, which is
nproc-limit-too-low's (ulimit -u) and not this rule's."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule


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
    assert not fired("cgroup-pids-limit-reached", recorded_paste_facts("cmc-csci143-283-bash-fork-retry.txt"))
