"""Benchmarks against expectations: figures that show a slow GPU, link or fabric."""

from __future__ import annotations

import statistics
from typing import Any, Dict, Iterator, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.knowledge import expect
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView


def _measured(f: FactView) -> Iterator[Tuple[Dict[str, Any], Dict[str, Any], Optional[int]]]:
    """(bench GPU entry, facts GPU entry, SM count) pairs for the GPUs that were measured."""
    bench = f["bench"]
    gpus = f.gpus()
    sms = {d.get("index"): d.get("multi_processor_count") for d in (f.get("torch.devices") or [])}
    for b in bench.get("gpus") or []:
        g = next((x for x in gpus if x.get("index") == b.get("index")), {"name": b.get("name"), "index": b.get("index")})
        yield b, g, sms.get(b.get("index"))


# Reasons a GPU gives for running below its clock that say the card, its cooling or its power
# delivery is at fault, unlike the software power cap every busy H100 sits at (nvml.py's names).
_SLOWDOWNS = ("hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown", "hw_power_brake_slowdown")


def _during(b: Dict[str, Any], step: str) -> Tuple[str, Optional[str], Dict[str, Any]]:
    """(what the GPU was doing while `step` was measured, the severity that follows, evidence)."""
    cond = (b.get("during") or {}).get(step)
    if not isinstance(cond, dict):
        why = (b.get("during") or {}).get("unknown")
        return (f"; conditions during the run unknown ({why})" if why else ""), None, {}
    others = cond.get("other_processes") or []
    clocks, power = cond.get("sm_mhz") or {}, cond.get("power_w") or {}
    reasons = cond.get("clock_event_reasons") or {}
    seen = ", ".join(f"{k} {v:.0%}" for k, v in reasons.items() if k != "gpu_idle") or "none"
    state = (f"SM clock {clocks.get('min')}-{clocks.get('max')} MHz of {cond.get('sm_max_mhz')}, power up to "
             f"{power.get('max')} of {cond.get('power_limit_w')} W, clock event reasons: {seen}")
    evidence = {"during": cond}
    if others:
        who = "; ".join(f"pid {p['pid']}" + (f", {p['used_mib']} MiB" if p.get("used_mib") else "") for p in others)
        # A shared GPU's figure is its share: not evidence against the card (gpu-memory-in-use names them).
        return f"; measured while {len(others)} other process(es) used this GPU ({who}): a share, not the card's capacity; {state}", "info", evidence
    return f"; {state}", None, evidence


def _fix_for(severity: Optional[str], slowed: bool, default: str) -> str:
    if severity == "info":
        return "nvidia-smi   # who else runs on this GPU; rerun hpcdoctor check --bench quick once it is free"
    if slowed:
        return "nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER   # the GPU slowed itself: cooling or power delivery; drain the node and run dcgmi diag -r 3"
    return default


def _slowed(evidence: Dict[str, Any]) -> bool:
    reasons = (evidence.get("during") or {}).get("clock_event_reasons") or {}
    return any(reasons.get(k) for k in _SLOWDOWNS)


def _figure(entry: Any, *keys: str) -> Optional[float]:
    for k in keys:
        entry = entry.get(k) if isinstance(entry, dict) else None
    return entry if isinstance(entry, (int, float)) else None


@rule("BEN001", "bench-gemm-low", "warning", "GEMM throughput below what the GPU should reach", impact=8,
      also={"info": "another process used the GPU while it was measured: the figure is its share"})
