"""What one lease of an H100 node (2026-11-26, Firecracker VM, driver 580.159.04, torch
2.11.0+cu130) recorded, replayed: a snapshot with the full benchmarks and NVML's conditions during
each figure, one while another process held 21 GiB and multiplied on the same GPU, the acceptance
run's raw documents, and every CUDA error string the node's libcudart and libcuda print."""

from __future__ import annotations

import json

import pytest

from conftest import NODES, report_of
from leasekit import LEASES, acceptance, bench_of, catalogue_disagreements
from rulekit import facts, fired

IDLE, BUSY = NODES / "h100-fc-1gpu-bench", NODES / "h100-fc-1gpu-busy"
LEASE = LEASES / "h100-fc-2026-11-26"


def test_a_healthy_power_capped_h100_is_not_called_slow():
    doc = report_of("check", "--from", str(IDLE), "--fail-on", "never")
    codes = [f["code"] for f in doc["findings"]]
    assert "BEN001" not in codes and "BEN002" not in codes, codes
    during = doc["facts"]["bench"]["gpus"][0]["during"]
    # Every GPU figure was watched, and the card sat at its software power cap while it was.
    assert set(during) == {"gemm.fp32", "gemm.tf32", "gemm.bf16", "gemm.fp16", "gemm.fp8", "memory"}
    assert all(c["samples"] >= 1 and c["sm_max_mhz"] == 1980 and c["power_limit_w"] == 700.0 for c in during.values())
    assert during["gemm.fp32"]["clock_event_reasons"].get("sw_power_cap", 0) > 0
    assert all(c["other_processes"] == [] for c in during.values())
    # A one-GPU node's live run reads no topology, so its replay must not call it unknown.
    assert "nvidia.topology" not in doc["unknown"], doc["unknown"]
    assert doc["unknown"]["amd.topology"] == "rocm-smi is not installed"


def test_a_shared_gpu_figure_is_called_a_share_not_a_slow_card():
    doc = report_of("check", "--from", str(BUSY), "--fail-on", "never")
    bench = [f for f in doc["findings"] if f["code"] in ("BEN001", "BEN002")]
    assert len(bench) == 6  # five GEMM dtypes and the device copy, each about half the card's figure
    for f in bench:
        assert f["severity"] == "info", f
        assert "1 other process(es) used this GPU (pid 648, 21162 MiB)" in f["message"]
        assert "drain" not in f["fix"] and "dcgmi" not in f["fix"]
    in_use = [f for f in doc["findings"] if f["code"] == "GPU011"]
    assert in_use and in_use[0]["severity"] == "warning" and "pid 648" in in_use[0]["message"]
    # The benchmark's own process was told from the other one while it lived.
    during = doc["facts"]["bench"]["gpus"][0]["during"]
    assert all(c["unattributed_pids"] == [] for c in during.values())


def test_a_card_that_slowed_itself_is_called_slow_with_its_reasons():
    g = facts("h100-fc-1gpu-bench")
    entry = g["facts"]["bench"]["gpus"][0]
    entry["gemm"]["bf16"]["tflops"] = 390.0
    entry["during"]["gemm.bf16"].update(clock_event_reasons={"hw_thermal_slowdown": 0.9, "sw_power_cap": 0.1},
                                        sm_mhz={"min": 705, "median": 810, "max": 1980})
    hits = [h for h in fired("bench-gemm-low", g) if h.evidence.get("dtype") == "bf16"]
    assert len(hits) == 1 and hits[0].severity == "warning"
    assert "hw_thermal_slowdown 90%" in hits[0].message and "SM clock 705-1980 MHz of 1980" in hits[0].message
    assert "dcgmi diag" in hits[0].fix and "cooling" in hits[0].fix
    assert not fired("bench-gemm-low", facts("h100-fc-1gpu-bench"))


