"""The cluster report: one view of every node of a job, gathered on rank 0.

Nodes that differ from the majority on what should be uniform (driver, torch, NCCL, GPU count and
model, CPU model, kernel), nodes whose GEMM figures trail the others (stragglers), and the
per-node findings grouped so that one problem on twenty nodes reads as one line.
"""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any, Dict, List, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import SEVERITY_RANK
from hpcdoctor.facts import FactView

UNIFORM = [
    ("NVIDIA driver", lambda f: f.get("nvidia.driver_version")),
    ("ROCm", lambda f: f.get("amd.rocm_version")),
    ("torch", lambda f: f.get("torch.version")),
    ("NCCL", lambda f: f.get("torch.nccl")),
    ("GPU count", lambda f: len(f.gpus()) if isinstance(f.get("gpus"), list) else None),
    ("GPU model", lambda f: ", ".join(sorted({str(g.get("name")) for g in f.gpus()})) or None),
    ("CPU model", lambda f: f.get("cpu.model_name")),
    ("logical CPUs", lambda f: f.get("cpu.logical_cpus")),
    ("kernel", lambda f: f.get("system.kernel")),
]


def _host(doc: Dict[str, Any], rank: str) -> str:
    return str((doc.get("facts", {}).get("system") or {}).get("hostname") or f"rank {rank}")


def _best_gemm(doc: Dict[str, Any]) -> Any:
    values = []
    for g in ((doc.get("facts", {}).get("bench") or {}).get("gpus") or []):
        gemm = g.get("gemm") or {}
        v = (gemm.get("bf16") or {}).get("tflops") or (gemm.get("fp32") or {}).get("tflops")
        if isinstance(v, (int, float)):
            values.append(v)
    return min(values) if values else None


def analyse(gathered: Dict[str, Any]) -> Dict[str, Any]:
    reports = gathered.get("reports", {})
    # One entry per node: ranks of one node agree on node facts, and the first stands for them.
    nodes: Dict[str, Tuple[str, Dict[str, Any]]] = {}
    for rank, doc in sorted(reports.items(), key=lambda kv: int(kv[0])):
        nodes.setdefault(_host(doc, rank), (rank, doc))
    divergent: List[Dict[str, Any]] = []
    for label, get in UNIFORM:
        values = {host: get(FactView(doc.get("facts", {}), doc.get("unknown", {}))) for host, (_, doc) in nodes.items()}
        known = {h: v for h, v in values.items() if v is not None}
        if len(set(map(str, known.values()))) <= 1:
            continue
        majority, _ = Counter(map(str, known.values())).most_common(1)[0]
        divergent.append({"fact": label, "majority": majority,
                          "differ": {h: v for h, v in known.items() if str(v) != majority}})
    gemm = {h: _best_gemm(doc) for h, (_, doc) in nodes.items()}
    gemm = {h: v for h, v in gemm.items() if v is not None}
    stragglers = []
    if len(gemm) >= 2:
        frac = knowledge.load("thresholds")["bench"]["straggler_fraction"]
        med = statistics.median(gemm.values())
        stragglers = [{"node": h, "tflops": v, "median": med} for h, v in sorted(gemm.items()) if v < med * frac]
    grouped: Dict[Tuple[str, str, str], List[str]] = {}
    for host, (_, doc) in nodes.items():
        for f in doc.get("findings", []):
            grouped.setdefault((f["severity"], f["code"], f["symbol"]), []).append(host)
    findings = [{"severity": s, "code": c, "symbol": sym, "nodes": sorted(h)}
                for (s, c, sym), h in sorted(grouped.items(), key=lambda kv: (SEVERITY_RANK[kv[0][0]], kv[0][1]))]
    return {"world_size": gathered.get("world_size"), "nodes": sorted(nodes), "missing_ranks": gathered.get("missing", []),
            "divergent": divergent, "stragglers": stragglers, "findings": findings}


def render(result: Dict[str, Any]) -> str:
    lines = [f"hpcdoctor cluster report: {len(result['nodes'])} node(s), {result['world_size']} rank(s)"]
    if result["missing_ranks"]:
        lines.append(f"! ranks that never reported: {', '.join(map(str, result['missing_ranks']))} (partial result)")
    if result["divergent"]:
        lines.append("Nodes that differ from the majority:")
        for d in result["divergent"]:
            others = "; ".join(f"{h}: {v}" for h, v in sorted(d["differ"].items()))
            lines.append(f"  {d['fact']}: majority {d['majority']} · {others}")
    else:
        lines.append("All nodes agree on driver, torch, NCCL, GPUs, CPU and kernel.")
    for s in result["stragglers"]:
        lines.append(f"Straggler: {s['node']} GEMM {s['tflops']:.1f} TFLOP/s against a median of {s['median']:.1f}")
    if result["findings"]:
        lines.append("Findings:")
        for f in result["findings"]:
            nodes = f["nodes"]
            where = ", ".join(nodes[:6]) + (f" (+{len(nodes) - 6})" if len(nodes) > 6 else "")
            lines.append(f"  {f['severity']:<7} {f['code']} {f['symbol']}: {len(nodes)} node(s): {where}")
    return "\n".join(lines) + "\n"
