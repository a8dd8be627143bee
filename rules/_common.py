"""Small helpers shared by rule modules (not rules themselves: the loader skips _modules)."""

from __future__ import annotations

import re
from typing import Optional

from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import version_of  # noqa: F401  (the rules' name for it)


def parse_threads(value: Optional[str]) -> Optional[int]:
    """OMP_NUM_THREADS may be a nested list ("8,2"); the first level is this process's team."""
    if value is None:
        return None
    m = re.match(r"^\s*(\d+)\s*(?:,|$)", value)
    return int(m.group(1)) if m else None


def local_ranks(f: FactView) -> int:
    """Ranks sharing this node, from the scheduler or the launcher; 1 when nothing says."""
    for path in ("scheduler.tasks_per_node", "scheduler.launcher_local_world_size"):
        n = f.get(path)
        if isinstance(n, int) and n > 0:
            return n
    return 1


def in_slurm_step_or_job(f: FactView) -> bool:
    return f.get("scheduler.kind") == "slurm"


def ticket_symptoms(f: FactView) -> dict:
    """The messages found in a pasted ticket (knowledge/symptoms.toml), by id, first match each;
    empty on a live node or a snapshot."""
    found = {}
    for s in f.get("ticket.symptoms") or []:
        found.setdefault(s["id"], s)
    return found


def ticket_all(f: FactView, sid: str) -> list:
    """Every match of one symptom (catalogue entries with all = true: listings, one line each)."""
    return [s for s in f.get("ticket.symptoms") or [] if s["id"] == sid]


def ticket_evidence(s: dict) -> dict:
    return {"ticket.line": s.get("line"), "ticket.text": str(s.get("text", ""))[:160]}
