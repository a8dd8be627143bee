"""``hpcdoctor diff A B``: what differs between two nodes, good against bad.

A and B are snapshots (folders or .tar.gz) or JSON reports. Facts are compared leaf by leaf;
counters that move on their own (free memory, clocks, temperatures, power draw, timings) are left
out so that the differences that remain are the ones that explain something.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

from hpcdoctor import jsonbound
from hpcdoctor.facts import iter_paths
from hpcdoctor.sysroot import SnapshotError, read_capped

# Leaves that differ between any two runs, even on the same node (torch.chosen_by and own_python say
# how hpcdoctor was run, not what the node is).
VOLATILE = re.compile(
    r"(available_bytes|free_bytes|memory_used_mib|\.clocks\.(sm|mem)_mhz$|temperature_c|power_draw_w|"
    r"duration_s|elapsed_s|generated_at|^system\.hostname$|\.uuid$|\.serial$|\.processes|clock_event_reasons|"
    r"^env\.vars\.(SLURM_JOB_ID|SLURM_JOBID|SLURM_STEP_ID|SLURM_PROCID|SLURM_LOCALID|SLURM_NODEID|HOSTNAME|"
    r"SLURMD_NODENAME|SLURM_TOPOLOGY_ADDR|SLURM_TASK_PID|SLURM_JOB_START_TIME|SLURM_JOB_END_TIME)$|"
    r"^bench\.|\.import_s$|\.cuda_init_s$|^torch\.chosen_by$|^torch\.own_python\.)")


ABSENT = "(absent)"
# A report is a few hundred KB; a file far bigger is not one, and is refused before it is parsed.
MAX_REPORT_BYTES = 64 * 1024 * 1024
# Items of a changed list shown on the terminal; --format json keeps them all.
MAX_LIST_CHANGES = 50
# Why a vendor's tools gave nothing, in words that depend on how the node was read (live: "is not
# installed"; a snapshot: "was not recorded"). That one side failed is a difference; the wording
# of two failures is not.
WORDING = re.compile(r"^(nvidia|amd)\.(error|fallback_reason)$")


def load_report(path: str) -> Dict[str, Any]:
    """A JSON report as written by --format json, or a snapshot diagnosed now."""
    p = Path(path)
    if p.is_file() and not str(path).endswith((".tar.gz", ".tgz")):
        try:
            data = read_capped(p, MAX_REPORT_BYTES)
        except OSError as exc:
            raise SnapshotError(f"{path}: {exc.strerror or exc}") from None
        if data is None:
            raise SnapshotError(f"{path}: larger than any report ({MAX_REPORT_BYTES >> 20} MiB)")
        try:
            doc = jsonbound.loads(data.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError) as exc:
            raise SnapshotError(f"{path}: neither a snapshot nor a JSON report ({exc})") from None
        if not isinstance(doc, dict) or "schema_version" not in doc or "facts" not in doc:
            raise SnapshotError(f"{path}: a JSON file, but not an hpcdoctor report")
        return doc
    from hpcdoctor import engine, pipeline
    from hpcdoctor.runner import Options
    from hpcdoctor.snapshot.bundle import open_snapshot

    rules, _ = engine.load_rules()
    with open_snapshot(str(path)) as root:
        return pipeline.document(root, Options(), rules, source={"mode": "replay", "path": str(path)})


def compare(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    major = lambda d: str(d.get("schema_version", "?")).split(".")[0]  # noqa: E731
    if major(a) != major(b):
        raise SnapshotError(f"the reports have different schema versions ({a.get('schema_version')} and "
                            f"{b.get('schema_version')}): compare reports of one hpcdoctor major version")
    fa = dict(iter_paths(a.get("facts", {})))
    fb = dict(iter_paths(b.get("facts", {})))
    facts: List[Tuple[str, Any, Any]] = []
    for key in sorted(set(fa) | set(fb)):
        if VOLATILE.search(key):
            continue
        va, vb = fa.get(key, ABSENT), fb.get(key, ABSENT)
        if WORDING.search(key) and ABSENT not in (va, vb):
            continue
        if va != vb:
            facts.append((key, va, vb))
    ka = {(f["code"], f.get("subject")): f for f in a.get("findings", [])}
    kb = {(f["code"], f.get("subject")): f for f in b.get("findings", [])}
    return {
        "facts": [{"path": k, "a": va, "b": vb} for k, va, vb in facts],
        "only_a": [ka[k] for k in sorted(set(ka) - set(kb), key=str)],
        "only_b": [kb[k] for k in sorted(set(kb) - set(ka), key=str)],
    }


def render_text(result: Dict[str, Any], a_name: str, b_name: str) -> str:
    def short(v: Any) -> str:
        s = json.dumps(v) if not isinstance(v, str) else v
        return s if len(s) <= 70 else s[:67] + "..."

    def change(a: Any, b: Any) -> str:
        if isinstance(a, list) and isinstance(b, list) and all(not isinstance(x, (dict, list)) for x in a + b):
            # Sets, not lists, for membership: two 40,000-CPU lists took minutes compared pairwise.
            in_a, in_b = set(a), set(b)
            marks = [f"+{x}" for x in b if x not in in_a] + [f"-{x}" for x in a if x not in in_b]
            if len(marks) > MAX_LIST_CHANGES:
                marks = marks[:MAX_LIST_CHANGES] + [f"(and {len(marks) - MAX_LIST_CHANGES} more)"]
            return " ".join(marks) or "reordered"
        return f"{short(a)}  ->  {short(b)}"

    lines = [f"A = {a_name}", f"B = {b_name}", ""]
    if result["facts"]:
        lines.append(f"{len(result['facts'])} fact(s) differ:")
        for d in result["facts"]:
            lines.append(f"  {d['path']}: {change(d['a'], d['b'])}")
    else:
        lines.append("the facts agree (volatile counters aside)")
    for key, label in (("only_a", "only in A"), ("only_b", "only in B")):
        for f in result[key]:
            subject = f" [{f['subject']}]" if f.get("subject") else ""
            lines.append(f"{label}: {f['severity']} {f['code']} {f['symbol']}{subject}: {f['message']}")
    return "\n".join(lines) + "\n"
