"""Health-check output for Slurm's HealthCheckProgram and LBNL NHC: one line, the drain reason.

hpcdoctor never calls scontrol: the wrapper (NHC's ``die``, or the site's script) drains the node
with the line printed here. Only errors make a node unhealthy: a warning or an advice is about
how a job is set up, not about the node. A check that matters and could not give its facts (a hung
nvidia-smi, a check stopped by the budget) drains too: a missing signal is not a healthy one. The
site may keep an unknown GPU from draining (``[health] unknown_gpu = "warn"``): it is then said
on stderr.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from hpcdoctor import verdict
from hpcdoctor.report.safe import term

PREFIX = "hpcdoctor:"
MAX_REASON = 220  # Slurm truncates long reasons in sinfo; keep the cause in front


def _draining_unknowns(doc: Dict[str, Any], config: Optional[Dict[str, Any]]) -> List[Dict[str, str]]:
    warn_only = verdict.unknown_gpu_policy(config) == "warn"
    return [u for u in doc.get("unchecked", []) if not (warn_only and u["area"] == "gpu")]


def health_line(doc: Dict[str, Any], config: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The drain reason, or None for a healthy node."""
    errors = [f for f in doc.get("findings", []) if f["severity"] == "error"]
    unknowns = _draining_unknowns(doc, config)
    if errors:
        first = errors[0]
        subject = f"{first['subject']}: " if first.get("subject") else ""
        more = len(errors) - 1 + len(unknowns)
        line = f"{PREFIX} {first['code']} {first['symbol']}: {subject}{first['message']}"
        line += f" (+{more} more)" if more else ""
    elif unknowns:
        line = f"{PREFIX} could not check {verdict.summary_line(unknowns)}"
    else:
        return None
    # Slurm stores the reason and sinfo prints it to admins' terminals: one line, no controls.
    line = term(line)
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"


def health_notes(doc: Dict[str, Any], config: Optional[Dict[str, Any]] = None) -> List[str]:
    """stderr lines for what could not be checked but does not drain by the site's choice."""
    kept = _draining_unknowns(doc, config)
    return [f"{PREFIX} warning: could not check {verdict.summary_line([u])} (not draining: "
            "[health] unknown_gpu = \"warn\")" for u in doc.get("unchecked", []) if u not in kept]
