"""What a file system does not support (rules/fs_support.py, SYS042-SYS045) and SQLite's disk I/O
error (SYS013), on set S's pastes and on other public threads' (tests/fixtures/pastes/SOURCES.md),
with near misses that must stay silent."""

from __future__ import annotations

import pytest

from rulekit import PASTES, facts, fired, recorded_paste_facts, run_rule, told_facts

S = "../tickets_blind_s/"


@pytest.mark.parametrize("paste, name, fileid, where", [
    (S + "snippy-88-nfs-silly-rename-file-still-open.txt", ".nfs00000009a20b002b00005433", "41373335595",
     "reference"),   # Perl File::Path
    (S + "sheffield-hpc-362-nfs-files-held-open-by-running-process.txt", ".nfs00000000000cb22e0000166a", "832046",
     "./spark-2.0.0/build/zinc-0.3.9/lib"),  # rm
    ("modelscope-104-shutil-rmtree-nfs-silly-rename.txt", ".nfs00000000160c011a00063458", "369885466",
     "."),  # shutil.rmtree, the bare name: the directory it ran in
])
def test_a_silly_renamed_nfs_file_names_the_open_file(paste, name, fileid, where):
    (f,) = fired("nfs-files-held-open-busy", recorded_paste_facts(paste))
    assert f.severity == "warning" and name in f.message and f"file id {fileid}" in f.message
    assert f.fix.startswith(f"DIR={where}   #") and 'lsof +D "$DIR"' in f.fix and 'fuser -v "$DIR"/.nfs*' in f.fix


def test_busy_without_a_silly_renamed_name_is_not_this():
    # rmdir's EBUSY on an NFS server's export: no .nfs file, another cause
    assert not fired("nfs-files-held-open-busy", recorded_paste_facts("manta-nfs-20-rmdir-busy-no-silly-rename.txt"))


