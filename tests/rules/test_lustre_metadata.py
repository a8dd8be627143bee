"""lustre-mdt-directory-full on set Q's mdtest paste (a warning from ENOSPC on a /lustre path) and on the
kernel's own "Directory index full!" (an error), through the real catalogue and paste path."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_enospc_creating_on_lustre_names_the_mdt_check():
    (f,) = fired("lustre-mdt-directory-full", recorded_paste_facts("io-500-dev-63-mdt-directory-entries-exhausted.txt"))
    assert f.severity == "warning" and "/lustre/stor1/" in f.message and "inodes" in f.message
    assert f.fix.startswith("lfs df -i /lustre") and "lfs df -h" in f.fix


def test_the_kernels_index_full_line_is_an_error():
    (f,) = fired("lustre-mdt-directory-full", recorded_paste_facts("moosefs-65-ext4-directory-index-full.txt"))
    assert f.severity == "error" and "Directory index full!" in f.message
    assert "tune2fs -O large_dir /dev/sdb" in f.fix


def test_enospc_off_lustre_without_the_kernels_line_is_not_this_rule():
    # Apptainer's tmpfs /tmp: ENOSPC, no Lustre path, no kernel line
    assert not fired("lustre-mdt-directory-full", recorded_paste_facts("apptainer-1380-tmp-is-tmpfs-build-out-of-space.txt"))


def test_disk_full_names_the_lustre_check_on_a_lustre_path():
    (f,) = fired("disk-full", recorded_paste_facts("io-500-dev-63-mdt-directory-entries-exhausted.txt"))
    assert "lfs df -i /lustre" in f.fix
