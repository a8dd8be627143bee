"""The node summary lines, shared by the terminal and Markdown reporters."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Tuple

from hpcdoctor.facts import FactView
from hpcdoctor.payload.cpu_share import SHARED_CPUS, shared as cpu_shared


def _gib(n: Any) -> str:
    return f"{n / 1024 ** 3:.0f} GiB" if isinstance(n, (int, float)) else "?"


def _chosen(t: Dict[str, Any]) -> str:
    # Said only for the default: a run from a venv asks whatever python3 comes first on PATH.
    return " (python3 on PATH)" if t.get("chosen_by") == "python3 on PATH" else ""


def _own_python(t: Dict[str, Any]) -> str:
    """Where the job's torch may be instead: hpcdoctor's own interpreter, or any other."""
    own = t.get("own_python") or {}
    if own.get("path"):
        has = f"torch {own['torch']}" if own.get("torch") else "torch"
        return f"; hpcdoctor's own {own['path']} has {has}: add --python {own['path']}"
    return "; --python PATH asks another" if t.get("chosen_by") == "python3 on PATH" else ""


def node_lines(doc: Dict[str, Any]) -> List[Tuple[str, str]]:
    f = FactView(doc.get("facts", {}), doc.get("unknown", {}))
    lines: List[Tuple[str, str]] = []

    cpu_bits = []
    if f.has("cpu.model_name"):
        cpu_bits.append(str(f.get("cpu.model_name")))
    micro: List[str] = []
    for x in (f.get("cpu.microarch"), f.get("cpu.microarch_note"), f.get("cpu.arch")):
        if x and str(x) not in micro:  # a generic target is named like its ISA: say it once
            micro.append(str(x))
    if micro:
        cpu_bits.append(f"({', '.join(micro)})")
    topo = []
    for path, unit in (("cpu.sockets", "socket"), ("cpu.cores", "core"), ("cpu.logical_cpus", "thread")):
        n = f.get(path)
        if isinstance(n, int):
            topo.append(f"{n} {unit}{'s' if n != 1 else ''}")
    if topo:
        cpu_bits.append("· " + ", ".join(topo))
    caps = f.get("cpu.capabilities") or {}
    order = (("sve2", "sve", "svebf16", "bf16", "i8mm", "sme") if f.get("cpu.arch") == "aarch64"
             else ("amx_bf16", "avx512_bf16", "avx512_fp16", "avx512f", "avx2"))
    shown = [c for c in order if caps.get(c)]
    if shown:
        cpu_bits.append("· " + " ".join(shown[:5]))
    if f.get("cpu.hypervisor") is True:
        # Clocks, PCIe and NUMA read differently in a guest: say so where the CPU is named.
        cpu_bits.append("· VM (hypervisor)")
    lines.append(("CPU", " ".join(cpu_bits) or "unknown: " + f.reason("cpu")))

    mem_bits = []
    if f.has("memory.total_bytes"):
        mem_bits.append(_gib(f.get("memory.total_bytes")))
    if f.has("numa.count"):
        n = f.get("numa.count")
        mem_bits.append(f"{n} NUMA node{'s' if n != 1 else ''}")
    if f.has("memory.thp_enabled"):
        mem_bits.append(f"THP {f.get('memory.thp_enabled')}")
    if f.has("memory.shm_size_bytes"):
        mem_bits.append(f"/dev/shm {_gib(f.get('memory.shm_size_bytes'))}")
    lines.append(("Memory", " · ".join(mem_bits) or "unknown"))

    gpus = f.gpus()
    if gpus:
        names: Dict[str, int] = {}
        for g in gpus:
            names[str(g.get("name") or "GPU")] = names.get(str(g.get("name") or "GPU"), 0) + 1
        desc = ", ".join(f"{n} × {name}" for name, n in names.items())
        drv = gpus[0].get("driver_version")
        lines.append(("GPUs", desc + (f" · driver {drv}" if drv else "")))
    elif f.get("gpus") == []:
        lines.append(("GPUs", "none"))
    elif "gpus" in doc.get("unknown", {}):
        lines.append(("GPUs", "unknown: " + doc["unknown"]["gpus"]))

    t = doc.get("facts", {}).get("torch") or {}
    if t:
        if t.get("version"):
            extra = f" (CUDA {t['cuda']})" if t.get("cuda") else (f" (ROCm {t['hip']})" if t.get("hip") else " (CPU build)" if t.get("build") == "cpu" else "")
            where = f" · {t['target_python']}" if t.get("target_python") else ""
            if t.get("invoked_as") and t.get("invoked_as") != t.get("target_python"):
                where += f" (run as {t['invoked_as']})"
            lines.append(("Python", f"torch {t['version']}{extra}{where}{_chosen(t)}"))
        elif t.get("import_error"):
            lines.append(("Python", f"torch cannot be imported: {t['import_error']}"))
        elif t.get("installed") is False:
            where = f" in {t['target_python']}" if t.get("target_python") else ""
            lines.append(("Python", f"no torch installed{where}{_chosen(t)}{_own_python(t)}"))
    elif "torch" in doc.get("unknown", {}):
        lines.append(("Python", "unknown: " + doc["unknown"]["torch"]))

    lines.extend(bench_lines(doc.get("facts", {}).get("bench")))
    systems = doc.get("recognised_systems") or []
    if systems:
        lines.append(("System", "looks like " + " or ".join(s["name"] for s in systems)))
    sched = doc.get("facts", {}).get("scheduler") or {}
    job = ""
    if sched.get("kind") == "slurm":
        bits = [f"Slurm job {sched.get('job_id')}"]
        for key, label in (("ntasks", "tasks"), ("tasks_per_node", "tasks/node"), ("cpus_per_task", "CPUs/task"),
                           ("gpus_on_node", "GPUs on node")):
            if sched.get(key):
                bits.append(f"{sched[key]} {label}")
        job = " · ".join(bits)
    elif sched.get("in_job"):
        job = f"{sched.get('kind')} job {sched.get('job_id')}"
    elif sched.get("in_job") is False:
        job = "not inside a batch job"
    allowed = f.get("affinity.allowed_count")
    if isinstance(allowed, int):
        job = (job + " · " if job else "") + f"{allowed} CPUs allowed"
    if job:
        lines.append(("Job", job))
    return lines


def failed_checks(doc: Dict[str, Any]) -> List[str]:
    return [f"{name}: {p.get('status')} ({p.get('reason')})" for name, p in doc.get("checks", {}).items()
            if p.get("status") != "ok"]


def _conditions(during: Any) -> str:
    """What the GPU was doing while it was measured, in a few words: its clock range, the power
    cap or a slowdown where NVML reported one, and anybody else on it."""
    if not isinstance(during, dict) or not during:
        return ""
    if "unknown" in during:
        return " · conditions unknown"
    # A snapshot is a user's file: read what has the recorded shape and pass over what has not.
    steps = [c for c in during.values() if isinstance(c, dict) and c.get("samples")]
    clocks = [c.get("sm_mhz") for c in steps if isinstance(c.get("sm_mhz"), dict)]
    lows = [x["min"] for x in clocks if isinstance(x.get("min"), (int, float))]
    highs = [x["max"] for x in clocks if isinstance(x.get("max"), (int, float))]
    if not lows or not highs:
        return ""
    said = f" · SM {min(lows)}-{max(highs)} MHz of {steps[0].get('sm_max_mhz')}"
    reasons = {str(k) for c in steps if isinstance(c.get("clock_event_reasons"), dict)
               for k, v in c["clock_event_reasons"].items() if v and k != "gpu_idle"}
    if reasons:
        said += ", " + ", ".join(sorted(reasons))
    others = {str(p.get("pid")) for c in steps if isinstance(c.get("other_processes"), list)
              for p in c["other_processes"] if isinstance(p, dict)}
    if others:
        said += f" · shared with {len(others)} other process(es)"
    return said


def bench_lines(bench: Any) -> List[Tuple[str, str]]:
    """Short lines of the measured figures, one per GPU, the CPU and the all-reduce."""
    if not isinstance(bench, dict):
        return []
    out: List[Tuple[str, str]] = []
    for g in bench.get("gpus") or []:
        parts = []
        for dtype in ("fp32", "tf32", "bf16", "fp16", "fp8"):
            v = (g.get("gemm") or {}).get(dtype) or {}
            if isinstance(v.get("tflops"), (int, float)):
                parts.append(f"{dtype} {v['tflops']:.0f}")
        mem = g.get("memory") or {}
        text = ("GEMM TFLOP/s " + " ".join(parts)) if parts else (g.get("stopped") or "not measured")
        for key, label in (("d2d_gbs", "copy"), ("h2d_pinned_gbs", "H2D pinned"), ("h2d_pageable_gbs", "H2D pageable")):
            if isinstance(mem.get(key), (int, float)):
                text += f" · {label} {mem[key]:.0f} GB/s"
        text += _conditions(g.get("during"))
        out.append((f"Bench {g.get('index')}", text))
    cpu = bench.get("cpu") or {}
    if cpu:
        parts = [f"{k} {v['gflops']:.0f}" for k, v in cpu.items() if isinstance(v, dict) and isinstance(v.get("gflops"), (int, float))]
        shared = cpu_shared(cpu)
        note = ""
        if shared:
            steal = shared.get("steal_cpus") or 0
            note = (f" · other work held {shared['taken']:g} of its {shared.get('cpus')} CPUs"
                    + (f" ({steal:g} as hypervisor steal)" if steal > SHARED_CPUS else "")
                    + ": figures of a share, not of the CPU")
        out.append(("Bench", f"CPU GEMM GFLOP/s ({cpu.get('threads')} threads) " + " ".join(parts) + note))
    ar = bench.get("allreduce") or {}
    if ar.get("results"):
        last = ar["results"][-1]
        first = ar["results"][0]
        out.append(("Bench", f"all-reduce {ar.get('backend')} x{ar.get('world_size')}: {first['time_us']:.0f} us at "
                             f"{first['bytes'] >> 10} KiB, busbw {last['busbw_gbs']:.1f} GB/s at {last['bytes'] >> 20} MiB"))
    elif ar.get("not_applicable") or ar.get("stopped"):
        out.append(("Bench", f"all-reduce: {ar.get('not_applicable') or ar.get('stopped')}"))
    if bench.get("stopped"):
        out.append(("Bench", f"stopped: {bench['stopped']}"))
    from hpcdoctor.checks.bench import not_measured

    for name, reason in not_measured(bench).items():
        out.append(("Bench", f"{name} not measured: {reason}"))
    return out


# What a paste was searched for, vendor by vendor, when it named no GPU in a form hpcdoctor reads.
_GPU_SOURCES = {
    "NVIDIA": "nvidia-smi -q, nvidia-smi -q -x, the nvidia-smi table, collect_env's GPU list",
    "AMD": "amd-smi static (--json), rocm-smi (-a, --json)",
}


def paste_gpu_sources() -> str:
    """Why a paste's GPUs are unknown, by what was looked for, vendor by vendor (the probe's own
    reason names only the vendor tried last)."""
    tried = "; ".join(f"{vendor}: {what}" for vendor, what in _GPU_SOURCES.items())
    return f"the paste holds no GPU listing (looked for {tried})"


def paste_gpu_line(text: str) -> str:
    """A paste's GPU summary line, its unknown explained by paste_gpu_sources()."""
    return f"unknown: {paste_gpu_sources()}" if text.startswith("unknown") else text


def skipped_by_fact(skipped: List[Dict[str, Any]]) -> List[Tuple[str, List[str], str]]:
    """Skipped rules grouped by the fact they lacked, most first: (fact, [symbols], one reason)."""
    groups: Dict[str, Tuple[List[str], str]] = {}
    for s in skipped:
        reason = str(s.get("reason", ""))
        m = re.match(r"needs ([\w.]+)", reason)
        key = m.group(1).split(".")[0] if m else "other"
        groups.setdefault(key, ([], reason))[0].append(str(s.get("symbol")))
    return sorted(((k, syms, why) for k, (syms, why) in groups.items()), key=lambda g: -len(g[1]))
