"""driver-predates-gpu: a driver older than the first toolkit of the GPU's generation, on real pastes
(knowledge/cuda.toml [arch_first_toolkit]: clang's MinVersionForOffloadArch and NVIDIA's Blackwell
Compatibility Guide; the toolkit drivers from NVIDIA's release-notes table)."""

from __future__ import annotations

from conftest import report_of
from rulekit import PASTES, facts, fired, run_rule

RTX5090D = PASTES / "pytorch-150733-rtx5090d-cu126.txt"   # RTX 5090 D (12.0), driver 570.124.04


def _with_driver(tmp_path, driver):
    p = tmp_path / "paste.txt"
    p.write_text(RTX5090D.read_text().replace("Nvidia driver version: 570.124.04", f"Nvidia driver version: {driver}"))
    return report_of("check", "--from", str(p))


def test_rtx5090_on_driver_535_is_told_the_driver_predates_it(tmp_path):
    # The case: CUDA 12.8 is the first toolkit for Blackwell, its driver >= 570.26.
    doc = _with_driver(tmp_path, "535.104.05")
    (f,) = [x for x in doc["findings"] if x["symbol"] == "driver-predates-gpu"]
    assert f["severity"] == "error" and "RTX 5090 D" in f["message"] and "535.104.05" in f["message"]
    assert ">= 570.26" in f["fix"] and "R570" in f["fix"] and f["subject"] == "GPU 0"


def test_the_paste_as_recorded_is_new_enough(tmp_path):
    doc = report_of("check", "--from", str(RTX5090D))
    assert not [x for x in doc["findings"] if x["symbol"] == "driver-predates-gpu"]
    assert not [s for s in doc["skipped"] if s["symbol"] == "driver-predates-gpu"]
    # 570.26 itself is the 12.8 GA driver: new enough.
    assert not [x for x in _with_driver(tmp_path, "570.26")["findings"] if x["symbol"] == "driver-predates-gpu"]


def test_hopper_below_cuda118s_driver_is_not_judged_and_the_recorded_h100_passes():
    # No source says whether a driver before CUDA 11.8's (520.61.05) ran an H100: not judged below it.
    found, skipped = run_rule("driver-predates-gpu", facts("h100-kvm-1gpu", **{"nvidia.driver_version": "515.65.01"}))
    assert not found and "520.61.05" in skipped[0]["reason"] and "11.8" in skipped[0]["reason"], skipped
    # The recorded H100 node (driver 580.159.04) is judged and passes.
    assert run_rule("driver-predates-gpu", facts("h100-kvm-1gpu")) == ([], [])


def test_a100_on_a_cuda10_driver(tmp_path):
    # Ampere's first toolkit is CUDA 11.0 (clang: SM_80 CUDA_110), whose driver is 450.51.05.
    g = facts("h100-kvm-1gpu", **{"nvidia.driver_version": "440.64.00"})
    for gpu in g["facts"]["gpus"]:
        gpu.update(name="NVIDIA A100-SXM4-40GB", compute_capability="8.0", driver_version="440.64.00")
    (f,) = fired("driver-predates-gpu", g)
    assert "450.51.05" in f.fix and "CUDA 11.0" in f.message


def test_a100_on_a_cuda12_driver_is_silent():
    g = facts("h100-kvm-1gpu", **{"nvidia.driver_version": "535.104.05"})
    for gpu in g["facts"]["gpus"]:
        gpu.update(name="NVIDIA A100-SXM4-40GB", compute_capability="8.0", driver_version="535.104.05")
    assert not fired("driver-predates-gpu", g)
