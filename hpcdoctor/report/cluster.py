"""The cluster report as text: what rank 0 prints for a whole job (hpcdoctor.cluster.analysis
builds the result). Every value came from another rank: shown escaped and bounded, never obeyed."""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict

from hpcdoctor.report.safe import term


def _safe(value: Any, limit: int = 200) -> str:
    """A value from another rank, shown as text: control characters escaped, length bounded."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    return term(text)


def render(result: Dict[str, Any]) -> str:
    lines = [f"hpcdoctor cluster report: {len(result['nodes'])} node(s), {_safe(result['world_size'])} rank(s)"]
    if result.get("auth"):
        lines.append(f"posts signed with a per-job key ({_safe(result['auth'])})")
    if result.get("rejected_posts"):
        reasons = Counter(_safe(r.get("reason")) for r in result["rejected_posts"])
        lines.append("! posts rejected (not this job's, or not signed with its key): "
                     + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items())))
        more = result.get("rejected_count")
        if isinstance(more, int) and more > len(result["rejected_posts"]):
            lines.append(f"  ... {more - len(result['rejected_posts'])} more rejected, counted only")
    if result.get("store_error"):
        lines.append(f"! rank 0 lost the store (a peer can close its connection): {_safe(result['store_error'])}")
    if result["missing_ranks"]:
        lines.append(f"! ranks that never reported: {', '.join(map(_safe, result['missing_ranks']))} (partial result)")
    if result["divergent"]:
        lines.append("Nodes that differ from the majority (CLU003 node-divergent):")
        for d in result["divergent"]:
            others = "; ".join(f"{_safe(h)}: {_safe(v)}" for h, v in sorted(d["differ"].items()))
            lines.append(f"  {_safe(d['fact'])}: majority {_safe(d['majority'])} · {others}")
            lines.append(f"        fix: {_safe(d.get('fix'), 400)}")
    else:
        lines.append("All nodes agree on driver, torch, NCCL, GPUs, CPU and kernel.")
    for s in result["stragglers"]:
        lines.append(f"Straggler (CLU004 node-straggler): {_safe(s['node'])} GEMM {s['tflops']:.1f} TFLOP/s "
                     f"against a median of {s['median']:.1f}")
        lines.append(f"        fix: {_safe(s.get('fix'), 400)}")
    for s in result.get("shared_cpus") or []:
        lines.append(f"Ranks sharing CPUs on {_safe(s['node'])}: {', '.join(map(str, s['ranks']))} (check --cpu-bind / --cpus-per-task)")
    for p in result.get("rank_problems") or []:
        lines.append(f"Rank {p['rank']} on {_safe(p['node'])}: {_safe(p['what'])}")
    links = result.get("links")
    if links:
        ar = links.get("allreduce") or {}
        for row in ar.get("results") or []:
            lines.append(f"All-reduce across {_safe(ar.get('nodes'))} nodes ({_safe(ar.get('backend'))}), "
                         f"{row['bytes'] >> 10} KiB: algbw {row['algbw_gbs']:.2f} GB/s, busbw {row['busbw_gbs']:.2f} GB/s")
        for p in links.get("pairs") or []:
            lines.append(f"  link {_safe(p['a'])} <-> {_safe(p['b'])}: {p['gbs']:.2f} GB/s")
        for host, why in sorted((links.get("errors") or {}).items()):
            lines.append(f"! links not measured from {_safe(host)}: {_safe(why)}")
    for f in result.get("link_findings") or []:
        lines.append(f"{f['severity']:<7} {f['code']} {f['symbol']}: {_safe(f['message'], 400)}")
        if f.get("fix"):
            lines.append(f"        fix: {_safe(f['fix'], 400)}")
    for sk in result.get("link_unjudged") or []:
        lines.append(f"? {sk['code']} {sk['symbol']} not judged: {_safe(sk['reason'], 400)}")
    if result["findings"]:
        lines.append("Findings:")
        for f in result["findings"]:
            nodes = [_safe(n, 80) for n in f["nodes"]]
            where = ", ".join(nodes[:6]) + (f" (+{len(nodes) - 6})" if len(nodes) > 6 else "")
            lines.append(f"  {_safe(f['severity'], 20):<7} {_safe(f['code'], 20)} {_safe(f['symbol'], 60)}: {len(nodes)} node(s): {where}")
            for v in (f.get("variants") or [f])[:3]:
                on = f" (on {', '.join(_safe(n, 80) for n in v['nodes'][:3])}{', ...' if len(v['nodes']) > 3 else ''})" \
                    if f.get("variants") else ""
                if v.get("message"):
                    lines.append(f"          {_safe(v['message'], 400)}{on}")
                if v.get("fix"):
                    lines.append(f"          fix: {_safe(v['fix'], 400)}")
            if len(f.get("variants") or []) > 3:
                lines.append(f"          ... {len(f['variants']) - 3} more variant(s) (--format json)")
    return "\n".join(lines) + "\n"
