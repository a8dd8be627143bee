"""NUMA: nodes, their CPUs, memory and distances; automatic NUMA balancing."""

from __future__ import annotations

from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist
from hpcdoctor.parse.kv import parse_meminfo
from hpcdoctor.parse.numactl import parse_numactl_h
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "numa"
TIMEOUT = 3.0
NODE_DIR = "/sys/devices/system/node"
# A bound, not a figure about hardware: a recording with more nodes is refused rather than read,
# as each node brings a row of distances to every other (100,000 pasted nodes printed 21 MB).
MAX_NODES = 1024


def _bounded(ids, source: str) -> None:
    if len(ids) > MAX_NODES:
        raise Missing(f"{source} lists {len(ids)} NUMA nodes, more than hpcdoctor reads ({MAX_NODES})")


def _from_sysfs(root: SysRoot) -> Dict[str, Any]:
    ids = parse_cpulist(root.read(f"{NODE_DIR}/online"))
    _bounded(ids, f"{NODE_DIR}/online")
    nodes = []
    for nid in ids:
        base = f"{NODE_DIR}/node{nid}"
        node: Dict[str, Any] = {"id": nid}
        try:
            node["cpus"] = parse_cpulist(root.read(f"{base}/cpulist"))
        except (Missing, ListFormatError) as exc:
            node["cpus"] = Unknown(str(exc))
        mem = parse_meminfo(root.read_or(f"{base}/meminfo", "") or "")
        node["mem_total_bytes"] = mem.get("MemTotal", Unknown(f"{base}/meminfo unreadable"))
        dist = (root.read_or(f"{base}/distance") or "").split()
        node["distances"] = [int(d) for d in dist if d.isdecimal()] or Unknown(f"{base}/distance unreadable")
        nodes.append(node)
    return {"nodes": nodes, "source": "sysfs"}


def _from_numactl(root: SysRoot) -> Dict[str, Any]:
    res = root.run(["numactl", "-H"], timeout=2.0, live=False)
    if not res.ok:
        raise Missing(res.why_failed())
    parsed = parse_numactl_h(res.stdout)
    if not parsed["nodes"]:
        raise Missing("numactl -H printed no nodes")
    ids = sorted(parsed["nodes"])
    _bounded(ids, "numactl -H")
    nodes = []
    for nid in ids:
        n = parsed["nodes"][nid]
        row = parsed["distances"].get(nid)
        nodes.append({
            "id": nid,
            "cpus": n.get("cpus", Unknown("numactl gave no CPU list")),
            "mem_total_bytes": n.get("size_bytes", Unknown("numactl gave no size")),
            "distances": [row[j] for j in ids] if row and all(j in row for j in ids) else Unknown("no distances"),
        })
    return {"nodes": nodes, "source": "numactl -H"}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    try:
        numa = _from_sysfs(root)
    except (Missing, ListFormatError) as sys_exc:
        try:
            numa = _from_numactl(root)
        except Missing as cmd_exc:
            numa = {"nodes": Unknown(f"{sys_exc}; {cmd_exc}")}
    nodes = numa["nodes"]
    numa["count"] = len(nodes) if isinstance(nodes, list) else Unknown("NUMA nodes unknown")
    bal = root.read_or("/proc/sys/kernel/numa_balancing")
    numa["balancing"] = (bal.strip() not in ("0", "")) if bal is not None else Unknown(
        "/proc/sys/kernel/numa_balancing unreadable (kernel without NUMA balancing?)")
    return {"numa": numa}
