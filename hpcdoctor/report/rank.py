"""``--rank-report``: one line per task of a job step, about where this task runs.

Under ``srun hpcdoctor check --rank-report`` every task prints its rank, its CPUs and their NUMA
nodes, the GPUs it sees and whether they are local to those CPUs, its thread count, and the
placement findings, so binding mistakes show rank by rank (sort the output by the first field).
"""

from __future__ import annotations

from typing import Any, Dict, List

from hpcdoctor.facts import FactView
from hpcdoctor.parse.cpulist import format_cpulist

PLACEMENT = ("omp-threads-unset", "omp-threads-mismatch", "cpu-oversubscribed", "omp-binding-unset",
             "stale-affinity-vars", "gpu-numa-mismatch", "gpu-count-mismatch")


def _cpus(value: Any) -> List[int]:
    """CPU numbers only: a recorded list may hold anything (NaN became None, which no sort or
    range formatting takes: an internal TypeError, issue 27)."""
    if not isinstance(value, list):
        return []
    return [c for c in value if isinstance(c, int) and not isinstance(c, bool) and c >= 0]


def _numa_of(cpus: List[int], nodes: Any) -> List[int]:
    if not isinstance(nodes, list):
        return []
    found = []
    for n in nodes:
        if isinstance(n, dict) and set(cpus) & set(_cpus(n.get("cpus"))):
            found.append(n.get("id"))
    return found


def record(doc: Dict[str, Any]) -> Dict[str, Any]:
    """The same as ``line`` as one JSON object (``--rank-report --format json``)."""
    f = FactView(doc.get("facts", {}), doc.get("unknown", {}))
    env = f.get("env.vars") or {}
    cpus = _cpus(f.get("affinity.allowed_cpus"))
    problems = [x for x in doc.get("findings", []) if x["symbol"] in PLACEMENT]
    return {
        "rank": f.get("scheduler.rank", env.get("RANK")), "ntasks": f.get("scheduler.ntasks") or env.get("WORLD_SIZE"),
        "local_rank": f.get("scheduler.local_rank", f.get("scheduler.launcher_local_rank")),
        "host": f.get("system.hostname"), "cpus": format_cpulist(cpus) or None,
        "numa_nodes": _numa_of(cpus, f.get("numa.nodes")),
        "gpus": [{"index": g.get("index"), "numa_node": g.get("numa_node") if isinstance(g.get("numa_node"), int) else None}
                 for g in f.gpus()],
        "omp_num_threads": env.get("OMP_NUM_THREADS"),
        "findings": [{k: x.get(k) for k in ("severity", "code", "symbol", "message")} for x in problems],
        "unchecked": doc.get("unchecked") or [],
    }


def line(doc: Dict[str, Any]) -> str:
    f = FactView(doc.get("facts", {}), doc.get("unknown", {}))
    env = f.get("env.vars") or {}
    rank = f.get("scheduler.rank")
    if rank is None:
        rank = env.get("RANK", "?")
    local = f.get("scheduler.local_rank")
    if local is None:
        local = f.get("scheduler.launcher_local_rank", "?")
    ntasks = f.get("scheduler.ntasks") or env.get("WORLD_SIZE", "?")
    host = f.get("system.hostname") or "?"
    cpus = _cpus(f.get("affinity.allowed_cpus"))
    numa = _numa_of(cpus, f.get("numa.nodes"))
    parts = [f"rank {rank}/{ntasks}", f"host {host}", f"local {local}",
             f"CPUs {format_cpulist(cpus) or '?'} (NUMA {','.join(map(str, numa)) or '?'})"]
    visible = env.get("CUDA_VISIBLE_DEVICES") or env.get("ROCR_VISIBLE_DEVICES") or env.get("HIP_VISIBLE_DEVICES")
    gpus = f.gpus()
    if visible is not None:
        parts.append(f"visible GPUs {visible}")
    gpu_bits = []
    for g in gpus:
        loc = g.get("local_cpus")
        near = "local" if isinstance(loc, list) and set(_cpus(loc)) & set(cpus) else ("remote" if isinstance(loc, list) else "?")
        node = g.get("numa_node")
        gpu_bits.append(f"{g.get('index')}:NUMA {node if isinstance(node, int) else '?'} {near}")
    if gpu_bits:
        parts.append("GPU " + " ".join(gpu_bits))
    parts.append(f"OMP_NUM_THREADS {env.get('OMP_NUM_THREADS', 'unset')}")
    problems = [x for x in doc.get("findings", []) if x["symbol"] in PLACEMENT]
    unchecked = doc.get("unchecked") or []
    if unchecked:
        parts.append("could not check " + ", ".join(u["area"] for u in unchecked))
    parts.append(("ok" if not unchecked else "no findings in what could be checked") if not problems
                 else "; ".join(f"{x['severity']} {x['symbol']}: {x['message']}" for x in problems))
    return " · ".join(str(p) for p in parts)
