"""The cluster result: every node of a job, gathered on rank 0, laid side by side.

What should be uniform across nodes (driver, torch, NCCL, GPU count and model, CPU model,
kernel) and each node's best GEMM go to the cluster rules (CLU003 node-divergent, CLU004
node-straggler; CLU001/CLU002 for the links): the judging is theirs, with codes and explain
pages. The per-node findings are grouped so that one problem on twenty nodes reads as one line.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor import engine
from hpcdoctor.engine import SEVERITY_RANK
from hpcdoctor.facts import FactView
from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist

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
    facts = doc.get("facts") if isinstance(doc.get("facts"), dict) else {}
    system = facts.get("system") if isinstance(facts.get("system"), dict) else {}
    return str(system.get("hostname") or f"rank {rank}")[:256]


def _best_gemm(doc: Dict[str, Any]) -> Any:
    values = []
    for g in ((doc.get("facts", {}).get("bench") or {}).get("gpus") or []):
        gemm = g.get("gemm") or {}
        v = (gemm.get("bf16") or {}).get("tflops") or (gemm.get("fp32") or {}).get("tflops")
        if isinstance(v, (int, float)):
            values.append(v)
    return min(values) if values else None


def nodes_of(gathered: Dict[str, Any]) -> Dict[str, Tuple[str, Dict[str, Any]]]:
    """One entry per host: ranks of one node agree on node facts, and the first stands for them."""
    reports = gathered.get("nodes") or gathered.get("reports") or {}
    nodes: Dict[str, Tuple[str, Dict[str, Any]]] = {}
    for rank, doc in sorted(reports.items(), key=lambda kv: int(kv[0])):
        if isinstance(doc, dict):
            nodes.setdefault(_host(doc, rank), (rank, _shape(doc)))
    return nodes


def _shape(doc: Dict[str, Any]) -> Dict[str, Any]:
    """Another node's report as far as the analysis reads it: the expected types, or nothing."""
    facts = doc.get("facts") if isinstance(doc.get("facts"), dict) else {}
    unknown = doc.get("unknown") if isinstance(doc.get("unknown"), dict) else {}
    findings = [f for f in doc.get("findings") or [] if isinstance(f, dict)] if isinstance(doc.get("findings"), list) else []
    return {"facts": facts, "unknown": unknown, "findings": findings}


def _value(get: Any, doc: Dict[str, Any]) -> Any:
    try:
        return get(FactView(doc["facts"], doc["unknown"]))
    except Exception:  # a malformed report from another rank is a missing value, not a crash
        return None


def _cpus(text: Any) -> Optional[set]:
    # Another rank's text: bounded before it is expanded, so "0-4000000000" costs nothing.
    if not isinstance(text, str) or len(text) > 4096 or any(int(n) >= 1 << 16 for n in re.findall(r"\d+", text)):
        return None
    try:
        return set(parse_cpulist(text))
    except ListFormatError:
        return None


def _rank_problems(gathered: Dict[str, Any], nodes: Dict[str, Tuple[str, Dict[str, Any]]],
                   host_of: Dict[str, str]) -> List[Dict[str, Any]]:
    """Per rank: more OpenMP threads than allowed CPUs, and visible GPUs attached to CPUs the rank
    may not run on (its node's GPU list, from the leader's check, gives each GPU's local CPUs)."""
    problems = []
    for r, info in sorted((gathered.get("ranks") or {}).items(), key=lambda kv: int(kv[0])):
        cpus = _cpus(info.get("cpus"))
        env = info.get("env") if isinstance(info.get("env"), dict) else {}
        host = host_of.get(str(info.get("leader")), str(info.get("node")))
        if cpus is None:
            continue
        threads = str(env.get("OMP_NUM_THREADS") or "")
        if threads.isdecimal() and int(threads) > len(cpus):
            problems.append({"rank": int(r), "node": host, "what": f"OMP_NUM_THREADS={threads} on {len(cpus)} allowed CPU(s)"})
        visible = str(env.get("CUDA_VISIBLE_DEVICES") or env.get("ROCR_VISIBLE_DEVICES") or env.get("HIP_VISIBLE_DEVICES") or "")
        gpus = _value(lambda f: f.gpus(), nodes[host][1]) if host in nodes else None
        for idx in [int(x) for x in visible.split(",") if x.strip().isdecimal()][:64]:
            g = next((g for g in gpus or [] if isinstance(g, dict) and g.get("index") == idx), None)
            local = _cpus(g.get("local_cpus")) if g and isinstance(g.get("local_cpus"), str) else (
                set(g["local_cpus"]) if g and isinstance(g.get("local_cpus"), list) and len(g["local_cpus"]) < 1 << 16 else None)
            if local and not (local & cpus):
                problems.append({"rank": int(r), "node": host, "what": f"GPU {idx} is attached to CPUs this rank may not use"})
    return problems


