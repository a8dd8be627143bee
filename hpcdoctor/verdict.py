"""What could not be checked, and whether that leaves the verdict open.

An area (a check's facts) *matters* on a node when its absence would let a problem through unseen:

- ``cpu`` and ``affinity`` always (every thread and placement rule stands on them);
- ``gpu`` whenever the GPU facts are unknown: the GPU checks already turn "no GPU on the bus and
  no driver stack" into the fact "no GPUs", so an Unknown means GPUs are on the PCI bus, a vendor
  tool is installed and failed or hung, the check did not finish, or the site config expects GPUs;
- ``python`` (the torch stack) when the user named an interpreter (``--python``) or asked for the
  deep depth: then the run was about that interpreter.

A pasted text is not a node: what it does not contain is listed as "what was read", not here.

Each reporter says "no findings in what could be checked" and lists these; ``check`` exits
``EXIT_INCOMPLETE`` when nothing at or above ``--fail-on`` was found but one of them is unknown
(``--fail-on never`` exits 0); ``nhc`` prints a drain reason line for them, except an unknown GPU
when the site config says ``[health] unknown_gpu = "warn"``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

AREAS = (
    ("cpu", ("cpu",), "CPU model and flags"),
    ("affinity", ("affinity",), "the CPUs this process may run on"),
    ("gpu", ("gpus",), "the GPUs"),
    ("python", ("torch",), "the job's Python and torch stack"),
)
UNKNOWN_GPU_POLICIES = ("drain", "warn")


def _section_reason(unknown: Dict[str, Any], facts: Dict[str, Any], section: str) -> Optional[str]:
    if section in unknown:
        return str(unknown[section])
    if section not in facts:
        return "not gathered"
    return None


def unchecked(doc: Dict[str, Any], python_named: bool = False) -> List[Dict[str, str]]:
    """The areas that matter on this node and did not give their facts, each with the reason."""
    if (doc.get("source") or {}).get("mode") == "paste":
        return []
    facts, unknown = doc.get("facts") or {}, doc.get("unknown") or {}
    out: List[Dict[str, str]] = []
    for area, sections, what in AREAS:
        if area == "python" and not (python_named or doc.get("depth") == "deep"):
            continue
        reasons = [r for r in (_section_reason(unknown, facts, s) for s in sections) if r]
        if reasons:
            out.append({"area": area, "what": what, "reason": "; ".join(reasons)})
    return out


def unknown_gpu_policy(config: Optional[Dict[str, Any]]) -> str:
    return str(((config or {}).get("health") or {}).get("unknown_gpu") or "drain")


def summary_line(items: List[Dict[str, str]], limit: int = 0) -> str:
    """'gpu (nvidia-smi timed out); cpu (stopped by the 0.01s budget)'."""
    text = "; ".join(f"{u['area']} ({u['reason']})" for u in items)
    if limit and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
