"""What else ran on this process's CPUs when its CPU figures were taken (standard library only).

A CPU GEMM splits its work evenly over all its threads, so one other process spinning on one of
those CPUs makes every call wait for the thread that shares it: on a 16-CPU H200 node a Python
loop polling the GPU cut the CPU GEMM from about 1070 to 268 GFLOP/s, for every dtype alike
(2026-11-26). A figure measured that way says nothing about the CPU, so it carries this record.
"""

import os
import time

# /proc/stat's per-CPU fields (proc(5)): user nice system idle iowait irq softirq steal ...
_BUSY = (0, 1, 2, 5, 6)
_STEAL = 7


def _jiffies(cpus):
    """(busy, steal) jiffies summed over `cpus`, or None where /proc/stat cannot be read."""
    busy = steal = 0
    seen = 0
    try:
        with open("/proc/stat") as fh:
            for line in fh:
                if not line.startswith("cpu") or line.startswith("cpu "):
                    continue
                name, _, rest = line.partition(" ")
                if not name[3:].isdigit() or int(name[3:]) not in cpus:
                    continue
                vals = [int(v) for v in rest.split()]
                busy += sum(vals[i] for i in _BUSY if i < len(vals))
                steal += vals[_STEAL] if len(vals) > _STEAL else 0
                seen += 1
    except (OSError, ValueError):
        return None
    return (busy, steal) if seen else None


def other_load(seconds=0.5):
    """How many of this process's CPUs other processes (and the hypervisor, as steal) kept busy,
    sampled over `seconds` while this process waits: {"cpus", "other_busy_cpus", "steal_cpus",
    "seconds", "resolution_cpus"}, or None where /proc/stat cannot be read.

    Sampled apart from the GEMMs, not around them: /proc/stat counts in ticks of 10 ms, so over a
    GEMM of a few ms the count says nothing (on the idle H200 node, 1.7 of 16 CPUs "busy" over a
    22 ms GEMM); over half a second its noise is a tenth of a CPU. Subtracting this process's own
    time keeps its OpenMP threads, still spinning after a GEMM, out of the count."""
    try:
        cpus = set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = set(range(os.cpu_count() or 1))
    try:
        tick = float(os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError, AttributeError):
        tick = 100.0
    start, wall0, own0 = _jiffies(cpus), time.monotonic(), time.process_time()
    time.sleep(seconds)
    end, wall, own = _jiffies(cpus), time.monotonic() - wall0, time.process_time() - own0
    if start is None or end is None or wall <= 0:
        return None
    busy = (end[0] - start[0]) / tick
    steal = (end[1] - start[1]) / tick
    other = max(0.0, busy - steal - own) / wall
    # Each CPU's count is off by less than a tick at either end: three standard deviations of
    # that sum, in CPUs over this window.
    resolution = 3.0 * (len(cpus) / 6.0) ** 0.5 / tick / wall
    return {"cpus": len(cpus), "other_busy_cpus": round(min(other, len(cpus)), 2),
            "steal_cpus": round(max(0.0, steal) / wall, 2), "seconds": round(wall, 3),
            "resolution_cpus": round(resolution, 2)}


# Above half a CPU taken from a GEMM that uses every allowed CPU, its figure measures the sharing.
SHARED_CPUS = 0.5


def shared(cpu_bench):
    """The bench's record of other load on its CPUs (bench.cpu.other_load) where other work or the
    hypervisor took more than SHARED_CPUS and more than the count can tell from noise; else None.
    A snapshot is a user's file: what has not the recorded shape is passed over."""
    load = cpu_bench.get("other_load") if isinstance(cpu_bench, dict) else None
    if not isinstance(load, dict):
        return None
    taken = sum(v for v in (load.get("other_busy_cpus"), load.get("steal_cpus"))
                if isinstance(v, (int, float)) and not isinstance(v, bool))
    floor = load.get("resolution_cpus")
    floor = floor if isinstance(floor, (int, float)) and not isinstance(floor, bool) else 0.0
    if taken > max(SHARED_CPUS, floor):
        return dict(load, taken=round(taken, 2))
    return None