@pytest.mark.parametrize("paste, size", [
    (S + "pmbootstrap-9-ecryptfs-filename-length-limit.txt", 144),   # Python's [Errno 36] with the quoted path
    ("etsource-1210-ecryptfs-home-file-names-too-long.txt", 144),    # "<path>: File name too long" lines
])
def test_a_name_between_143_and_255_bytes_marks_a_lower_limit(paste, size):
    (f,) = fired("fs-filename-length-limited", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"a file name of {size} bytes" in f.message and "eCryptfs" in f.message
    assert f.fix.startswith("DIR=") and "stat -f -c '%l' \"$DIR\"" in f.fix


def test_the_users_words_about_ecryptfs_are_a_hint():
    (f,) = fired("fs-filename-length-limited", recorded_paste_facts(S + "gocryptfs-183-ecryptfs-home-filename-limit.txt"))
    assert f.severity == "info" and "143" in f.message


def test_a_cut_name_is_never_judged_a_lower_limit():
    # recorded here: Python 3.11 opening a 300-byte name; the symptom's text stops inside the name
    (f,) = fired("fs-filename-length-limited", recorded_paste_facts("python-3.11-enametoolong-300-byte-name.txt"))
    assert f.severity == "info" and "cut inside the name" in f.message


def test_coreutils_mkfifo_refused_is_an_error():
    (f,) = fired("fs-fifo-unsupported", recorded_paste_facts("mkfifo-coreutils-9.1-sysfs-no-mknod.txt"))
    assert f.severity == "error" and "'/sys/s1fifo'" in f.message and "Operation not permitted" in f.message


@pytest.mark.parametrize("paste, severity, quoted", [
    (S + "star-1855-nas-mount-no-fifo-support.txt", "warning", "could not create FIFO file"),
    ("star-1776-wsl-ntfs-could-not-create-fifo.txt", "warning", "/mnt/c/Users/gilbe/output/tpm/tmp.fifo.read1"),
    (S + "snakepipes-537-cifs-share-no-fifo-support.txt", "info", "CIFS doesn't allow FIFOs"),
])
def test_star_and_the_users_words(paste, severity, quoted):
    (f,) = fired("fs-fifo-unsupported", recorded_paste_facts(paste))
    assert f.severity == severity and quoted in f.message and "--outTmpDir" in f.fix


def test_a_question_whether_a_file_system_supports_fifos_is_silent():
    # glusterfs-383 asks whether a mount supports FIFOs: a question, no refusal and no statement
    text = (PASTES / "glusterfs-383-fifo-support-question.txt").read_text()
    assert not fired("fs-fifo-unsupported", told_facts(text))


@pytest.mark.parametrize("paste, path", [
    (S + "py-lmdb-100-cray-dvs-no-writable-mmap.txt", "'trainingData'"),
    ("py-lmdb-228-slurm-cluster-function-not-implemented.txt", "'./data_L/lmdb/Set5'"),
])
def test_lmdb_open_refused_by_the_file_system(paste, path):
    (f,) = fired("fs-shared-mmap-unsupported", recorded_paste_facts(paste))
    assert f.severity == "warning" and path in f.message and "ENOSYS" in f.message and "DVS" in f.message


def test_xattrs_refused_on_nfs_are_no_mmap_and_no_lock_matter():
    # set S's healthy control: exa's "<Operation not supported (os error 95)>" for every file's xattrs
    facts = recorded_paste_facts(S + "exa-259-nfs-home-no-xattr-support-healthy.txt")
    for sym in ("fs-shared-mmap-unsupported", "fs-file-locking-unsupported", "fs-fifo-unsupported",
                "fs-filename-length-limited", "nfs-files-held-open-busy"):
        assert fired(sym, facts) == []


@pytest.mark.parametrize("paste, severity", [
    (S + "dicompixelanon-17-sqlite-on-nfs-mount-eio.txt", "warning"),   # "this is on a NFS filesystem"
    ("sdcflows-267-sqlite-disk-io-error-nfs4.txt", "warning"),          # "on an NFS v4 file system"
    (S + "atram-216-sqlite-db-on-cluster-home-disk-io-error.txt", "info"),   # a cluster home, nothing more said
])
def test_sqlite_disk_io_error(paste, severity):
    (f,) = fired("fs-file-locking-unsupported", recorded_paste_facts(paste))
    assert f.severity == severity and "disk I/O error" in f.message and "SQLITE_IOERR" in f.message


def test_no_noexec_claim_without_its_evidence():
    # cctools-2229: a worker's connection refused; the thread found /tmp noexec, the paste does not show it
    findings, _ = run_rule("tmp-noexec", recorded_paste_facts(S + "cctools-2229-tmp-mounted-noexec.txt"))
    assert findings == []


def test_a_write_dir_whose_names_stop_at_143_bytes_is_advice():
    # 143: `getconf NAME_MAX ./` in an eCryptfs home, as a user recorded it in nextcloud/desktop#467
    # (and the kernel's fs/ecryptfs/crypto.c ENC_NAME_MAX_BLOCKLEN_8_OR_16)
    fs = [{"roles": ["HOME", "TMPDIR"], "paths": ["/home/u", "/tmp"], "mount_probe": "/home/u", "fstype": "ecryptfs",
           "name_max": 143}]
    (f,) = fired("fs-filename-length-limited", facts("h100-fc-1gpu-busy", **{"limits.filesystems": fs}))
    assert f.severity == "advice" and "at most 143 bytes" in f.message and f.fix.startswith("DIR=/home/u   #") and "on this node" in f.fix


def test_the_recorded_nodes_and_this_machine_take_255_byte_names():
    # a recording made before name_max was read, and this machine's own statvfs, read by the limits check
    assert not fired("fs-filename-length-limited", facts("h100-fc-1gpu-busy"))
    from hpcdoctor.checks.limits import statvfs_dirs
    import os
    measured = [fs for fs in statvfs_dirs([("TMPDIR", "/tmp")]) if "name_max" in fs]
    assert measured and measured[0]["name_max"] == os.statvfs("/tmp").f_namemax


def test_strace_of_a_shared_mapping_refused_is_an_error():
    (f,) = fired("fs-shared-mmap-unsupported", recorded_paste_facts("strace-6.1-mmap-shared-sysfs-enodev.txt"))
    assert f.severity == "error" and "ENODEV" in f.message and "MAP_SHARED" in f.message


def test_private_mappings_that_succeed_are_silent():
    text = (PASTES / "strace-6.1-mmap-private-python-startup.txt").read_text()
    assert not fired("fs-shared-mmap-unsupported", told_facts(text))
