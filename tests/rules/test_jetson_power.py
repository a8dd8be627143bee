"""jetson-power-mode-capped (rules/jetson_power.py) on public pastes of Jetsons slower than published
(tests/fixtures/pastes, SOURCES.md there), on nvpmodel -q's report as jetson_stats parses it, and
silent on real pastes naming a Jetson, or slowness, alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts, told_facts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NUMPY_18175 = FIXTURES / "tickets_blind_g" / "numpy-18175-illegal-instruction-jetson-numpy-1-19-5-bug-healthy.txt"
LARQ_591 = FIXTURES / "tickets_blind_j" / "larq-compute-engine-591-x86-reference-kernels-slow-healthy.txt"



@pytest.mark.parametrize("paste, words", [
    ("jetson-containers-617-agx-orin-30w-power-mode-slow.txt", "0.9 FPS only"),
    ("yolo-tensorrt-164-xavier-nx-power-mode-slow.txt", "inference speed is slow"),
])
def test_a_jetson_slower_than_published_is_the_usual_cause_to_confirm(paste, words):
    (f,) = fired("jetson-power-mode-capped", recorded_paste_facts(paste))
    assert f.severity == "info" and words in f.message and "power mode below MAXN" in f.message
    assert f.fix.startswith("sudo nvpmodel -q") and "sudo jetson_clocks" in f.fix


def test_nvpmodel_reporting_a_capped_mode_is_a_warning_and_maxn_is_silent():
    # nvpmodel -q: "NV Power Mode: <NAME>", the mode's ID on the next line (jetson_stats' REGPM)
    (f,) = fired("jetson-power-mode-capped", told_facts("NV Power Mode: MODE_30W\n2\n"))
    assert f.severity == "warning" and "power mode MODE_30W, not MAXN" in f.message
    assert not fired("jetson-power-mode-capped", told_facts("NV Power Mode: MAXN\n0\n"))
    # MAXN reported beside the user's words: the mode is not the cause
    assert not fired("jetson-power-mode-capped", told_facts("Jetson AGX Orin\nNV Power Mode: MAXN\n0\ninference speed is slow\n"))


def test_silent_on_a_jetson_alone_on_slowness_alone_and_on_a_live_node(tmp_path):
    assert not fired("jetson-power-mode-capped", paste_facts(tmp_path, NUMPY_18175.read_text()))
    assert not fired("jetson-power-mode-capped", told_facts(LARQ_591.read_text()))
    assert not fired("jetson-power-mode-capped", facts("h100-kvm-1gpu"))


def test_nvpmodels_recorded_report_pasted_is_read():
    (f,) = fired("jetson-power-mode-capped", recorded_paste_facts("jetson-agx-orin-nvpmodel-q-mode-40w.txt"))
    assert f.severity == "warning" and "power mode MODE_40W, not MAXN" in f.message


def test_a_hedged_slowness_is_not_a_report():
    assert not fired("jetson-power-mode-capped", told_facts("On my Jetson Orin, maybe it is slower than expected?\n"))
    assert fired("jetson-power-mode-capped", told_facts("On my Jetson Orin it is slower than expected.\n"))
