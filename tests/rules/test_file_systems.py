"""tmp-noexec and hdf5-file-locking on recorded outputs (a noexec tmpfs on the project's VM; h5py
3.12.1 with a file held open) and public pastes (tests/fixtures/pastes, SOURCES.md there), and the
mount options the limits check reads from /proc/self/mountinfo (tests/fixtures/mountinfo)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rulekit import PASTES, facts, fired, recorded_paste_facts
from hpcdoctor.checks.limits import _mount_for, parse_mountinfo
from hpcdoctor.triage.messages import find_messages

MOUNTINFO = Path(__file__).resolve().parents[1] / "fixtures" / "mountinfo" / "vm-noexec-tmpfs.txt"


@pytest.mark.parametrize("paste, words", [
    ("noexec-tmpfs-ctypes-cdll.txt", "/tmp/fsq_noexec/libz.so.1 could not be loaded or run"),
    ("noexec-tmpfs-torch-compile-inductor.txt", ".main.so could not be loaded or run"),
    ("noexec-tmpfs-bash-exec.txt", "/tmp/fsq_noexec/run.sh could not be executed"),
    ("noexec-tmpfs-subprocess-run.txt", "/tmp/fsq_noexec/run.sh could not be executed"),
])
def test_each_recorded_refusal_points_the_caches_at_an_exec_able_directory(paste, words):
    (f,) = fired("tmp-noexec", recorded_paste_facts(paste))
    assert words in f.message and f.severity == "error"
    assert "export TMPDIR=$HOME/tmp TORCHINDUCTOR_CACHE_DIR=" in f.fix and "TRITON_CACHE_DIR=$HOME/.triton/cache" in f.fix
    assert f.fix.startswith("findmnt -no OPTIONS --target /tmp/fsq_noexec")
    assert f.fix.index("mkdir -p $HOME/tmp") < f.fix.index("export TMPDIR=$HOME/tmp")


def test_a_library_outside_the_temporary_directories_is_not_this_rule():
    # the same loader error for a library in an installed tree: an address-space limit or another cause
    text = (PASTES / "noexec-tmpfs-ctypes-cdll.txt").read_text().replace("/tmp/fsq_noexec/", "/opt/app/lib/")
    assert "loader:failed-to-map-segment" in {s["id"] for s in find_messages(text)}
    assert not fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def _fs(path, options, roles=("TMPDIR",)):
    return {"roles": list(roles), "paths": [path], "mount_probe": path, "size_bytes": 1 << 30, "free_bytes": 1 << 29,
            "fstype": "tmpfs", "options": list(options)}


def test_the_nodes_mount_options_decide_a_permission_denied():
    told = find_messages((PASTES / "noexec-tmpfs-bash-exec.txt").read_text())
    # the node says /tmp/fsq_noexec is noexec: the cause is named, no check to run first
    (f,) = fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": told,
                                                         "limits.filesystems": [_fs("/tmp/fsq_noexec", ["rw", "noexec"])]}))
    assert "is mounted rw,noexec" in f.message and not f.fix.startswith("findmnt")
    # the node says it allows execution: a missing execute bit, not this rule
    assert not fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": told,
                                                              "limits.filesystems": [_fs("/tmp/fsq_noexec", ["rw", "relatime"])]}))


def test_a_noexec_temporary_directory_alone_is_advice():
    (f,) = fired("tmp-noexec", facts("h100-kvm-1gpu", **{"limits.filesystems": [_fs("/tmp", ["rw", "nosuid", "noexec"])]}))
    assert f.severity == "advice" and "/tmp (TMPDIR)" in f.message
    # HOME on a noexec mount is not where a JIT writes by default: nothing to say
    assert not fired("tmp-noexec", facts("h100-kvm-1gpu", **{"limits.filesystems": [_fs("/home/u", ["noexec"], roles=("HOME",))]}))


def test_mountinfo_as_recorded_gives_each_mount_its_options():
    mounts = parse_mountinfo(MOUNTINFO.read_text())
    assert _mount_for(mounts, os.makedev(0, 39), "/tmp/fsq_noexec/inductor") == ("tmpfs", ["rw", "noexec", "relatime", "rw", "size=524288k"])
    fstype, opts = _mount_for(mounts, os.makedev(254, 0), "/work/wt")
    assert fstype == "ext4" and "noexec" not in opts
    assert _mount_for(mounts, os.makedev(9, 9), "/x") is None
    # hostile input: no separator, short lines, binary noise
    assert parse_mountinfo("garbage\n1 2 3\n\x00 - \n") == {}


def test_silent_without_a_refusal():
    assert not fired("tmp-noexec", recorded_paste_facts("h5py-1082-nfs-no-locks-available.txt"))


@pytest.mark.parametrize("paste, errno, reason", [
    ("h5py-1082-nfs-no-locks-available.txt", "37", "No locks available"),   # h5py 2.8.0, HDF5 1.10.2, NFS
])
def test_a_lock_the_file_system_refuses_turns_locking_off(paste, errno, reason):
    (f,) = fired("hdf5-file-locking", recorded_paste_facts(paste))
    assert f"({reason}, errno {errno})" in f.message and f.severity == "error"
    # the export is printed, not set by `hpcdoctor env`: a pasted message stays whatever a variable says
    assert f.fix.startswith("export HDF5_USE_FILE_LOCKING=FALSE") and not f.env


def test_enosys_is_refused_too():
    text = (PASTES / "h5py-1082-nfs-no-locks-available.txt").read_text().replace(
        "errno = 37, error message = 'No locks available'", "errno = 38, error message = 'Function not implemented'")
    (f,) = fired("hdf5-file-locking", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "errno 38" in f.message and "HDF5_USE_FILE_LOCKING=FALSE" in f.fix


@pytest.mark.parametrize("paste", ["h5py-3.12-lock-held-errno-11.txt", "loss-landscape-28-h5py-errno-11-lock-held.txt"])
def test_a_lock_another_process_holds_is_a_different_cause(paste):
    (f,) = fired("hdf5-file-locking", recorded_paste_facts(paste))
    assert "another process holds its lock (errno 11)" in f.message and f.severity == "warning"
    # turning locking off would hide a real conflict: not offered
    assert "HDF5_USE_FILE_LOCKING" not in f.fix and "read-only" in f.fix and not f.env


def test_other_errnos_are_read_but_not_judged():
    text = (PASTES / "h5py-1082-nfs-no-locks-available.txt").read_text().replace(
        "errno = 37, error message = 'No locks available'", "errno = 5, error message = 'Input/output error'")
    found = find_messages(text)
    assert "hdf5:lock-other-errno" in {s["id"] for s in found}
    assert not fired("hdf5-file-locking", facts("h100-kvm-1gpu", **{"ticket.symptoms": found}))


def test_hdf5_silent_without_a_lock_message():
    assert not fired("hdf5-file-locking", recorded_paste_facts("noexec-tmpfs-ctypes-cdll.txt"))


def test_the_working_directorys_file_system_sharpens_a_refused_lock():
    told = find_messages((PASTES / "h5py-1082-nfs-no-locks-available.txt").read_text())
    cwd = dict(_fs("/home/u/run", ["rw", "relatime"], roles=("working directory", "HOME")), fstype="nfs4")
    (f,) = fired("hdf5-file-locking", facts("h100-kvm-1gpu", **{"ticket.symptoms": told, "limits.filesystems": [cwd]}))
    assert "the working directory here is on nfs4 (/home/u/run)" in f.message
    # a local disk says nothing more
    (f,) = fired("hdf5-file-locking", facts("h100-kvm-1gpu", **{"ticket.symptoms": told,
                                                                "limits.filesystems": [dict(cwd, fstype="ext4")]}))
    assert "working directory here" not in f.message


# -- a build stage's program refused (spack's ProcessError; issue 24) ---------------------------

SPACK = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_p" / "spack-9746-build-stage-on-noexec-tmp.txt"


def test_spack_stage_refusal_is_consistent_with_noexec():
    told = find_messages(SPACK.read_text())
    (f,) = fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": told}))
    assert f.severity == "warning" and "libsigsegv-2.11/configure could not be executed in the build stage" in f.message
    assert f.fix.startswith('findmnt -no OPTIONS --target "${TMPDIR:-/tmp}"') and "export TMPDIR=$HOME/tmp" in f.fix


def test_spack_stage_refusal_with_the_nodes_record():
    told = find_messages(SPACK.read_text())
    home = _fs("/home/andradevalen1", ["rw", "relatime"], roles=("HOME",))
    # TMPDIR noexec on the node: the stage's link leads there, the cause is named
    (f,) = fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": told,
                                                         "limits.filesystems": [home, _fs("/tmp", ["rw", "noexec"])]}))
    assert f.severity == "error" and "/tmp is mounted rw,noexec" in f.message
    # both allow execution: a missing execute bit, not this rule
    assert not fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": told,
                                                              "limits.filesystems": [home, _fs("/tmp", ["rw"])]}))


def test_spack_build_failure_with_an_exit_status_is_not_a_refused_exec():
    # https://github.com/spack/spack/issues/25598, two lines verbatim: the program ran and failed
    text = "==> Error: ProcessError: Command exited with status 2:\n    'make' '-j16' 'V=1'\n"
    assert not fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def test_a_bare_soname_refused_with_eperm_is_a_noexec_warning():
    # a bundled docker-compose's loader names only the soname; mmap's EPERM for PROT_EXEC is a noexec mount
    (f,) = fired("tmp-noexec", recorded_paste_facts("compose-1339-tmp-mounted-noexec.txt"))
    assert f.severity == "warning" and "libz.so.1" in f.message and "EPERM" in f.message
    assert f.fix.startswith('findmnt -no OPTIONS --target "${TMPDIR:-/tmp}"')


def test_a_bare_soname_without_eperm_is_not_this_rule():
    # the same line with ENOMEM: an address-space limit (ulimit -v), not a noexec mount
    text = (PASTES / "compose-1339-tmp-mounted-noexec.txt").read_text().replace("Operation not permitted",
                                                                                  "Cannot allocate memory")
    assert not fired("tmp-noexec", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


@pytest.mark.parametrize("paste, shown", [
    ("noexec-tmpfs-ls-then-exec.txt", "-rwxrwxr-x"),   # recorded on a noexec tmpfs
    ("../tickets_blind_aa/docker-ripper-26-script-on-noexec-drive.txt", "-rwxrwxr-x"),   # a drive mounted noexec
])
def test_an_executable_listed_and_refused_is_the_mount(paste, shown):
    (f,) = fired("tmp-noexec", recorded_paste_facts(paste))
    assert f.severity == "error" and f"shows it executable ({shown})" in f.message and "mounted noexec" in f.message
    assert "findmnt -no TARGET,OPTIONS --target" in f.fix


def test_a_listing_without_the_execute_bit_is_not_the_mount():
    # the same Permission denied and 126, the file recorded without its execute bits
    assert not fired("tmp-noexec", recorded_paste_facts("exec-bit-missing-ls-then-exec.txt"))


def test_an_executable_listed_with_an_selinux_context_is_not_claimed_for_noexec():
    # podman#4306: ls -l's "." marks an SELinux label; the refusal is the label's (selinux-denies-container-access)
    assert not fired("tmp-noexec", recorded_paste_facts("podman-4306-selinux-bind-mount-denied.txt"))
