"""NUMA: nodes, their CPUs, memory and distances; automatic NUMA balancing."""

from __future__ import annotations

from typing import Any, Dict, List

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist, parse_cpumask
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


def _node_ids(root: SysRoot) -> List[int]:
    """The online nodes; where a dump kept the node folders but not the ``online`` list (lscpu's
    test dumps copy only node*/cpumap), the folders."""
    try:
        return parse_cpulist(root.read(f"{NODE_DIR}/online"))
    except Missing:
        dirs = [p.rsplit("/", 1)[-1] for p in root.glob(f"{NODE_DIR}/node[0-9]*")]
        ids = sorted(int(d[4:]) for d in dirs if d[4:].isdecimal())
        if not ids:
            raise
        return ids


def _node_cpus(root: SysRoot, base: str) -> Any:
    """A node's CPUs from its ``cpulist``, or its ``cpumap`` mask where the list is missing."""
    try:
        return parse_cpulist(root.read(f"{base}/cpulist"))
    except Missing as exc:
        text = root.read_or(f"{base}/cpumap")
        if text is None:
            return Unknown(str(exc))
        try:
            return parse_cpumask(text)
        except ListFormatError as exc2:
            return Unknown(f"{base}/cpumap: {exc2}")
    except ListFormatError as exc:
        return Unknown(f"{base}/cpulist: {exc}")


def _online_cpus(root: SysRoot) -> Any:
    """The online CPUs: the kernel's list, else the CPUs that have a topology folder (the kernel
    removes it from an offline CPU)."""
    try:
        return set(parse_cpulist(root.read("/sys/devices/system/cpu/online")))
    except (Missing, ListFormatError):
        dirs = [p.rsplit("/", 2)[-2] for p in root.glob("/sys/devices/system/cpu/cpu[0-9]*/topology")]
        return {int(d[3:]) for d in dirs if d[3:].isdecimal()} or None


def _overlaps(nodes: List[Dict[str, Any]]) -> None:
    """A CPU sits in one node; lists that share CPUs (a firmware's broken tables: every node
    listing every CPU) cannot say which, so each such list becomes an Unknown that names them."""
    seen: Dict[int, int] = {}
    clash = set()
    for node in nodes:
        for cpu in node["cpus"] if isinstance(node["cpus"], list) else []:
            if cpu in seen:
                clash.update((seen[cpu], node["id"]))
            seen.setdefault(cpu, node["id"])
    for node in nodes:
        if node["id"] in clash:
            node["cpus"] = Unknown(f"the CPU lists of nodes {', '.join(map(str, sorted(clash)))} overlap")


def _from_sysfs(root: SysRoot) -> Dict[str, Any]:
    ids = _node_ids(root)
    _bounded(ids, f"{NODE_DIR}/online")
    online = _online_cpus(root)
    nodes = []
    for nid in ids:
        base = f"{NODE_DIR}/node{nid}"
        node: Dict[str, Any] = {"id": nid}
        node["cpus"] = cpus = _node_cpus(root, base)
        if isinstance(cpus, list) and online is not None and not set(cpus) <= online:
            # Some kernels keep an offline CPU in its node's list; a job can run only on the others.
            node["cpus"] = [c for c in cpus if c in online]
            node["offline_cpus"] = [c for c in cpus if c not in online]
        mem = parse_meminfo(root.read_or(f"{base}/meminfo", "") or "")
        node["mem_total_bytes"] = mem.get("MemTotal", Unknown(f"{base}/meminfo unreadable"))
        dist = (root.read_or(f"{base}/distance") or "").split()
        node["distances"] = [int(d) for d in dist if d.isdecimal()] or Unknown(f"{base}/distance unreadable")
        nodes.append(node)
    _overlaps(nodes)
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