def test_acceptance_rows_on_the_lease_documents():
    acc = acceptance()
    check = json.loads((LEASE / "check.json").read_text())
    rows = acc.compare_gpu_facts(check, (LEASE / "nvsmi_qx.xml").read_text(), ["9.0"], {})
    assert len(rows) > 15 and not [r for r in rows if "FAIL" in r[4]], rows
    verdicts = {}
    for tier in ("quick", "full"):
        ref = json.loads((LEASE / f"reference-{tier}.json").read_text())
        verdicts.update({r[1]: r[4] for r in acc.compare_bench(bench_of(LEASE, f"bench-{tier}.json"), ref, (9, 0), tier)})
    failed = sorted(k for k, v in verdicts.items() if "FAIL" in v)
    # The one real disagreement of that run: pageable host-to-device copies, whose spread on
    # that VM is wider than either method (spread.txt: 4.1-7.4 GB/s over 40 single copies).
    assert failed == ["full h2d_pageable_gbs"], verdicts
    assert verdicts["quick h2d_pinned_gbs"] == "skipped, reason stated"
    assert all(v.endswith("ok") for k, v in verdicts.items() if "gemm" in k), verdicts


def test_acceptance_fails_a_figure_outside_the_references_own_spread():
    acc = acceptance()
    bench = bench_of(LEASE, "bench-full.json")
    ref = json.loads((LEASE / "reference-full.json").read_text())
    bench["gpus"][0]["gemm"]["bf16"]["tflops"] *= 0.9  # 685 against reference runs of 775-779
    rows = {r[1]: r[4] for r in acc.compare_bench(bench, ref, (9, 0), "full")}
    assert rows["full gemm bf16 n=4096"].endswith("FAIL")


@pytest.mark.parametrize("side,family", [("runtime", "cuda"), ("driver", "cuda_driver")])
def test_cuda_catalogues_say_what_the_live_libraries_print(side, family):
    assert catalogue_disagreements(LEASE, side, family) == []


def test_the_quick_tier_times_every_host_copy_on_a_fast_gpu():
    # Recorded after the payload filled its host buffer instead of randomising 512 MiB, which
    # had spent the memory step's share (bench-quick.json, recorded before, skipped them all).
    before = bench_of(LEASE, "bench-quick.json")["gpus"][0]["memory"]
    assert all(isinstance(before[k], dict) and "skipped" in before[k] for k in ("h2d_pinned_gbs", "d2h_pinned_gbs"))
    for name in ("quick1.json", "quick2.json"):
        memory = bench_of(LEASE, name)["gpus"][0]["memory"]
        for key in ("d2d_gbs", "h2d_pinned_gbs", "d2h_pinned_gbs", "h2d_pageable_gbs", "d2h_pageable_gbs"):
            assert isinstance(memory[key], float), (name, key, memory[key])
        assert memory["h2d_pinned_gbs"] > 50  # PCIe gen 5 x16, as the acceptance's full tier measured


def test_the_summary_line_says_what_the_gpu_was_doing_while_measured():
    from hpcdoctor.report.summary import bench_lines

    idle = dict(bench_lines(report_of("check", "--from", str(IDLE), "--fail-on", "never")["facts"]["bench"]))
    busy = dict(bench_lines(report_of("check", "--from", str(BUSY), "--fail-on", "never")["facts"]["bench"]))
    assert "SM 1065-1980 MHz of 1980, sw_power_cap" in idle["Bench 0"] and "shared" not in idle["Bench 0"]
    assert busy["Bench 0"].endswith("· shared with 1 other process(es)")


def test_a_snapshot_with_odd_conditions_still_gives_its_summary_line():
    from hpcdoctor.report.summary import bench_lines

    for during in ({"gemm.bf16": {"samples": 3}}, {"gemm.bf16": {"samples": 2, "sm_mhz": "fast"}},
                   {"gemm.bf16": {"samples": 1, "sm_mhz": {"min": 900, "max": 1980}, "other_processes": [7, None],
                                  "clock_event_reasons": ["x"]}}, {"memory": None}, []):
        line = dict(bench_lines({"gpus": [{"index": 0, "gemm": {"bf16": {"tflops": 700.0}}, "during": during}]}))
        assert line["Bench 0"].startswith("GEMM TFLOP/s bf16 700"), line
