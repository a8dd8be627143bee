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
