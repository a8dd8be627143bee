"""``numactl -H`` (``--hardware``)."""

from __future__ import annotations

import re
from typing import Any, Dict, List

_NODE_CPUS = re.compile(r"^node (\d+) cpus:\s*(.*)$")
_NODE_SIZE = re.compile(r"^node (\d+) (size|free):\s*(\d+)\s*MB$")
_MAX_NODES = 1024


def parse_numactl_h(text: str) -> Dict[str, Any]:
    """Nodes with their CPUs, size and free memory (bytes), and the distance matrix.

    Returns {"nodes": {id: {"cpus": [...], "size_bytes": n, "free_bytes": n}}, "distances":
    {id: {id: d}}}. Missing parts are simply absent.
    """
    nodes: Dict[int, Dict[str, Any]] = {}
    distances: Dict[int, Dict[int, int]] = {}
    lines = text.splitlines()
    header: List[int] = []
    in_dist = False
    for raw in lines:
        line = raw.strip()
        m = _NODE_CPUS.match(line)
        if m:
            nodes.setdefault(int(m.group(1)), {})["cpus"] = [int(c) for c in m.group(2).split() if c.isdecimal()]
            continue
        m = _NODE_SIZE.match(line)
        if m:
            nodes.setdefault(int(m.group(1)), {})[f"{m.group(2)}_bytes"] = int(m.group(3)) * 1024 * 1024
            continue
        if line.startswith("node distances"):
            in_dist = True
            continue
        if in_dist:
            if line.startswith("node"):
                header = [int(x) for x in line.split()[1:] if x.isdecimal()]
                if len(header) > _MAX_NODES:
                    header = []  # a matrix past any machine's is not read: one dict entry per cell
                continue
            row = re.match(r"^(\d+):\s*(.*)$", line)
            if row and header:
                vals = [int(x) for x in row.group(2).split() if x.isdecimal()]
                if len(vals) == len(header):
                    distances[int(row.group(1))] = dict(zip(header, vals))
    return {"nodes": nodes, "distances": distances}
