"""The node itself: host name, kernel, OS release, virtualisation."""

from __future__ import annotations

import re
import socket
from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.kv import parse_os_release
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "system"
TIMEOUT = 2.0


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    host = root.read_or("/proc/sys/kernel/hostname")
    if not host:
        try:
            host = root.probe("hostname", socket.gethostname)
        except Missing:
            host = root.environ().get("HOSTNAME")
    out["hostname"] = host.strip() if host else Unknown("hostname not recorded")
    version = root.read_or("/proc/version")
    m = re.match(r"Linux version (\S+)", version or "")
    if m:
        out["kernel"] = m.group(1)
    else:
        try:
            res = root.run(["uname", "-a"], timeout=1.0, live=False)
            parts = res.stdout.split()
            out["kernel"] = parts[2] if res.ok and len(parts) > 2 else Unknown(res.why_failed())
        except Missing as exc:
            out["kernel"] = Unknown(str(exc))
    rel = root.read_or("/etc/os-release")
    if rel is None:
        try:
            res = root.run(["cat", "/etc/os-release"], timeout=1.0, live=False)
            rel = res.stdout if res.ok else None
        except Missing:
            rel = None
    osr = parse_os_release(rel or "")
    out["os"] = osr.get("PRETTY_NAME") or Unknown("/etc/os-release unreadable")
    return {"system": out}
