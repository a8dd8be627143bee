"""filesystem-remounted-read-only on real kernel logs from public threads (fixtures/pastes, SOURCES.md):
ext4's aborted journal and remount (cortx-hare, lede), XFS's shutdown in its old and new wordings
(stratisd, talos, xcat), and near misses: ext4's mount message naming errors=remount-ro, a read-only
container image."""

from __future__ import annotations

import pytest

from hpcdoctor.sysroot.replay import SnapshotError
from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste, dev, checker", [
    ("cortx-hare-852-ext4-aborted-journal-remount-read-only.txt", "dm-25", "e2fsck -f /dev/dm-25"),
    ("lede-6147-ext4-remount-read-only.txt", "sdb1", "e2fsck -f /dev/sdb1"),
])
def test_ext4_made_read_only_is_an_error_naming_the_device(paste, dev, checker):
    (f,) = fired("filesystem-remounted-read-only", recorded_paste_facts(paste))
    assert f.severity == "error" and f"took {dev} out of writing" in f.message and "Read-only file system" in f.message
    assert f"findmnt -o TARGET,SOURCE,FSTYPE,OPTIONS /dev/{dev}" in f.fix and checker in f.fix


@pytest.mark.parametrize("paste, dev, quoted", [
    ("stratisd-812-xfs-shutdown-pre-5.15.txt", "dm-11", "Shutting down filesystem"),
    ("talos-8733-xfs-log-io-error-shut-down.txt", "sdb6", "XFS (sdb6): Filesystem has been shut"),
    ("xcat-core-1175-xfs-log-force-error-5.txt", "dm-0", "xfs_log_force: error -5 returned"),
])
def test_an_xfs_shutdown_in_each_wording_says_io_errors_and_xfs_repair(paste, dev, quoted):
    (f,) = fired("filesystem-remounted-read-only", recorded_paste_facts(paste))
    assert f.severity == "error" and quoted in f.message and "Input/output error" in f.message
    assert f"xfs_repair /dev/{dev}" in f.fix


def test_a_mount_message_naming_the_remount_option_is_not_read_as_one():
    # "re-mounted. Opts: errors=remount-ro": the option of a healthy mount, not a remount after an error
    with pytest.raises(SnapshotError):
        recorded_paste_facts("hamonikr-system-13-remount-ro-option-healthy.txt")


def test_silent_on_an_ext4_error_that_left_the_file_system_writable():
    # ext4's full directory index (ENOSPC on one directory): an ext4 warning, no remount
    assert not fired("filesystem-remounted-read-only", recorded_paste_facts("moosefs-65-ext4-directory-index-full.txt"))


@pytest.mark.parametrize("paste", ["singularity-38-yum-read-only-image-healthy.txt", "photon-191-errno-30-read-only-file-system.txt"])
def test_a_programs_read_only_file_system_alone_is_only_info(paste):
    # yum in a read-only container image (healthy), a program's EROFS: no kernel line says the file system was remounted
    (f,) = fired("filesystem-remounted-read-only", recorded_paste_facts(paste))
    assert f.severity == "info" and "read-only by design is the other cause" in f.message
