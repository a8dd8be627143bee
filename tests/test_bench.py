"""Benchmarks: the payload on the real CPU torch, the arithmetic, and the judgement rules on the
figures measured on the recorded H100 node (fixtures/nodes/h100-kvm-1gpu/bench.txt)."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import threading
import time

import pytest

from conftest import NODES, torch_python
from rulekit import facts, fired
from hpcdoctor.payload import bench_probe

PAYLOAD = bench_probe.__file__


def recorded_h100_bench():
    """bench.txt of the recorded H100 in the payload's JSON shape (largest size per dtype)."""
    text = (NODES / "h100-kvm-1gpu" / "bench.txt").read_text()
    gemm = {}
    for n, dtype, tf in re.findall(r"^gemm n=(\d+) (\w+) ([\d.]+) TFLOP/s", text, re.M):
        if int(n) == 8192:
            gemm[dtype] = {"n": 8192, "tflops": float(tf)}
    d2d = float(re.search(r"^d2d ([\d.]+) GB/s", text, re.M).group(1))
    pinned = float(re.search(r"^h2d pinned=True ([\d.]+)", text, re.M).group(1))
    pageable = float(re.search(r"^h2d pinned=False ([\d.]+)", text, re.M).group(1))
    return {"gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "gemm": gemm,
                      "memory": {"d2d_gbs": d2d, "h2d_pinned_gbs": pinned, "h2d_pageable_gbs": pageable}}],
            "allreduce": {"not_applicable": "one device"}}


def h100_with_bench(bench=None):
    g = facts("h100-kvm-1gpu")
    g["facts"]["bench"] = bench or recorded_h100_bench()
    return g


def test_busbw_arithmetic():
    assert bench_probe.busbw(100.0, 2) == 100.0
    assert bench_probe.busbw(100.0, 8) == pytest.approx(175.0)
    assert bench_probe.allreduce_sizes(64 << 20) == [8 << 10, 64 << 10, 512 << 10, 4 << 20, 32 << 20, 64 << 20]


def test_healthy_h100_figures_pass_every_bench_rule():
    g = h100_with_bench()
    assert g["facts"]["bench"]["gpus"][0]["gemm"]["bf16"]["tflops"] == 729.7
    for sym in ("bench-gemm-low", "bench-memory-low", "bench-allreduce-low", "bench-gpu-straggler"):
        assert not fired(sym, g), sym


def test_gemm_low():
    b = recorded_h100_bench()
    b["gpus"][0]["gemm"]["bf16"]["tflops"] = 400.0
    (f,) = fired("bench-gemm-low", h100_with_bench(b))
    assert "bf16 GEMM n=8192: 400.0 TFLOP/s measured, 544 expected" in f.message
    assert "h100-sxm datasheet peak of 989" in f.message


def test_gemm_low_against_site_config():
    cfg = {"bench": {"min_gemm_bf16_tflops": 750}, "_path": "site.toml"}
    (f,) = fired("bench-gemm-low", h100_with_bench(), cfg)
    assert "750 expected (site config site.toml)" in f.message


def test_gemm_expectation_derived_for_unknown_gpu():
    g = h100_with_bench()
    g["facts"]["gpus"][0]["name"] = "NVIDIA H999 Engineering Sample"
    g["facts"]["bench"]["gpus"][0]["name"] = "NVIDIA H999 Engineering Sample"
    g["facts"]["bench"]["gpus"][0]["gemm"]["bf16"]["tflops"] = 300.0
    g["facts"]["torch"]["devices"] = [{"index": 0, "multi_processor_count": 132}]
    (f,) = fired("bench-gemm-low", g)
    assert "derived from 132 SMs x 1980 MHz" in f.message and "not in hpcdoctor's knowledge" in f.message


def test_memory_low():
    b = recorded_h100_bench()
    b["gpus"][0]["memory"]["d2d_gbs"] = 1500.0
    b["gpus"][0]["memory"]["h2d_pinned_gbs"] = 12.0
    found = fired("bench-memory-low", h100_with_bench(b))
    assert len(found) == 2 and "PCIe gen 5 x16" in found[1].message


def test_allreduce_low_and_ok():
    b = recorded_h100_bench()
    b["allreduce"] = {"backend": "nccl", "world_size": 8, "results": [
        {"bytes": 8192, "time_us": 30.0, "algbw_gbs": 0.27, "busbw_gbs": 0.48},
        {"bytes": 1 << 30, "time_us": 9000.0, "algbw_gbs": 119.3, "busbw_gbs": 208.8}]}
    (f,) = fired("bench-allreduce-low", h100_with_bench(b))
    assert "busbw 208.8 GB/s measured, 315 expected" in f.message
    b["allreduce"]["results"][-1]["busbw_gbs"] = 470.0
    assert not fired("bench-allreduce-low", h100_with_bench(b))


