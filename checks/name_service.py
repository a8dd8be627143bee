"""Which sources the node's name service (glibc NSS) asks for users and groups, and which directory
clients are set up beside it: /etc/nsswitch.conf's passwd and group lines (nsswitch.conf(5)) and
the files and pid files of sssd, nslcd and winbindd. A directory client that is set up but absent
from those lines (or placed after an action that stops the lookup first) answers sssctl and
getent -s, while id, ssh logins and a scheduler's getpwnam find none of its users."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import SysRoot

NAME = "name_service"
TIMEOUT = 1.0

NSSWITCH = "/etc/nsswitch.conf"
DATABASES = ("passwd", "group")
# nsswitch.conf(5): the status words an [action] item can test
_STATUSES = {"SUCCESS", "NOTFOUND", "UNAVAIL", "TRYAGAIN"}
_LINE = re.compile(r"^[ \t]{0,40}([a-z_]{1,40})[ \t]{0,40}:(.{0,2000})$")
_ACTION = re.compile(r"(!?)([A-Za-z]{1,10})=([A-Za-z]{1,10})")
# The directory clients a site sets up, the NSS service each answers through, and what shows each
# is set up: its configuration file (written by realm join, authselect or the site) or its pid file
# (the daemons' default paths: sssd's PIDFILE_PATH, nslcd's and winbindd's on Debian and RHEL).
CLIENTS = {
    "sss": ("sssd", ("/etc/sssd/sssd.conf",), ("/run/sssd.pid", "/var/run/sssd.pid")),
    "ldap": ("nslcd", ("/etc/nslcd.conf",), ("/run/nslcd/nslcd.pid", "/var/run/nslcd/nslcd.pid")),
    "winbind": ("winbindd", (), ("/run/samba/winbindd.pid", "/var/run/samba/winbindd.pid", "/run/winbindd.pid")),
}


def _stops_unknown(action: str) -> bool:
    """Whether an [action] item ends the lookup when the service before it does not know the name
    (status NOTFOUND): [NOTFOUND=return], or a negated test of another status ([!SUCCESS=return])."""
    for neg, status, act in _ACTION.findall(action):
        status, act = status.upper(), act.lower()
        if status not in _STATUSES or act != "return":
            continue
        if (not neg and status == "NOTFOUND") or (neg and status != "NOTFOUND"):
            return True
    return False


def parse_nsswitch(text: str) -> Dict[str, Dict[str, List[str]]]:
    """Each database line's services, and those a lookup of a name the earlier services do not know
    reaches (pure). compat's passwd_compat and group_compat lines name the services compat uses."""
    out: Dict[str, Dict[str, List[str]]] = {}
    for raw in text.splitlines()[:2000]:
        line = raw.split("#", 1)[0].rstrip()
        m = _LINE.match(line)
        if not m:
            continue
        db, spec = m.group(1), m.group(2)
        services: List[str] = []
        reached: List[str] = []
        stopped = False
        for item in re.findall(r"\[[^\]]{0,200}\]|[^\s\[]{1,60}", spec)[:40]:
            if item.startswith("["):
                stopped = stopped or _stops_unknown(item[1:-1])
                continue
            services.append(item)
            if not stopped:
                reached.append(item)
        out[db] = {"services": services, "reached": reached}
    for db in DATABASES:
        compat = out.get(f"{db}_compat")
        if db in out and compat and "compat" in out[db]["reached"]:
            out[db]["reached"] = out[db]["reached"] + [s for s in compat["reached"] if s not in out[db]["reached"]]
    return out


def _running(root: SysRoot, daemon: str, pidfiles: tuple) -> Optional[str]:
    for path in pidfiles:
        pid = (root.read_or(path) or "").strip()
        if pid.isdigit() and (root.read_or(f"/proc/{pid}/comm") or "").strip() == daemon:
            return f"{daemon} running (pid {pid}, {path})"
    return None


def facts_of(nsswitch: str, clients: Dict[str, str]) -> Dict[str, Any]:
    """The name_service section from nsswitch.conf's text and the clients found set up (pure)."""
    parsed = parse_nsswitch(nsswitch)
    out: Dict[str, Any] = {"clients": dict(clients)}
    for db in DATABASES:
        entry = parsed.get(db)
        # nsswitch.conf(5): a database without a line is looked up in files (glibc 2.26 and later)
        out[db] = entry or {"services": ["files"], "reached": ["files"], "default": True}
    out["unreached"] = {svc: [db for db in DATABASES if svc not in out[db]["reached"]]
                        for svc in clients if any(svc not in out[db]["reached"] for db in DATABASES)}
    return out


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    text = root.read_or(NSSWITCH)
    if text is None:
        # absent and unreadable stay unknown: a snapshot or paste that did not record the file says
        # nothing of it, and a host without one (musl, a minimal container) has no NSS to judge
        return {"name_service": Unknown(f"{NSSWITCH} was not read")}
    clients: Dict[str, str] = {}
    for svc, (daemon, confs, pidfiles) in CLIENTS.items():
        conf = next((c for c in confs if root.exists(c)), None)
        seen = _running(root, daemon, pidfiles) or (f"{conf} present" if conf else None)
        if seen:
            clients[svc] = seen
    return {"name_service": facts_of(text, clients)}
