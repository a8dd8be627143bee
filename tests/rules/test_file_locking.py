"""fs-file-locking-unsupported: SQLite's and Python filelock's lock failures in real public pastes
(tests/fixtures/pastes, SOURCES.md there) and a recorded SQLite error, and on the node a mount a run
writes to whose locks are local to the node (mountinfo's options as Linux's nfs_show_mount_options
prints them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import facts, fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, severity, words", [
    ("crush-3461-sqlite-locking-protocol-nfs-home.txt", "warning", "SQLite's locking protocol failed (line 11"),
    ("drqa-69-sqlite-db-on-nfs-locked.txt", "info", "another connection holds the lock, or the database is on a network file system"),
    ("datasets-329-filelock-hangs-on-fsx-lustre.txt", "info", "a FileLock that never acquires: the file system refuses flock()"),
])
def test_each_pasted_lock_failure_at_the_severity_its_words_allow(paste, severity, words):
    (f,) = fired("fs-file-locking-unsupported", recorded_paste_facts(paste))
    assert f.severity == severity and words in f.message
    assert f.fix.startswith("findmnt -T") and "node-local disk" in f.fix


def test_filelocks_enosys_message_is_the_error():
    # filelock 3.12.4 _unix.py's NotImplementedError, as Python prints it
    (f,) = fired("fs-file-locking-unsupported",
                 told_facts("NotImplementedError: FileSystem does not appear to support flock; user SoftFileLock instead\n"))
    assert f.severity == "error" and "refuses flock() (ENOSYS)" in f.message


def test_recorded_sqlite_busy_is_read():
    # recorded on the development VM: a second connection while the first holds BEGIN EXCLUSIVE
    said = find_messages('  File "<stdin>", line 6, in <module>\nsqlite3.OperationalError: database is locked\n')
    assert [s["id"] for s in said] == ["file_locks:sqlite-busy"]


@pytest.mark.parametrize("paste", ["h5py-1082-nfs-no-locks-available.txt", "nccl-258-cuda-gdb-p2p-warnings-healthy.txt"])
def test_other_lock_messages_and_healthy_pastes_are_silent(paste):
    # HDF5's own lock refusal is hdf5-file-locking's; a healthy NCCL run says nothing of locks
    assert not fired("fs-file-locking-unsupported", recorded_paste_facts(paste))


def _mount(fstype, options):
    fs = [{"roles": ["HOME", "HF_HOME"], "paths": ["/home/u", "/home/u/.cache/huggingface"], "mount_probe": "/home/u",
           "size_bytes": 10 ** 12, "free_bytes": 10 ** 11, "fstype": fstype, "options": options}]
    return facts("h100-kvm-1gpu", **{"limits.filesystems": fs})


@pytest.mark.parametrize("fstype, option", [("nfs", "nolock"), ("nfs4", "local_lock=all"), ("nfs", "local_lock=posix"),
                                            ("lustre", "localflock")])
def test_on_the_node_a_mount_with_node_local_locks_is_a_warning(fstype, option):
    (f,) = fired("fs-file-locking-unsupported", _mount(fstype, ["rw", "relatime", "vers=3", option]))
    assert f.severity == "warning" and f"/home/u (HOME, HF_HOME) is {fstype} mounted with {option}" in f.message


def test_on_the_node_nfs_with_the_lock_service_is_silent():
    assert not fired("fs-file-locking-unsupported", _mount("nfs4", ["rw", "relatime", "vers=4.2", "local_lock=none"]))
    assert not fired("fs-file-locking-unsupported", _mount("lustre", ["rw", "flock", "lazystatfs"]))


@pytest.mark.parametrize("paste, line", [
    ("taudem-17-romio-lock-errno-26-lustre.txt", 3),
    ("smilei-342-romio-generic-mpich-lock-errno-26.txt", 1),
])
def test_romio_lock_refused_with_enosys_is_the_error(paste, line):
    # ROMIO prints the errno with %X: 26 is 38, ENOSYS (Lustre mounted without flock)
    (f,) = fired("fs-file-locking-unsupported", recorded_paste_facts(paste))
    assert f.severity == "error" and "errno 26 is hexadecimal for 38 ENOSYS" in f.message and f"(line {line}:" in f.message
    assert "export ROMIO_HINTS=" in f.fix and "romio_ds_write disable" in f.fix


def test_romio_lock_failure_without_errno_is_a_warning():
    (f,) = fired("fs-file-locking-unsupported", recorded_paste_facts("ompi-users-4852-romio-lock-failed-no-errno.txt"))
    assert f.severity == "warning" and "this ROMIO names no errno" in f.message


def test_romio_lock_failure_with_eio_is_read_not_judged():
    # errno 5 (EIO): the lock call failed, not a file system without locks
    assert not fired("fs-file-locking-unsupported", recorded_paste_facts("ompi-devel-9898-romio-lock-errno-5-eio.txt"))
    said = find_messages((Path(__file__).parents[1] / "fixtures/pastes/ompi-devel-9898-romio-lock-errno-5-eio.txt").read_text())
    assert "mpich:romio-lock-failed-other-errno" in [s["id"] for s in said]


@pytest.mark.parametrize("paste, line", [
    ("spack-12501-errno-37-no-locks-available.txt", 1),
    ("kuma-3856-ioerror-errno-37-no-locks-statd.txt", 2),
])
def test_enolck_as_python_prints_it_is_the_error(paste, line):
    # ENOLCK is fcntl()'s and flock()'s own refusal of the lock (errno.toml, glibc errlist.h)
    (f,) = fired("fs-file-locking-unsupported", recorded_paste_facts(paste))
    assert f.severity == "error" and "ENOLCK" in f.message and f"line {line}:" in f.message
    assert f.evidence["message"] == "errno:ENOLCK" and "lockd/rpc.statd" in f.fix


def test_silent_on_a_lock_held_by_another_process():
    # HDF5's errno 11 (EAGAIN): the lock is held elsewhere, which the file system granting locks implies
    assert fired("fs-file-locking-unsupported", recorded_paste_facts("h5py-3.12-lock-held-errno-11.txt")) == []
