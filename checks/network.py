"""Network: RDMA ports (InfiniBand, RoCE), Slingshot (cxi) devices, IP interfaces, NCCL's network
plugin. Read from sysfs; recorded ``ibstat``, ``ibstatus``, ``ibv_devinfo`` and ``fi_info``
outputs are parsed in replays."""

from __future__ import annotations

import os
from typing import Any, Dict, List

from hpcdoctor.facts import Unknown
from hpcdoctor.parse import rdma
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "network"
TIMEOUT = 5.0
IB = "/sys/class/infiniband"
# More RDMA ports than a node has slots for: a recording listing more is refused, not listed one
# fact per port (40,000 pasted ibstat devices were 5 MB of report; issue 27).
MAX_PORTS = 1024
NET = "/sys/class/net"


def _ports_from_sysfs(root: SysRoot) -> List[Dict[str, Any]]:
    ports = []
    for dev in sorted(root.listdir(IB)):
        try:
            port_ids = sorted(root.listdir(f"{IB}/{dev}/ports"), key=lambda p: int(p) if p.isdecimal() else 0)
        except Missing:
            continue
        for p in port_ids:
            base = f"{IB}/{dev}/ports/{p}"
            ports.append({
                "device": dev,
                "port": int(p) if p.isdecimal() else p,
                "state": rdma.port_state(root.read_or(f"{base}/state") or "unknown"),
                "phys_state": rdma.port_state(root.read_or(f"{base}/phys_state") or "unknown"),
                "rate_gbps": rdma.rate_gbps(root.read_or(f"{base}/rate") or ""),
                "link_layer": (root.read_or(f"{base}/link_layer") or "").strip() or None,
            })
    return ports


def _ports(root: SysRoot) -> Any:
    try:
        ports = _ports_from_sysfs(root)
    except Missing as exc:
        sys_reason = str(exc)
    else:
        if len(ports) > MAX_PORTS:
            return Unknown(f"{IB} lists {len(ports)} ports, more than any node has ({MAX_PORTS})"), None
        return ports, "sysfs"
    tools_absent = False
    for argv, parse in ((["ibstat"], rdma.parse_ibstat), (["ibstatus"], rdma.parse_ibstatus),
                        (["ibv_devinfo"], rdma.parse_ibv_devinfo)):
        try:
            res = root.run(argv, timeout=5.0, live=False)
        except Missing:
            continue
        ports = parse(res.stdout)
        if len(ports) > MAX_PORTS:
            return Unknown(f"{' '.join(argv)} lists {len(ports)} ports, more than any node has ({MAX_PORTS})"), None
        if ports:
            return ports, " ".join(argv)
        tools_absent = tools_absent or res.rc == 127
    # No /sys/class/infiniband on a live node (and, in a recording, the tools that confirm it)
    # means no RDMA device; a replay that recorded nothing about it cannot say.
    if root.mode != "replay" or tools_absent:
        return [], "sysfs"
    return Unknown(f"no RDMA information recorded ({sys_reason})"), None


def _interfaces(root: SysRoot) -> Any:
    try:
        names = sorted(root.listdir(NET))
    except Missing as exc:
        return Unknown(str(exc))
    out = []
    for name in names:
        if name == "lo":
            continue
        base = f"{NET}/{name}"
        speed = (root.read_or(f"{base}/speed") or "").strip()
        out.append({
            "name": name,
            "operstate": (root.read_or(f"{base}/operstate") or "unknown").strip(),
            "speed_mbps": int(speed) if speed.lstrip("-").isdecimal() and int(speed) > 0 else None,
            "type": (root.read_or(f"{base}/type") or "").strip() or None,
        })
    return out


def _cxi(root: SysRoot) -> Any:
    try:
        return sorted(root.listdir("/sys/class/cxi"))
    except Missing:
        pass
    try:
        res = root.run(["fi_info", "-p", "cxi"], timeout=5.0, live=False)
    except Missing:
        return []
    domains = sorted({b.get("domain") for b in rdma.parse_fi_info(res.stdout) if b.get("provider") == "cxi" and b.get("domain")})
    if len(domains) > MAX_PORTS:
        return Unknown(f"fi_info lists {len(domains)} cxi devices, more than any node has ({MAX_PORTS})")
    return domains


def _nccl_net_plugin(root: SysRoot, env: Dict[str, str]) -> Any:
    """Where NCCL would find a network plugin (aws-ofi-nccl and others: libnccl-net*.so)."""
    dirs = [d for d in (env.get("LD_LIBRARY_PATH") or "").split(":") if d]
    for d in dirs:
        try:
            names = root.listdir(d)
        except Missing:
            continue
        for n in sorted(names):
            if n.startswith(("libnccl-net", "librccl-net")) and ".so" in n:
                return os.path.join(d, n)
    return None


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    env = root.environ()
    ports, source = _ports(root)
    net: Dict[str, Any] = {"rdma_ports": ports, "rdma_source": source, "interfaces": _interfaces(root),
                           "cxi_devices": _cxi(root), "nccl_net_plugin": _nccl_net_plugin(root, env)}
    if isinstance(ports, list):
        net["rdma_active"] = [f"{p['device']}:{p['port']}" for p in ports if p.get("state") == "ACTIVE"]
    return {"network": net}
