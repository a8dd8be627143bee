"""``rocm-smi --showtopo`` and ``--showtoponuma``: how AMD GPUs connect, and their NUMA nodes.

--showtopo prints matrices under "Weight between two GPUs", "Hops between two GPUs", "Link Type
between two GPUs" (XGMI, PCIE) and then the "Numa Nodes" section that --showtoponuma prints alone.
Pastes are often cut off; a matrix is kept only with all of its rows, a NUMA line only when whole.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

_SECTION = re.compile(r"^\s*=+\s*(Weight|Hops|Link Type) between two GPUs\s*=+\s*$")
_ANY_BANNER = re.compile(r"^\s*=+.*=+\s*$")
_NUMA = re.compile(r"^GPU\[(\d+)\]\s*:\s*\(Topology\) Numa (Node|Affinity):\s*(-?\d+)\s*$")
_KEYS = {"Weight": "weight", "Hops": "hops", "Link Type": "link_type"}


def _matrix(rows: List[List[str]], header: List[str], as_int: bool) -> Optional[List[List[Any]]]:
    n = len(header)
    if n == 0 or len(rows) != n or any(len(r) != n + 1 for r in rows):
        return None  # cut off, or not a matrix: keep nothing rather than half
    out = []
    for r in rows:
        cells: List[Any] = []
        for c in r[1:]:
            if as_int:
                cells.append(int(c) if c.isdecimal() else None)
            else:
                cells.append(None if c in ("0", "X") else c)  # the diagonal
        out.append(cells)
    return out


def parse(text: str) -> Dict[str, Any]:
    """{"gpus": n, "weight": [[...]], "hops": [[...]], "link_type": [["XGMI", ...]], "numa_node": {i: n}}.
    Raises ValueError when the text holds neither a whole matrix nor a NUMA line."""
    out: Dict[str, Any] = {}
    section: Optional[str] = None
    header: List[str] = []
    rows: List[List[str]] = []
    numa: Dict[str, int] = {}

    def close() -> None:
        if section:
            m = _matrix(rows, header, as_int=section != "link_type")
            if m is not None:
                out[section] = m

    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            close()
            section, header, rows = _KEYS[m.group(1)], [], []
            continue
        if _ANY_BANNER.match(line):
            close()
            section = None
            continue
        n = _NUMA.match(line.strip())
        if n:
            if n.group(2) == "Node":
                numa[n.group(1)] = int(n.group(3))
            continue
        if section is None:
            continue
        tokens = line.split()
        if tokens and all(re.fullmatch(r"GPU\d+", t) for t in tokens):
            header = tokens
        elif tokens and re.fullmatch(r"GPU\d+", tokens[0]) and header:
            rows.append(tokens)
    close()
    if numa:
        out["numa_node"] = numa
    sizes = {len(v) for k, v in out.items() if k != "numa_node"}
    if not out:
        raise ValueError("no whole topology matrix or NUMA line in rocm-smi output")
    out["gpus"] = max(sizes | {max(int(i) for i in numa) + 1 if numa else 0})
    return out
