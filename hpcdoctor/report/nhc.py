"""Health-check output for Slurm's HealthCheckProgram and LBNL NHC: one line, the drain reason.

hpcdoctor never calls scontrol: the wrapper (NHC's ``die``, or the site's script) drains the node
with the line printed here. Only errors make a node unhealthy: a warning or an advice is about
how a job is set up, not about the node.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from hpcdoctor.report.safe import term

PREFIX = "hpcdoctor:"
MAX_REASON = 220  # Slurm truncates long reasons in sinfo; keep the cause in front


def health_line(doc: Dict[str, Any]) -> Optional[str]:
    errors = [f for f in doc.get("findings", []) if f["severity"] == "error"]
    if not errors:
        return None
    first = errors[0]
    subject = f"{first['subject']}: " if first.get("subject") else ""
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    # Slurm stores the reason and sinfo prints it to admins' terminals: one line, no controls.
    line = term(f"{PREFIX} {first['code']} {first['symbol']}: {subject}{first['message']}{more}")
    return line if len(line) <= MAX_REASON else line[: MAX_REASON - 1] + "…"
