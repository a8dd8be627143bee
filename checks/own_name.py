"""Whether this node's own name resolves: getaddrinfo(gethostname()) through the node's resolver
(nsswitch.conf: /etc/hosts, then DNS), as sudo, Java's InetAddress.getLocalHost and MPI launchers ask.
A separate check, with its own time limit, because a lookup that reaches a slow DNS server can wait
seconds: the system check's facts must not wait for it."""

from __future__ import annotations

import socket
from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "own_name"
TIMEOUT = 3.0

# glibc's getaddrinfo answers that say the name has no address (netdb.h): EAI_NONAME, EAI_NODATA
# (glibc's extension), EAI_ADDRFAMILY. EAI_AGAIN and EAI_FAIL say the resolver could not answer: unknown.
_NO_ADDRESS = {getattr(socket, n) for n in ("EAI_NONAME", "EAI_NODATA", "EAI_ADDRFAMILY") if hasattr(socket, n)}


def lookup(host: str) -> Dict[str, Any]:
    """The resolver's answer for ``host``: its addresses, or the gai error that says it has none."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        code = exc.args[0] if exc.args else None
        text = str(exc.args[1] if len(exc.args) > 1 else exc)[:120]
        if code in _NO_ADDRESS:
            return {"resolves": False, "error": text}
        raise Missing(f"the resolver could not answer for {host}: {text}") from None
    except (OSError, UnicodeError) as exc:
        raise Missing(f"getaddrinfo({host}) failed: {exc}") from None
    addrs: list = []
    for info in infos:
        a = str(info[4][0])[:64]
        if a not in addrs:
            addrs.append(a)
    return {"resolves": True, "addresses": addrs[:16]}


def facts_of(host: Any, raw: Any) -> Any:
    """The own_name section from a recorded lookup (pure)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("resolves"), bool):
        return Unknown("the recorded lookup of the host's own name is not understood")
    out: Dict[str, Any] = {"hostname": host, "resolves": raw["resolves"]}
    if raw["resolves"]:
        out["addresses"] = [str(a)[:64] for a in (raw.get("addresses") or [])[:16]]
    else:
        out["error"] = str(raw.get("error") or "")[:120]
    return out


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    host = (root.read_or("/proc/sys/kernel/hostname") or "").strip()
    if not host:
        try:
            host = str(root.probe("hostname", socket.gethostname) or "").strip()
        except Missing:
            host = ""
    if not host or len(host) > 253:
        return {"own_name": Unknown("the host name is unknown")}
    try:
        raw = root.probe("own_name_lookup", lambda: lookup(host))
    except Missing as exc:
        return {"own_name": Unknown(f"the host's own name was not looked up: {exc}")}
    return {"own_name": facts_of(host, raw)}
