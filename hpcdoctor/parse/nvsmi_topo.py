"""``nvidia-smi topo -m``: how GPUs and NICs connect, and which CPUs and NUMA node each GPU is
near.

The matrix is read row by row and the header only supplies nothing the rows lack: pasted output
often has collapsed headers ("NIC6NIC7") or tabs turned into spaces, but every device row lists
one link token per device in the same order as the rows, followed for GPUs by CPU affinity, NUMA
affinity and GPU NUMA id.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LINK_WORDS = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|NV\d+|NVB|SOC|CNS|N/A)$")
NIC_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")


def parse(text: str) -> Dict[str, Any]:
    text = ANSI.sub("", text)
    rows: List[List[str]] = []
    nic_names: Dict[str, str] = {}
    for line in text.splitlines():
        m = NIC_LEGEND.match(line)
        if m:
            nic_names[m.group(1)] = m.group(2)
            continue
        tokens = line.split()
        if len(tokens) >= 2 and LINK_WORDS.match(tokens[1]) and not line.startswith((" ", "\t")):
            rows.append(tokens)
    if not rows:
        raise ValueError("no device rows in nvidia-smi topo output")
    names = [r[0] for r in rows]
    n = len(names)
    devices: Dict[str, Any] = {}
    for r in rows:
        links = r[1:1 + n]
        if len(links) < n or not all(LINK_WORDS.match(t) for t in links):
            raise ValueError(f"row {r[0]} has {len(links)} link columns for {n} devices")
        entry: Dict[str, Any] = {"links": {names[j]: links[j] for j in range(n) if names[j] != r[0]}}
        rest = r[1 + n:]
        if r[0].startswith("GPU"):
            entry["cpu_affinity"] = _cpus(rest[0]) if rest else None
            entry["numa_affinity"] = int(rest[1]) if len(rest) > 1 and rest[1].isdecimal() else None
        devices[nic_names.get(r[0], r[0])] = entry
    # rename link targets through the NIC legend too
    for entry in devices.values():
        entry["links"] = {nic_names.get(k, k): v for k, v in entry["links"].items()}
    gpus = [d for d in devices if re.match(r"^GPU\d+$", d)]
    return {"devices": devices, "gpus": gpus, "nics": [d for d in devices if d not in gpus]}


def _cpus(token: str) -> Any:
    try:
        return parse_cpulist(token)
    except ListFormatError:
        return None