def _placement(gathered: Dict[str, Any], host_of: Dict[str, str]) -> List[Dict[str, Any]]:
    """Ranks of one node allowed on the same CPUs: bound to overlapping cores, they compete."""
    by_node: Dict[str, List[Tuple[int, set]]] = {}
    for r, info in (gathered.get("ranks") or {}).items():
        cpu_set = _cpus(info.get("cpus"))
        if cpu_set is None:
            continue
        by_node.setdefault(host_of.get(str(info.get("leader")), str(info.get("node"))), []).append((int(r), cpu_set))
    shared = []
    for host, ranks in sorted(by_node.items()):
        if len(ranks) < 2:
            continue
        overlapping = sorted({r for r, c in ranks for q, d in ranks if q != r and c & d})
        if overlapping:
            shared.append({"node": host, "ranks": overlapping})
    return shared


def _links(gathered: Dict[str, Any], host_of: Dict[str, str]) -> Dict[str, Any]:
    links = gathered.get("links") or {}
    leaders = [str(r) for r in links.get("leaders") or []]
    results = links.get("results") or {}
    name = {i: host_of.get(r, f"rank {r}") for i, r in enumerate(leaders)}
    out: Dict[str, Any] = {"pairs": [], "allreduce": None, "errors": {}}
    for r, res in results.items():
        if not isinstance(res, dict):
            continue
        if res.get("error") or res.get("skipped"):
            out["errors"][host_of.get(r, f"rank {r}")] = str(res.get("error") or res.get("skipped"))[:300]
            continue
        if r == "0" or out["allreduce"] is None and res.get("allreduce"):
            out["allreduce"] = {"backend": res.get("backend"), "nodes": res.get("nodes"),
                                "results": [x for x in res.get("allreduce") or [] if isinstance(x, dict)]}
        for p in res.get("pairs") or []:
            if isinstance(p, dict) and isinstance(p.get("gbs"), (int, float)):
                out["pairs"].append({"a": name.get(p.get("a"), str(p.get("a"))), "b": name.get(p.get("b"), str(p.get("b"))),
                                     "gbs": p["gbs"], "bytes": p.get("bytes")})
    return out


def cluster_findings(facts: Dict[str, Any], codes: Tuple[str, ...]) -> Tuple[List[Dict[str, Any]], List[Dict[str, str]]]:
    """The cluster rules named by ``codes`` over the facts only rank 0 has, and those that could not judge."""
    rules = [r for r in engine.load_rules()[0] if r.code in codes]
    findings, skipped = engine.evaluate(rules, FactView(facts, {}))
    return [f.to_json() for f in findings], skipped


