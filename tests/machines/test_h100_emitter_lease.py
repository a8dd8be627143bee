"""The lease of 2026-11-27 (an H100, Firecracker VM, driver 580.159.04, torch 2.11.0+cu130), recorded
by bench/gpu_lease_emitters.sh: a redacted quick snapshot at the code of the day, and the live
`check` before and after bench/gpu_emitters.py made programs fault on the GPU."""

from __future__ import annotations

import json

from conftest import FIXTURES, NODES, report_of

SNAPSHOT = NODES / "h100-fc-1gpu-quick-2026-11-27"
LEASE = FIXTURES / "gpu_acceptance" / "h100-fc-2026-11-27"


def test_the_days_snapshot_replays_as_the_node_was_checked_live():
    doc = report_of("check", "--from", str(SNAPSHOT), "--fail-on", "never")
    gpu = doc["facts"]["gpus"][0]
    assert gpu["name"] == "NVIDIA H100 80GB HBM3" and gpu["memory_total_mib"] == 81559, gpu
    gemm = doc["facts"]["bench"]["gpus"][0]["gemm"]
    live = json.loads((LEASE / "check-before.json").read_text())
    # The same node's rules, live and replayed, less those that need the benchmark (tf32-disabled
    # compares the fp32 and tf32 figures that only the snapshot measured).
    replayed = {f["symbol"] for f in doc["findings"]} - {"tf32-disabled"}
    assert replayed == {f["symbol"] for f in live["findings"]}, (replayed, live["findings"])
    assert not [f for f in doc["findings"] if f["severity"] == "error"], doc["findings"]
    # Each figure is what its own timing says (2 n^3 flops in the event-timed ms of one call), and a
    # healthy card is judged healthy against its datasheet.
    for dtype, g in gemm.items():
        assert abs(2 * g["n"] ** 3 / (g["ms"] * 1e-3) / 1e12 - g["tflops"]) < 0.01 * g["tflops"], (dtype, g)
    assert gemm["fp8"]["tflops"] > gemm["bf16"]["tflops"] > gemm["tf32"]["tflops"] > gemm["fp32"]["tflops"]
    assert not {"bench-gemm-low", "bench-memory-low"} & {f["symbol"] for f in doc["findings"]}


def test_an_unsynchronised_clock_read_live_by_adjtimex_on_the_gpu_node():
    doc = report_of("check", "--from", str(SNAPSHOT), "--fail-on", "never")
    clock = [f for f in doc["findings"] if f["symbol"] == "system-clock-wrong"]
    assert clock and clock[0]["severity"] == "warning" and "STA_UNSYNC" in clock[0]["message"], clock


def test_the_live_kernel_log_reads_the_xids_the_faults_raised_and_leaves_them_to_pastes():
    before = json.loads((LEASE / "check-before.json").read_text())
    after = json.loads((LEASE / "check-after.json").read_text())
    xids = {m["id"]: m for m in after["facts"]["kernel_log"]["messages"] if m["id"].startswith("xid:")}
    assert not [m for m in before["facts"]["kernel_log"]["messages"] if m["id"].startswith("xid:")]
    # Xid 43 (the device-side assert) and Xid 31 (CuPy's store to an unmapped address).
    assert {m["text"].split("): ")[1].split(",")[0] for m in xids.values()} == {"43", "31"}, xids
    assert all(m["cause"] == "program" for m in xids.values())
    assert "gpu-xid-application-fault" in xids["xid:ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT"]["rules"]
    # Live, another job's application fault is not this node's: no finding (rules/_common.py).
    symbols = {f["symbol"] for f in after["findings"]}
    assert symbols == {f["symbol"] for f in before["findings"]}, symbols
    assert not symbols & {"gpu-xid-application-fault", "gpu-hardware-faulty", "gpu-xid-reset-required"}
