"""fs-file-locking-unsupported (SYS013) read from more emitters of a lock the file system refuses
(knowledge/messages/file_locks.toml): cargo's "failed to lock file: ... (os error 38)" and strace's
record of the flock()/fcntl() call returning ENOSYS, ENOLCK or EOPNOTSUPP. Verbatim public pastes
(tests/fixtures/pastes/SOURCES.md); the near miss is a lock another process holds."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_paste_facts

LOCKS = "fs-file-locking-unsupported"


@pytest.mark.parametrize("paste,who", [
    ("cargo-3666-lock-file-enosys-lustre.txt", "the lock of cargo"),
    ("filelock-67-strace-flock-enosys-lustre.txt", "the lock of flock() (strace)"),
])
def test_a_lock_call_refused_by_the_file_system(paste, who):
    (f,) = fired(LOCKS, recorded_paste_facts(paste))
    assert f.severity == "error"
    assert f"the file system refused {who}: Function not implemented (ENOSYS" in f.message
    assert "findmnt" in f.fix and "-o flock" in f.fix


def test_a_lock_another_process_holds_is_not_unsupported():
    # truss on FreeBSD: fcntl(F_SETLK) ERR#35 'Resource temporarily unavailable' (EAGAIN: held)
    assert not run_rule(LOCKS, told_paste_facts("dotnet-65059-truss-lock-held-eagain.txt"))[0]
