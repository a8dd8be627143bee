"""container-image-fs-unsupported on public pastes (tests/fixtures/pastes, SOURCES.md there) and on
Apptainer's and containers/storage's own format strings."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_facts



def test_podmans_store_on_nfs():
    (f,) = fired("container-image-fs-unsupported", recorded_paste_facts("podman-8521-overlay-over-nfs-graphroot.txt"))
    assert f.severity == "error" and "(graphroot /storage/sami/overlay) is on nfs" in f.message
    assert 'graphroot = "/tmp/%s/containers"' in f.fix and f.fix.index("podman system reset") < f.fix.index("graphroot =")


def test_a_squashfs_the_kernel_will_not_mount_is_a_warning_naming_three_causes():
    (f,) = fired("container-image-fs-unsupported", recorded_paste_facts("cytomine-1196-squashfs-mount-invalid-argument.txt"))
    assert f.severity == "warning" and "cannot back a loop mount" in f.message and "compression" in f.message
    assert "stat -f -c %T IMAGE.sif" in f.fix and "cp IMAGE.sif ${TMPDIR:-/tmp}/" in f.fix


def test_apptainers_overlay_on_a_parallel_file_system():
    text = ("FATAL:   container creation failed: /lustre/u/overlay/upper is located on a LUSTRE filesystem incompatible "
            "as overlay upper directory\n")
    (f,) = fired("container-image-fs-unsupported", told_facts(text))
    assert f.severity == "error" and "is on LUSTRE" in f.message and "apptainer overlay create --size 1024" in f.fix


def test_silent_on_the_loop_device_race_and_other_container_failures():
    assert not fired("container-image-fs-unsupported", recorded_paste_facts("singularity-4652-loop-device-race-healthy.txt"))
    assert not fired("container-image-fs-unsupported", recorded_paste_facts("singularity-2700-bind-source-missing.txt"))


@pytest.mark.parametrize("paste, words", [
    ("apptainer-1380-tmp-is-tmpfs-build-out-of-space.txt", "temporary directory /tmp is full"),
    ("singularity-6500-mksquashfs-no-space.txt", "packed under its temporary directory"),
])
def test_a_build_out_of_space_names_the_temporary_directory(paste, words):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("apptainer-tmpdir-too-small", gathered)
    assert f.severity == "error" and words in f.message
    assert "APPTAINER_TMPDIR=" in f.fix and "SINGULARITY_TMPDIR=" in f.fix
    findings, _skipped = run_rule("disk-full", gathered)
    assert findings == []   # one finding for the line: this rule's


def test_enospc_outside_apptainer_is_not_this_rule():
    assert not fired("apptainer-tmpdir-too-small", recorded_paste_facts("io-500-dev-63-mdt-directory-entries-exhausted.txt"))


# -- container-overlay-in-use (ENV139): knowledge/messages/apptainer_overlay.toml ----------------
def test_a_read_only_overlay_refused_because_a_writer_holds_it():
    (f,) = fired("container-overlay-in-use", recorded_paste_facts("singularity-6196-overlay-locked-by-another-process.txt"))
    img = "/scratch/nv2099/images/overlay-50G-10M.ext3"
    assert f.severity == "error" and f"overlay image {img} is held writable by another process" in f.message
    assert f"fuser -v {img}; lsof {img}" in f.fix and "ps -u $USER -f | grep -E" in f.fix and "fuse2fs" in f.fix
    assert f"singularity exec --overlay {img}:ro IMAGE.sif" in f.fix and f"e2fsck -f {img}" in f.fix
    assert f.fix.index("fuser") < f.fix.index("e2fsck")


@pytest.mark.parametrize("paste, img", [
    ("singularity-1868-overlay-in-use-for-writing.txt", "/panfs/accrepfs.vampire/nobackup/cgg/chenr6/sif_new/SCENIC.img"),
    ("singularity-5577-mpirun-writable-overlay-in-use.txt", "/path/to/overlay/overlay.img"),
])
def test_a_writable_overlay_refused_while_another_process_has_it(paste, img):
    (f,) = fired("container-overlay-in-use", recorded_paste_facts(paste))
    assert f"overlay image {img} was asked for writable while another process has it open" in f.message
    assert f"--overlay {img}:ro" in f.fix and "squeue -u $USER" in f.fix


def test_apptainers_own_wording_and_the_same_process_twice():
    text = ("FATAL:   while loading overlay images: failed to open overlay image /home/u/o.img: while locking ext3 partition "
            "from /home/u/o.img: can't open /home/u/o.img for writing, currently in use by another process\n")
    (f,) = fired("container-overlay-in-use", told_facts(text))
    assert "apptainer exec --overlay /home/u/o.img:ro" in f.fix
    twice = text.replace("currently in use by another process", "already used for writing by this process")
    assert not fired("container-overlay-in-use", told_facts(twice))


def test_silent_on_other_overlay_failures():
    assert not fired("container-overlay-in-use", told_facts(
        "FATAL:   container creation failed: /home/user/overlay/upper is located on a NFS filesystem incompatible as overlay upper directory\n"))
    assert not fired("container-overlay-in-use", recorded_paste_facts("singularity-2700-bind-source-missing.txt"))


def test_a_sandbox_on_a_parallel_file_system_dropping_the_overlay_is_a_warning():
    (f,) = fired("container-image-fs-unsupported", told_facts(
        "WARNING: overlay image(s) not loaded due to sandbox filesystem incompatibility with overlay\n"))
    assert f.severity == "warning" and "fell back to underlay" in f.message and "stat -f -c %T SANDBOX_DIR" in f.fix
