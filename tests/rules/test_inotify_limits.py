"""inotify-watch-limit-too-low (rules/inotify_limits.py) on set T's pastes and another emitter's
real paste (GNU tail; tests/fixtures/pastes/SOURCES.md), through the real catalogue."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule

T = "../tickets_blind_t/"


@pytest.mark.parametrize("paste, quoted", [
    (T + "whalebird-desktop-3895-inotify-watch-limit-too-low.txt", "System limit for number of file watchers reached"),
    (T + "node-1666-fs-watch-enospc-inotify-limit.txt", "Error: watch ENOSPC"),
    ("openshift-installer-1773-tail-inotify-exhausted.txt", "tail: inotify resources exhausted"),
])
def test_a_refused_watch_is_the_user_watch_limit_not_a_full_disk(paste, quoted):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("inotify-watch-limit-too-low", gathered)
    assert f.severity == "error" and quoted in f.message and "max_user_watches" in f.message
    assert "not a full disk" in f.message and "fs.inotify.max_user_watches=524288" in f.fix
    assert run_rule("disk-full", gathered)[0] == []


def test_java_instances_limit_names_max_user_instances():
    # OpenJDK LinuxWatchService's text for EMFILE from inotify_init (inotify.toml's source)
    from rulekit import told_facts
    (f,) = fired("inotify-watch-limit-too-low",
                 told_facts("java.io.IOException: User limit of inotify instances reached or too many open files\n"))
    assert "max_user_instances" in f.message and "max_user_instances=1024" in f.fix


def test_silent_on_a_disk_that_is_full():
    # pip's ENOSPC is a full disk: no watcher's words, so not this rule's; a paste has no live reading
    findings, skipped = run_rule("inotify-watch-limit-too-low", recorded_paste_facts("hackgpt-9-pip-no-space-left.txt"))
    assert findings == [] and [s["reason"] for s in skipped] == [
        "needs system.inotify.max_user_watches: /proc/sys/fs/inotify/max_user_watches not readable (no inotify in this "
        "kernel, or not recorded)"]


@pytest.mark.parametrize("watches, fires", [(8192, True), (65536, False)])
def test_a_live_node_at_the_kernels_floor_gets_advice(watches, fires):
    from rulekit import facts
    gathered = facts("h100-kvm-1gpu", **{"system.inotify": {"max_user_watches": watches, "max_user_instances": 128}})
    found = fired("inotify-watch-limit-too-low", gathered)
    assert bool(found) == fires
    if fires:
        assert found[0].severity == "advice" and "8192" in found[0].message


def test_silent_on_a_live_node_with_the_5_11_default_for_its_memory():
    # 1% of a 128 GiB node over about 1 KiB a watch: the kernel's own default since 5.11, not low
    from rulekit import facts
    gathered = facts("h100-kvm-1gpu", **{"system.inotify": {"max_user_watches": 1048576, "max_user_instances": 128}})
    assert not fired("inotify-watch-limit-too-low", gathered)