def test_straggler():
    b = recorded_h100_bench()
    for i, tf in enumerate((729.7, 731.0, 600.0, 728.0)):
        gpu = copy.deepcopy(b["gpus"][0])
        gpu["index"], gpu["gemm"]["bf16"]["tflops"] = i, tf
        b["gpus"] = b["gpus"][:i] + [gpu] if i else [gpu]
    (f,) = fired("bench-gpu-straggler", h100_with_bench(b))
    assert f.subject == "GPU 2" and "82%" in f.message


def test_tf32_advice_carries_the_measured_speedup():
    (f,) = fired("tf32-disabled", h100_with_bench())
    assert "7.4x faster here (52 -> 381 TFLOP/s measured)" in f.message


# --- the payload on the real CPU torch ---------------------------------------------------------------

@pytest.fixture(scope="module")
def py():
    return torch_python()


def _run(py, *args, timeout=120):
    res = subprocess.run([py, PAYLOAD, *args], capture_output=True, text=True, timeout=timeout)
    return json.loads(res.stdout), res.stderr


def test_payload_cpu_gemm_and_gloo_allreduce(py):
    out, err = _run(py, "--tier", "quick", "--budget", "60", "--cpu-n", "256", "--max-allreduce-bytes", str(1 << 20))
    assert out["device_kind"] == "cpu" and out["gpus"] == []
    cpu = out["cpu"]
    assert cpu["n"] == 256 and cpu["fp32"]["gflops"] > 0 and cpu["bf16"]["gflops"] > 0
    ar = out["allreduce"]
    assert ar["backend"] == "gloo" and ar["world_size"] == 2
    sizes = [r["bytes"] for r in ar["results"]]
    assert sizes[0] == 8 << 10 and sizes[-1] == 1 << 20
    for r in ar["results"]:
        assert r["busbw_gbs"] == pytest.approx(r["algbw_gbs"], rel=0.02)  # n=2: factor 1
        assert r["time_us"] > 0
    assert "hpcdoctor bench: CPU gemm" in err


def test_payload_stops_within_a_tiny_budget(py):
    t0 = time.monotonic()
    out, _ = _run(py, "--tier", "quick", "--budget", "0.5")
    assert time.monotonic() - t0 < 30
    assert "cpu" not in out and out["allreduce"] == {"stopped": "budget exhausted"}


def test_gpu_lock_serialises(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDOCTOR_LOCK_DIR", str(tmp_path))
    first = bench_probe.GpuLock("GPU-abc", wait=1)
    with pytest.raises(TimeoutError, match="another benchmark holds"):
        bench_probe.GpuLock("GPU-abc", wait=0.3)
    def later():
        time.sleep(0.4)
        first.release()

    threading.Thread(target=later).start()
    second = bench_probe.GpuLock("GPU-abc", wait=5)
    assert second.waited >= 0.3
    second.release()


def test_cli_bench_quick_on_cpu(py):
    from conftest import report_of

    doc = report_of("check", "--bench", "quick", "--python", py, timeout=180)
    bench = doc["facts"]["bench"]
    assert bench["cpu"]["fp32"]["gflops"] > 0 and bench["allreduce"]["world_size"] == 2
    assert doc["depth"] == "deep"
    assert doc["probes"]["bench"]["status"] == "ok"


def _derived(name, cc, sms, clk, dtype="bf16"):
    from hpcdoctor import expect

    return expect.gemm({"name": name, "compute_capability": cc, "clocks": {"sm_max_mhz": clk}}, dtype, {}, sms)


def test_geforce_card_is_not_held_to_data_centre_tensor_rates():
    """An RTX 4090 (128 SMs, 2520 MHz) has no datasheet entry; its bf16 GEMM with fp32 accumulation
    runs at half the professional Ada rate per SM and clock (NVIDIA's Ada and GA102 whitepapers),
    so the derived peak is half that of a workstation card with the same SMs and clock."""
    geforce, why = _derived("NVIDIA GeForce RTX 4090", "8.9", 128, 2520)
    pro, _ = _derived("NVIDIA RTX 6000 Ada Generation", "8.9", 128, 2520)
    assert geforce == pytest.approx(pro / 2) and "GeForce tensor rate" in why
    tf32, _ = _derived("NVIDIA GeForce RTX 3090", "8.6", 82, 1695, "tf32")
    assert tf32 == pytest.approx(_derived("NVIDIA RTX A6000", "8.6", 82, 1695, "tf32")[0] / 2)
    fp32, _ = _derived("NVIDIA GeForce RTX 4090", "8.9", 128, 2520, "fp32")
    assert fp32 == _derived("NVIDIA RTX 6000 Ada Generation", "8.9", 128, 2520, "fp32")[0]


def test_unknown_card_on_a_geforce_architecture_gets_the_lower_rate_and_says_so():
    low, why = _derived("NVIDIA Graphics Device", "8.9", 128, 2520)
    assert low == _derived("NVIDIA GeForce RTX 4090", "8.9", 128, 2520)[0] and "rate class unknown" in why
