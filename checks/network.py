"""Network: RDMA ports (InfiniBand, RoCE), Slingshot (cxi) devices, IP interfaces, NCCL's network
plugin. Read from sysfs; recorded ``ibstat``, ``ibstatus``, ``ibv_devinfo`` and ``fi_info``
outputs are parsed in replays."""

from __future__ import annotations

import fcntl
import ipaddress
import os
import socket
import struct
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
IF_INET6 = "/proc/net/if_inet6"
MAX_INTERFACES = 1024   # more than any node has: the address probe stops there
SIOCGIFADDR = 0x8915    # include/uapi/linux/sockios.h: an interface's (primary) IPv4 address
_IPV6_SCOPES = {0x00: "global", 0x10: "host", 0x20: "link", 0x40: "site"}   # include/net/ipv6.h IPV6_ADDR_*


def ipv4_addresses(names: List[str]) -> Dict[str, List[str]]:
    """Each interface's IPv4 address from the SIOCGIFADDR ioctl (no root needed); an interface
    without one answers EADDRNOTAVAIL and gets an empty list."""
    out: Dict[str, List[str]] = {}
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError as exc:
        raise Missing(f"no IPv4 socket: {exc.strerror or exc}") from None
    with sock:
        for name in names[:MAX_INTERFACES]:
            req = struct.pack("16s24x", name.encode("utf-8", "replace")[:15])
            try:
                res = fcntl.ioctl(sock.fileno(), SIOCGIFADDR, req)
            except OSError:
                out[name] = []   # EADDRNOTAVAIL: no IPv4 address; ENODEV: gone since listed
                continue
            out[name] = [socket.inet_ntoa(res[20:24])]   # ifr_addr: sockaddr_in after the 16-byte name
    return out


def parse_if_inet6(text: str) -> Dict[str, List[Dict[str, str]]]:
    """/proc/net/if_inet6 (net/ipv6/addrconf.c if6_seq_show: address in 32 hex digits, ifindex,
    prefix length, scope, flags, name) to each interface's addresses with their scope."""
    out: Dict[str, List[Dict[str, str]]] = {}
    for line in text.splitlines()[:16384]:
        f = line.split()
        if len(f) != 6 or len(f[0]) != 32:
            continue
        try:
            addr = str(ipaddress.IPv6Address(bytes.fromhex(f[0])))
            scope = _IPV6_SCOPES.get(int(f[3], 16) & 0xF0, "other")
        except ValueError:
            continue
        out.setdefault(f[5], []).append({"address": addr, "scope": scope})
    return out


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
    names = [n for n in names if n != "lo"]
    try:
        v4: Any = root.probe("ipv4_addresses", lambda: ipv4_addresses(names))
        if not isinstance(v4, dict):
            v4 = Unknown("the recorded IPv4 addresses are not a table")
    except Missing as exc:
        v4 = Unknown(f"IPv4 addresses not read: {exc}")
    text6 = root.read_or(IF_INET6)
    # No if_inet6 on a live node means IPv6 is off (ipv6.disable=1): no IPv6 address anywhere.
    v6: Any = (parse_if_inet6(text6) if text6 is not None else
               {} if root.mode != "replay" else Unknown(f"{IF_INET6} not recorded"))
    for name in names[:MAX_INTERFACES]:
        base = f"{NET}/{name}"
        speed = (root.read_or(f"{base}/speed") or "").strip()
        out.append({
            "name": name,
            "operstate": (root.read_or(f"{base}/operstate") or "unknown").strip(),
            "speed_mbps": int(speed) if speed.lstrip("-").isdecimal() and int(speed) > 0 else None,
            "type": (root.read_or(f"{base}/type") or "").strip() or None,
            "ipv4": [str(a)[:64] for a in v4.get(name) or []][:16] if isinstance(v4, dict) else v4,
            "ipv6": (v6.get(name) or [])[:16] if isinstance(v6, dict) else v6,
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
