"""shm-too-small (MEM003) read from Python's multiprocessing semaphores, which glibc keeps in
/dev/shm (knowledge/messages/multiprocessing_shm.toml): a Lock, Queue or Event that cannot be made
prints only "[Errno 28] No space left on device", which without the SemLock frame reads as a full
disk. Verbatim public pastes (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_paste_facts

SHM = "shm-too-small"


@pytest.mark.parametrize("paste,line", [
    ("cpython-93253-semlock-enospc-shm-size-1m.txt", 20),   # docker run --shm-size=1m
    ("shippable-3681-semlock-enospc-ci.txt", 13),           # Python 3.6: the call's last argument in the frame
    ("vits-397-joblib-serial-mode-enospc.txt", 4),          # joblib's import-time semaphore
])
def test_a_semaphore_without_room_in_dev_shm_is_a_full_dev_shm(paste, line):
    facts = recorded_paste_facts(paste)
    (f,) = fired(SHM, facts)
    assert f.severity == "warning" and f"/dev/shm is full (line {line})" in f.message
    assert "shm-size" in f.fix
    # the same errno is not also answered as a full disk
    assert not run_rule("disk-full", facts)[0]


def test_a_full_disk_under_pip_is_still_a_full_disk():
    facts = recorded_paste_facts("hackgpt-9-pip-no-space-left.txt")
    assert run_rule("disk-full", facts)[0] and not run_rule(SHM, facts)[0]


def test_joblib_falling_back_for_another_reason_is_silent():
    # "This platform lacks a functioning sem_open implementation": no /dev/shm to fill
    assert not run_rule(SHM, told_paste_facts("joblib-127-serial-mode-no-sem-open.txt"))[0]
