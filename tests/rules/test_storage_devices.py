"""storage-device-errors on real kernel logs from public threads (fixtures/pastes, SOURCES.md): a disk
that failed under ext4, a failing disk's medium errors, an SD card's aborted journal, and a loop
device's errors from a full backing file system as the near miss."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_a_disk_that_failed_under_ext4_is_the_error_on_its_first_stated_line():
    (f,) = fired("storage-device-errors", recorded_paste_facts("lede-6147-ext4-remount-read-only.txt"))
    assert f.severity == "error" and "sdb failing (line 3:" in f.message and "critical target error" in f.message
    assert "more such line(s)" in f.message
    assert f.fix.startswith("lsblk -s -o NAME,TYPE,MODEL,SERIAL,MOUNTPOINT /dev/sdb")
    assert "sudo smartctl -H -A /dev/sdb" in f.fix and "state=drain" in f.fix


def test_medium_errors_and_lost_writes_name_the_disk():
    (f,) = fired("storage-device-errors", recorded_paste_facts("longhorn-193-critical-medium-error-lost-async-page-write.txt"))
    assert f.severity == "error" and "critical medium error, dev sdb" in f.message
    assert f.evidence["message"] == "kernel_storage:blk-critical-medium"


def test_an_ext4_error_alone_is_a_warning():
    # EXT4-fs error without the remount or the block layer's status: the device may still answer
    (f,) = fired("storage-device-errors", recorded_paste_facts("adsb-receiver-366-ext4-error-aborted-journal-sd-card.txt"))
    assert f.severity == "warning" and "mmcblk0p2" in f.message and "/dev/mmcblk0p2" in f.fix


def test_silent_on_a_loop_devices_errors_from_a_full_backing_file_system():
    assert not fired("storage-device-errors",
                     recorded_paste_facts("sonic-buildimage-23146-loop-device-io-error-disk-exhaustion.txt"))


def test_silent_on_an_nfs_server_not_answering():
    # the server's silence is the network's or the server's, not a disk of this node
    assert not fired("storage-device-errors", recorded_paste_facts("princeton-ansible-6612-nfs-not-responding.txt"))


def test_an_xfs_shutdown_after_metadata_errors_is_the_error():
    (f,) = fired("storage-device-errors", recorded_paste_facts("stratisd-812-xfs-shutdown-pre-5.15.txt"))
    assert f.severity == "error" and "dm-11" in f.message and "lsblk -s" in f.fix and "/dev/dm-11" in f.fix


def test_xfs_log_force_names_its_errno():
    # Linux 4.4's "xfs_log_force: error -5 returned.": the log shut down after the disk failed a write (EIO)
    for paste, dev in (("alba-469-xfs-log-force-error-5.txt", "sdd1"), ("xcat-core-1175-xfs-log-force-error-5.txt", "dm-0")):
        (f,) = fired("storage-device-errors", recorded_paste_facts(paste))
        assert f.severity == "error" and f"{dev} failing" in f.message and "(error -5: EIO, Input/output error)" in f.message
