"""disk-full and home-quota-exceeded read in Go's lower-case errno words (Apptainer/Singularity,
any Go tool), on real public pastes recorded in tests/fixtures/pastes (SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule


@pytest.mark.parametrize("paste,line,where", [
    ("ctat-mutations-93-node-tmp-full-sif-extraction.txt", 13, "/tmp/rootfs-392536996/archive-411898547"),
    ("singularity-3939-sif-extraction-tmp-full.txt", 10, "/tmp/archive-101709114"),
])
def test_apptainer_unpacking_into_a_full_tmp(paste, line, where):
    (f,) = fired("disk-full", recorded_paste_facts(paste))
    assert f.severity == "error" and f"line {line}" in f.message and where in f.message
    assert "no space left on device" in f.message
    assert "APPTAINER_TMPDIR=" in f.fix and "APPTAINER_CACHEDIR=" in f.fix


def test_a_pull_out_of_space_in_its_build_stage_is_the_tmpdir_rules():
    # a build stage (build-temp-*) under /tmp: apptainer-tmpdir-too-small answers the line, not disk-full
    g = recorded_paste_facts("staphb-1482-singularity-pull-tmp-full.txt")
    (f,) = fired("apptainer-tmpdir-too-small", g)
    assert "line 7" in f.message and "/tmp" in f.message and "APPTAINER_TMPDIR=" in f.fix
    findings, _ = run_rule("disk-full", g)
    assert findings == []


def test_a_go_tool_that_is_not_apptainer_gets_no_apptainer_fix():
    (f,) = fired("disk-full", recorded_paste_facts("dumprx-4-go-write-tmp-no-space.txt"))
    assert "/tmp/payload_144875771.bin" in f.message and "line 8" in f.message
    assert "APPTAINER_TMPDIR" not in f.fix and f.fix.startswith("df -h /tmp/payload_144875771.bin")


def test_go_edquot_is_a_quota_not_a_full_disk():
    g = recorded_paste_facts("graffite-37-sif-extraction-tmp-quota.txt")
    (f,) = fired("home-quota-exceeded", g)
    assert "/tmp/rootfs-1132018289/archive-4076445747" in f.message and "APPTAINER_TMPDIR=" in f.fix
    findings, _ = run_rule("disk-full", g)
    assert findings == []


@pytest.mark.parametrize("paste", ["singularity-4652-loop-device-race-healthy.txt", "podman-8521-overlay-over-nfs-graphroot.txt"])
def test_container_pastes_with_room_are_not_full(paste):
    findings, _ = run_rule("disk-full", recorded_paste_facts(paste))
    assert findings == []