def bench_gemm_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU whose measured matrix-multiply throughput (fp32, TF32, bf16, fp16, fp8) is below the
        expectation: the site config's minimum, else 55% of the SKU's datasheet peak (healthy
        H100s reach ~75%), else a peak derived from SM count and clock for GPUs hpcdoctor does not
        know.

    Why it matters:
        A GPU that computes at a fraction of its peak is throttled, power-capped, shares its SMs
        with another process, or is faulty; every step of the job runs at its pace.

        The benchmark reads NVML while it measures (SM clock, power against its limit, clock event
        reasons, other processes) and gives those conditions beside the figure: a figure taken
        while another process used the GPU is only its share (info); a card whose reasons say it
        slowed itself (thermal, hardware slowdown, power brake) is the warning.

    How to fix:
        Look at the GPU's clock event reasons, power limit and processes in the same report
        (gpu-throttled, power-limit-reduced, gpu-memory-in-use); rerun when another process has
        left the GPU; if nothing explains it, drain the node and run dcgmi diag -r 3.

    References:
        - 004_3c12714629749d50.txt (MFU and achievable throughput)
        - https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
    """
    for b, g, sms in _measured(f):
        for dtype in ("fp32", "tf32", "bf16", "fp16", "fp8"):
            got = _figure(b, "gemm", dtype, "tflops")
            exp = expect.gemm(g, dtype, f.config, sms) if got is not None else None
            if exp and got < exp[0]:
                n = b["gemm"][dtype].get("n")
                said, severity, during = _during(b, f"gemm.{dtype}")
                yield Hit(message=f"{dtype} GEMM n={n}: {got:.1f} TFLOP/s measured, {exp[0]:.0f} expected ({exp[1]}){said}",
                          subject=f"GPU {b.get('index')}", severity=severity,
                          fix=_fix_for(severity, _slowed(during),
                                       "nvidia-smi -q -d PERFORMANCE,POWER   # clocks, power and processes on this GPU; "
                                       "if unexplained, drain the node and run dcgmi diag -r 3"),
                          evidence={"measured_tflops": got, "expected_tflops": round(exp[0], 1), "dtype": dtype, **during})


@rule("BEN002", "bench-memory-low", "warning", "memory or PCIe copy bandwidth below expectation", impact=7,
      also={"info": "another process used the GPU while it was measured: the figure is its share"})
def bench_memory_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A device-to-device copy (bytes read plus written) below 67% of the GPU's memory bandwidth,
        or a pinned host-to-device copy below 55% of its PCIe link's bandwidth, or below the site
        config's minimums.

    Why it matters:
        Low device bandwidth slows every memory-bound kernel (normalisation, attention, optimiser
        steps); low host-to-device bandwidth slows data loading and offloading, and usually means a
        degraded PCIe link or a GPU far from the CPU that feeds it.

    How to fix:
        For host copies: check pcie-link-degraded and gpu-numa-mismatch in the same report, pin
        host memory (DataLoader(pin_memory=True)). For device copies: drain the node and run
        dcgmi diag -r 3 (memory bandwidth test).

    References:
        - https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
    """
    for b, g, _ in _measured(f):
        mem = b.get("memory") or {}
        for key, exp_fn, what in (("d2d_gbs", expect.d2d, "device-to-device copy"),
                                  ("h2d_pinned_gbs", expect.h2d, "pinned host-to-device copy")):
            got = _figure(mem, key)
            exp = exp_fn(g, f.config) if got is not None else None
            if exp and got < exp[0]:
                said, severity, during = _during(b, "memory")
                yield Hit(message=f"{what}: {got:.1f} GB/s measured, {exp[0]:.0f} expected ({exp[1]}){said}",
                          subject=f"GPU {b.get('index')}", severity=severity,
                          fix=_fix_for(severity, _slowed(during),
                                       "dcgmi diag -r 3   # after checking the PCIe link and NUMA placement in this report; drain the node first"),
                          evidence={"measured_gbs": got, "expected_gbs": round(exp[0], 1), "figure": key, **during})


@rule("BEN003", "bench-allreduce-low", "warning", "all-reduce bus bandwidth below expectation", impact=8)
def bench_allreduce_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The all-reduce across the node's GPUs reaching a bus bandwidth (nccl-tests' busbw = algbw x
        2(n-1)/n) at the largest size below 35% of the GPUs' NVLink/XGMI bandwidth, or below the
        site config's minimum.

    Why it matters:
        Data-parallel training spends much of each step in all-reduce; a node whose GPUs talk over
        PCIe instead of NVLink, or with a failed NVLink, slows every step of every job on it.

    How to fix:
        nvidia-smi nvlink -s and nvidia-smi topo -m show the links; NCCL_DEBUG=INFO shows which
        transport NCCL chose. A node with inactive NVLinks goes to the administrators.

    References:
        - https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
    """
    ar = f["bench"].get("allreduce") or {}
    rows = ar.get("results") or []
    if not rows or ar.get("backend") not in ("nccl", "rccl"):
        return
    last = rows[-1]
    gpus = f.gpus()
    exp = expect.allreduce_busbw(gpus[0], f.config) if gpus else None
    if exp and last["busbw_gbs"] < exp[0]:
        yield Hit(message=f"all-reduce of {last['bytes'] >> 20} MiB over {ar.get('world_size')} GPUs: busbw "
                          f"{last['busbw_gbs']:.1f} GB/s measured, {exp[0]:.0f} expected ({exp[1]})",
                  fix="nvidia-smi nvlink -s; nvidia-smi topo -m   # NCCL_DEBUG=INFO shows the transport NCCL picked",
                  evidence={"busbw_gbs": last["busbw_gbs"], "expected_gbs": round(exp[0], 1), "bytes": last["bytes"]})


@rule("BEN004", "bench-gpu-straggler", "warning", "one GPU well below its node's others", impact=9)
def bench_gpu_straggler(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU whose bf16 GEMM throughput (fp32 where bf16 was not measured) is below 90% of the
        median of the GPUs on the same node.

    Why it matters:
        Collectives run at the pace of the slowest rank: one straggler slows every GPU of a
        multi-GPU job, even when its absolute figure looks plausible.

    How to fix:
        Compare the straggler's temperature, clocks and power with its neighbours in this report;
        administrators check its cooling and run dcgmi diag -r 3 on it.

    References:
        - 004_3c12714629749d50.txt (stragglers in large training runs)
    """
    frac = knowledge.load("thresholds")["bench"]["straggler_fraction"]
    figures = {}
    for b, _, _ in _measured(f):
        v = _figure(b, "gemm", "bf16", "tflops") or _figure(b, "gemm", "fp32", "tflops")
        if v is not None:
            figures[b.get("index")] = v
    if len(figures) < 2:
        return
    median = statistics.median(figures.values())
    for idx, v in sorted(figures.items()):
        if v < median * frac:
            yield Hit(message=f"{v:.1f} TFLOP/s against a node median of {median:.1f} ({v / median:.0%})",
                      subject=f"GPU {idx}", fix=f"nvidia-smi -q -d CLOCK,TEMPERATURE,POWER   # compare GPU {idx} with the others; admins: dcgmi diag -r 3",
                      evidence={"tflops": v, "node_median": median, "all": figures})