def _grouped_findings(nodes: Dict[str, Tuple[str, Dict[str, Any]]]) -> List[Dict[str, Any]]:
    """One entry per finding code, with the message and fix as the nodes gave them: one variant
    when they agree, else each variant with its nodes (a code alone tells the reader nothing)."""
    grouped: Dict[Tuple[str, str, str], Dict[Tuple[str, str], List[str]]] = {}
    for host, (_, doc) in nodes.items():
        for f in doc.get("findings", []):
            key = (str(f.get("severity")), str(f.get("code")), str(f.get("symbol")))
            variant = (str(f.get("message") or ""), str(f.get("fix") or ""))
            grouped.setdefault(key, {}).setdefault(variant, []).append(host)
    out = []
    for (sev, code, sym), variants in sorted(grouped.items(), key=lambda kv: (SEVERITY_RANK.get(kv[0][0], 99), kv[0][1])):
        hosts = sorted({h for hs in variants.values() for h in hs})
        ordered = sorted(variants.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        (message, fix), _ = ordered[0]
        entry = {"severity": sev, "code": code, "symbol": sym, "nodes": hosts, "message": message, "fix": fix}
        if len(ordered) > 1:
            entry["variants"] = [{"message": m, "fix": x, "nodes": sorted(h)} for (m, x), h in ordered]
        out.append(entry)
    return out


def analyse(gathered: Dict[str, Any]) -> Dict[str, Any]:
    nodes = nodes_of(gathered)
    host_of = {rank: host for host, (rank, _) in nodes.items()}
    # What the rules compare across nodes (CLU003 node-divergent, CLU004 node-straggler): the
    # judging is theirs, with codes and explain pages; this lays the nodes' facts side by side.
    values = {label: {host: _value(get, doc) for host, (_, doc) in nodes.items()} for label, get in UNIFORM}
    gemm = {h: _value(lambda _f, d=doc: _best_gemm(d), doc) for h, (_, doc) in nodes.items()}
    node_findings, _ = cluster_findings({"cluster": {"nodes": sorted(nodes), "node_values": values,
                                                     "gemm_tflops": {h: v for h, v in gemm.items() if v is not None}}},
                                        ("CLU003", "CLU004"))
    divergent = [dict(f["evidence"], fix=f["fix"]) for f in node_findings if f["code"] == "CLU003"]
    stragglers = [dict(f["evidence"], fix=f["fix"]) for f in node_findings if f["code"] == "CLU004"]
    findings = _grouped_findings(nodes)
    links = _links(gathered, host_of) if gathered.get("links") else None
    link_findings: List[Dict[str, Any]] = []
    link_skipped: List[Dict[str, str]] = []
    if links is not None:
        facts = {"cluster": {"nodes": sorted(nodes), "pairs": links["pairs"], "allreduce": links["allreduce"],
                             "network": {h: (doc.get("facts", {}) or {}).get("network") for h, (_, doc) in nodes.items()}}}
        link_findings, link_skipped = cluster_findings(facts, ("CLU001", "CLU002"))
    return {"world_size": gathered.get("world_size"), "nodes": sorted(nodes), "missing_ranks": gathered.get("missing", []),
            "divergent": divergent, "stragglers": stragglers, "findings": findings,
            "shared_cpus": _placement(gathered, host_of), "rank_problems": _rank_problems(gathered, nodes, host_of), "links": links, "link_findings": link_findings,
            "link_unjudged": link_skipped,
            "node_checked_by": {h: int(r) for h, (r, _) in sorted(nodes.items())},
            "ranks": {str(r): {"node": host_of.get(str(i.get("leader")), i.get("node")), "cpus": i.get("cpus")}
                      for r, i in sorted((gathered.get("ranks") or {}).items(), key=lambda kv: int(kv[0]))},
            "rejected_posts": gathered.get("rejected") or [], "auth": gathered.get("auth"),
            "rejected_count": gathered.get("rejected_count"), "store_error": gathered.get("store_error"),
            "store": gathered.get("store")}


def node_reports(gathered: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Each node's own report, once per node (the rank that checked it), keyed by host name."""
    reports = gathered.get("nodes") or gathered.get("reports") or {}
    return {host: reports[rank] for host, (rank, _) in nodes_of(gathered).items()
            if isinstance(reports.get(rank), dict)}
