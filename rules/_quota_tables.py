"""Quota tables read from a paste (knowledge/messages/disk_quota.toml): quota(1)'s and lfs quota's
rows with a figure marked "*", and GPFS mmlsquota's rows, judged against their own soft quota, hard
limit and grace. quota-tools prints "none" in the grace column once the grace is spent
(quotasys.c difftime2str); mmlsquota prints "none" under the soft quota and "expired" once spent."""

from __future__ import annotations

import re
from typing import List, Optional

from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import ticket_read

_MARKED = {"disk_quota:quota-row-space-over": "space", "disk_quota:quota-row-files-over": "files"}
_HEADING = ("disk_quota:quota-heading", "disk_quota:quota-columns", "disk_quota:quota-files-over", "disk_quota:quota-blocks-over")
_MMLSQUOTA = "disk_quota:mmlsquota-row"
_NUMBER = re.compile(r"(\d{1,20}(?:\.\d{1,6})?)([KMGTPEkmgt]?)$")


def _amount(text: object) -> Optional[float]:
    """A figure as the tools print it: quota -s's space in K, M, G, T (powers of 1024), its files in
    k, m, g, t (powers of 1000); one row uses one kind, so the comparison needs no more."""
    m = _NUMBER.match(str(text or "").strip())
    if not m:
        return None
    suffix = m.group(2)
    power = " KMGTPE".find(suffix.upper()) if suffix else 0
    return float(m.group(1)) * (1024 if suffix.isupper() else 1000) ** max(power, 0)


def _judge(row: dict, what: str, used: object, soft: object, hard: object, grace: str, spent: str, tool: str) -> Optional[dict]:
    u, s, h = _amount(used), _amount(soft), _amount(hard)
    if u is None:
        return None
    at_hard = bool(h) and u >= h            # a limit of 0 is no limit
    over_soft = bool(s) and u > s
    if not (at_hard or over_soft or (tool != "mmlsquota" and row.get("id") in _MARKED)):
        return None
    blocked = at_hard or grace == spent
    return {"line": row.get("line"), "text": row.get("text"), "fs": row.get("fs"), "what": what, "used": used,
            "soft": soft, "hard": hard, "grace": grace, "tool": tool, "blocked": blocked,
            "why": ("at its hard limit" if at_hard else f"over its soft quota with the grace spent (\"{grace}\")" if blocked
                    else f"over its soft quota, within the grace time ({grace or 'shown empty'})")}


def quota_rows(f: FactView) -> List[dict]:
    """Each pasted quota row over a quota, judged: ``blocked`` where writes (or new files) fail."""
    said = ticket_read(f)
    headed = any(s.get("id") in _HEADING for s in said)
    out = []
    for s in said:
        sid = s.get("id")
        if sid in _MARKED and headed:
            got = _judge(s, _MARKED[sid], s.get("used"), s.get("soft"), s.get("hard"), str(s.get("grace") or ""), "none",
                         "quota")
        elif sid == _MMLSQUOTA:
            got = (_judge(s, "files", s.get("files"), s.get("fsoft"), s.get("fhard"), str(s.get("fgrace") or ""), "expired", "mmlsquota")
                   or _judge(s, "space", s.get("blocks"), s.get("bsoft"), s.get("bhard"), str(s.get("bgrace") or ""), "expired",
                             "mmlsquota"))
        else:
            continue
        if got:
            out.append(got)
    return sorted(out, key=lambda r: (not r["blocked"], r["line"] or 0))


def describe(r: dict) -> str:
    fs = r.get("fs") or "a file system (its name on the line above)"
    what = "the number of files" if r["what"] == "files" else "the space used"
    tool = "mmlsquota" if r["tool"] == "mmlsquota" else "the quota table"
    return f"{tool} (line {r['line']}) shows {what} on {fs} {r['why']}: {r['used']} used, quota {r['soft']}, limit {r['hard']}"
