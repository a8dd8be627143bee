"""What a lease of an H200 node (2026-11-26, Firecracker VM, 16 vCPUs, driver 580.159.04, torch
2.11.0+cu130) recorded with bench/gpu_record.sh, replayed: a redacted snapshot with the full
benchmarks, the acceptance run's raw documents, and two quick snapshots taken with the CPU-load
sample, one idle and one while another process held 21 GiB of the GPU and spun a CPU polling it."""

from __future__ import annotations

import json

import pytest

from conftest import NODES, report_of
from leasekit import LEASES, acceptance, bench_of, catalogue_disagreements
from rulekit import cpuinfo_facts, facts, fired, set_path
from hpcdoctor.report.summary import bench_lines

FULL = NODES / "h200-fc-1gpu-bench"
IDLE, BUSY = NODES / "h200-fc-1gpu-quick-idle", NODES / "h200-fc-1gpu-quick-busy"
LEASE = LEASES / "h200-fc-2026-11-26"


def test_facts_agree_with_nvidia_smi_on_the_h200():
    acc = acceptance()
    check = json.loads((LEASE / "check.json").read_text())
    rows = acc.compare_gpu_facts(check, (LEASE / "nvsmi_qx.xml").read_text(), ["9.0"], {})
    assert len(rows) > 15 and not [r for r in rows if "FAIL" in r[4]], rows
    said = {r[1]: r for r in rows}
    assert any("H200" in str(r) for r in said.values()), rows


def test_acceptance_on_the_h200_fails_only_pageable_uploads():
    acc = acceptance()
    verdicts = {}
    for tier in ("quick", "full"):
        ref = json.loads((LEASE / f"reference-{tier}.json").read_text())
        verdicts.update({r[1]: r[4] for r in acc.compare_bench(bench_of(LEASE, f"bench-{tier}.json"), ref, (9, 0), tier)})
    failed = sorted(k for k, v in verdicts.items() if "FAIL" in v)
    # As on the H100 that morning: pageable host-to-device copies do not repeat to 5% on these VMs
    # (8.8 GB/s against reference runs of 8.03-8.22); everything the bench judges agrees.
    assert failed == ["full h2d_pageable_gbs"], verdicts
    assert all(v.endswith("ok") for k, v in verdicts.items() if "gemm" in k or "pinned" in k), verdicts


@pytest.mark.parametrize("side,family", [("runtime", "cuda"), ("driver", "cuda_driver")])
def test_cuda_catalogues_say_what_the_h200_nodes_libraries_print(side, family):
    assert catalogue_disagreements(LEASE, side, family) == []


def test_a_healthy_h200_is_judged_against_its_own_datasheet_and_not_called_slow():
    doc = report_of("check", "--from", str(FULL), "--fail-on", "never")
    codes = [f["code"] for f in doc["findings"]]
    assert "BEN001" not in codes and "BEN002" not in codes, codes
    gpu = doc["facts"]["gpus"][0]
    assert gpu["name"] == "NVIDIA H200" and gpu["memory_total_mib"] == 143771, gpu
    # Shared, the same card is judged as a share against the H200's figures, not the H100's.
    shared = [f for f in report_of("check", "--from", str(BUSY), "--fail-on", "never")["findings"]
              if f["code"] in ("BEN001", "BEN002")]
    assert shared and all(f["severity"] == "info" and "h200" in f["message"] and "a share" in f["message"]
                          for f in shared), shared


def test_cpu_figures_taken_beside_another_process_are_called_a_share():
    idle = report_of("check", "--from", str(IDLE), "--fail-on", "never")["facts"]["bench"]
    busy = report_of("check", "--from", str(BUSY), "--fail-on", "never")["facts"]["bench"]
    # One Python process polling the GPU held one of the 16 CPUs, and every CPU GEMM (16 threads,
    # split evenly) ran at the pace of the thread that shared it: 268 GFLOP/s for every dtype.
    assert busy["cpu"]["other_load"]["other_busy_cpus"] >= 0.9
    assert idle["cpu"]["other_load"]["other_busy_cpus"] < 0.5
    assert max(busy["cpu"][k]["gflops"] for k in ("fp32", "bf16")) < idle["cpu"]["fp32"]["gflops"] / 3
    idle_line = [t for k, t in bench_lines(idle) if t.startswith("CPU GEMM")][0]
    busy_line = [t for k, t in bench_lines(busy) if t.startswith("CPU GEMM")][0]
    assert "share" not in idle_line, idle_line
    assert busy_line.endswith("other work held 1 of its 16 CPUs: figures of a share, not of the CPU"), busy_line


@pytest.mark.parametrize("cpu", ["linux-unknown-sapphirerapids", "linux-rocky8.5-zen4"])
def test_fast_math_advice_is_not_silenced_by_figures_of_a_share(cpu, tmp_path):
    cpu_bench = report_of("check", "--from", str(BUSY), "--fail-on", "never")["facts"]["bench"]["cpu"]
    g = cpuinfo_facts(cpu, tmp_path)
    set_path(g["facts"], "env.vars", {})
    set_path(g["facts"], "bench", {"cpu": cpu_bench, "gpus": []})
    (hit,) = fired("cpu-bf16-fpmath", g)  # fast math 268 against fp32 268 says nothing of the ISA
    assert "up to 2x" in hit.message
    del cpu_bench["other_load"]
    set_path(g["facts"], "bench", {"cpu": cpu_bench, "gpus": []})
    assert not fired("cpu-bf16-fpmath", g)  # the same figures, unshared, do say fast math gains nothing


def test_a_few_per_cent_is_not_emulated_bf16(tmp_path):
    # The H100 node's shared CPU figures (bf16 268.4 against fp32 269.2 GFLOP/s) on a CPU without
    # native bf16 and without the load sample, as a snapshot of an older version would hold them.
    cpu_bench = facts("h100-fc-1gpu-busy")["facts"]["bench"]["cpu"]
    assert cpu_bench["bf16"]["gflops"] < cpu_bench["fp32"]["gflops"] and "other_load" not in cpu_bench
    g = cpuinfo_facts("linux-ubuntu20.04-zen3", tmp_path)
    set_path(g["facts"], "bench", {"cpu": cpu_bench, "gpus": []})
    assert not fired("cpu-bf16-emulated", g)


def test_the_loopback_fix_names_an_interface_this_node_has():
    (hit,) = fired("hostname-resolves-to-loopback", facts("h200-fc-1gpu-bench"))
    assert "export GLOO_SOCKET_IFNAME=eth0 NCCL_SOCKET_IFNAME=eth0" in hit.fix and "ib0" not in hit.fix, hit.fix
