"""The node itself: host name and the addresses /etc/hosts gives it, kernel, OS release, virtualisation,
Yama's ptrace scope, the perf_event_paranoid level, the clock source the kernel reads time from."""

from __future__ import annotations

import re
import socket
from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.kv import parse_os_release
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "system"
TIMEOUT = 2.0


def _recorded_uname(root: SysRoot) -> list:
    """Fields of a recorded ``uname -a`` (sysname nodename release ...), for replays."""
    try:
        res = root.run(["uname", "-a"], timeout=1.0, live=False)
    except Missing:
        return []
    return res.stdout.split() if res.ok else []


def _addresses_in(text: str, host: str) -> list:
    """The addresses hosts(5) text (address, canonical name, aliases; # starts a comment) gives ``host``
    or its first label, in file order."""
    names = {host.lower(), host.split(".")[0].lower()}
    found: list = []
    for line in text.splitlines()[:4096]:
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 2 and names & {n.lower() for n in fields[1:]} and fields[0][:64] not in found:
            found.append(fields[0][:64])
    return found[:16]


def _read_hosts(host: str) -> list:
    # Read inside the probe, so that a snapshot records only this node's addresses, not the cluster's
    # whole host table (as limits.statvfs_dirs reads mountinfo).
    try:
        with open("/etc/hosts", errors="replace") as fh:
            return _addresses_in(fh.read(1 << 20), host)
    except OSError as exc:
        raise Missing(f"/etc/hosts: {exc.strerror or exc}") from None


def _hosts_addresses(root: SysRoot, host: Any) -> Any:
    """The addresses /etc/hosts gives this node's name: Debian's installer writes "127.0.1.1 <hostname>",
    which makes a multi-node job's rendezvous (Gloo, MPI launchers) advertise the loopback address."""
    if not isinstance(host, str) or not host:
        return Unknown("the host name is unknown")
    try:
        found = root.probe("hosts_addresses", lambda: _read_hosts(host))
        return [str(a)[:64] for a in found[:16]] if isinstance(found, list) else Unknown("the recorded addresses are not a list")
    except Missing as exc:
        text = root.read_or("/etc/hosts")   # a fixture or bundle that holds the file itself
        return _addresses_in(text, host) if text is not None else Unknown(f"/etc/hosts not read: {exc}")


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    uname = _recorded_uname(root)
    host = root.read_or("/proc/sys/kernel/hostname")
    if not host:
        try:
            host = root.probe("hostname", socket.gethostname)
        except Missing:
            host = root.environ().get("HOSTNAME") or (uname[1] if len(uname) > 1 else None)
    out["hostname"] = host.strip() if host else Unknown("hostname not recorded")
    m = re.match(r"Linux version (\S+)", root.read_or("/proc/version") or "")
    if m:
        out["kernel"] = m.group(1)
    else:
        out["kernel"] = uname[2] if len(uname) > 2 else Unknown("neither /proc/version nor uname recorded")
    rel = root.read_or("/etc/os-release")
    if rel is None:
        try:
            res = root.run(["cat", "/etc/os-release"], timeout=1.0, live=False)
            rel = res.stdout if res.ok else None
        except Missing:
            rel = None
    osr = parse_os_release(rel or "")
    out["os"] = osr.get("PRETTY_NAME") or Unknown("/etc/os-release unreadable")
    out["hostname_addresses"] = _hosts_addresses(root, out["hostname"])
    # Yama's ptrace scope (the kernel's Documentation/admin-guide/LSM/Yama.rst): 0 any process of the
    # same user, 1 descendants or a PR_SET_PTRACER grant, 2 CAP_SYS_PTRACE only, 3 none. MPI's
    # single-copy transfers between ranks (CMA: process_vm_readv) obey it.
    scope = (root.read_or("/proc/sys/kernel/yama/ptrace_scope") or "").strip()
    out["ptrace_scope"] = int(scope) if scope.isdigit() else Unknown(
        "/proc/sys/kernel/yama/ptrace_scope not readable (no Yama module, or not recorded)")
    # kernel.perf_event_paranoid (Documentation/admin-guide/sysctl/kernel.rst): which performance
    # events a process without CAP_PERFMON may open. Recorded as a fact; a rule reads it only beside
    # a counter tool's refusal, since 2 is the kernel's default and most jobs never count events.
    paranoid = (root.read_or("/proc/sys/kernel/perf_event_paranoid") or "").strip()
    out["perf_event_paranoid"] = int(paranoid) if re.fullmatch(r"-?[0-9]{1,3}", paranoid) else Unknown(
        "/proc/sys/kernel/perf_event_paranoid not readable (no perf events in this kernel, or not recorded)")
    # fs.inotify limits (inotify(7), /proc/sys/fs/inotify): watches and instances per user, node-wide.
    # The kernel's default max_user_watches is 1% of low memory over INOTIFY_WATCH_COST, clamped to
    # [8192, 1048576] since Linux 5.11 (8192 before); max_user_instances is 128.
    inotify: Dict[str, Any] = {}
    for name in ("max_user_watches", "max_user_instances"):
        raw = (root.read_or(f"/proc/sys/fs/inotify/{name}") or "").strip()
        inotify[name] = int(raw) if re.fullmatch(r"[0-9]{1,10}", raw) else Unknown(
            f"/proc/sys/fs/inotify/{name} not readable (no inotify in this kernel, or not recorded)")
    out["inotify"] = inotify
    out["clocksource"] = _clocksource(root)
    out["nvidia_profiling_admin_only"] = _profiling_admin_only(root)
    # The module makes /proc/driver/nvidia when it loads: its params file says the kernel driver is
    # there, whatever the device nodes of this process's /dev say. Absent is no proof of the opposite
    # (not recorded, a /proc without it).
    out["nvidia_module_loaded"] = True if root.read_or(_NV_PARAMS) is not None else Unknown(
        f"{_NV_PARAMS} not readable (no NVIDIA driver loaded, or not recorded)")
    out["secure_boot"] = _secure_boot(root)
    out["lockdown"] = _lockdown(root)
    out["logind"] = _logind(root)
    return {"system": out}


# systemd-logind's configuration (logind.conf(5), "CONFIGURATION DIRECTORIES AND PRECEDENCE"): the
# main file is the first of these that exists; drop-ins (*.conf in logind.conf.d/ beside each) are
# read after it in the lexicographic order of their names, whatever their folder, a name in /etc
# hiding the same name elsewhere; the last assignment wins. Defaults are compiled in: the shipped
# main file lists them commented out ("#KillUserProcesses=no"), which is the only place a node says
# its build's default. /run/systemd/users/ exists while logind runs and tracks users.
_LOGIND_DIRS = ("/etc/systemd", "/run/systemd", "/usr/local/lib/systemd", "/usr/lib/systemd")
_LOGIND_SETTING = re.compile(r"^[ \t]*(?P<commented>[#;][ \t]*)?(?P<key>KillUserProcesses|KillExcludeUsers)[ \t]*=[ \t]*"
                             r"(?P<value>[^\n]{0,400}?)[ \t]*$", re.M)
_BOOLEAN = {"1": True, "yes": True, "y": True, "true": True, "t": True, "on": True,
            "0": False, "no": False, "n": False, "false": False, "f": False, "off": False}


def _logind(root: SysRoot) -> Any:
    main = next(((d, text) for d in _LOGIND_DIRS
                 if (text := root.read_or(f"{d}/logind.conf")) is not None), None)
    drop_ins: Dict[str, str] = {}
    for d in reversed(_LOGIND_DIRS):   # /etc last: its names hide the others'
        try:
            names = root.listdir(f"{d}/logind.conf.d")
        except Missing:
            continue
        for name in names:
            if name.endswith(".conf"):
                drop_ins[name] = f"{d}/logind.conf.d/{name}"
    if main is None and not drop_ins:
        return Unknown("no logind.conf in " + ", ".join(_LOGIND_DIRS) + " (no systemd-logind, or not recorded)")
    files = ([(f"{main[0]}/logind.conf", main[1])] if main else []) + \
        [(path, root.read_or(path) or "") for _name, path in sorted(drop_ins.items())]
    kill: Any = None
    where = None
    exclude = ["root"]
    for path, text in files:
        for m in _LOGIND_SETTING.finditer(text[:65536]):
            if m.group("commented"):
                if m.group("key") == "KillUserProcesses" and kill is None and path.endswith("/logind.conf") \
                        and m.group("value").lower() in _BOOLEAN:
                    kill, where = _BOOLEAN[m.group("value").lower()], f"{path} (the build's default, commented)"
                continue
            if m.group("key") == "KillUserProcesses" and m.group("value").lower() in _BOOLEAN:
                kill, where = _BOOLEAN[m.group("value").lower()], path
            elif m.group("key") == "KillExcludeUsers":
                exclude = m.group("value").split() if m.group("value") else []
    return {"kill_user_processes": kill if kill is not None else Unknown(
                "logind.conf sets no KillUserProcesses and shows no commented default: the build's default is unknown"),
            "set_in": where or Unknown("not set"), "exclude_users": exclude[:64],
            "running": _logind_running(root)}


def _logind_running(root: SysRoot) -> Any:
    """Whether logind tracks users (/run/systemd/users/ exists), read through /run/systemd's listing:
    a snapshot records listings, so one taken before this was read says Unknown, not False."""
    try:
        return "users" in root.listdir("/run/systemd")
    except Missing as exc:
        return Unknown(f"/run/systemd not listed: {exc} (no systemd, or not recorded)")


# The firmware's SecureBoot variable (UEFI spec, EFI_GLOBAL_VARIABLE 8be4df61-93ca-11d2-aa0d-00e098032b8c)
# through efivarfs, whose files (mode 0644, readable without root) hold the 4 bytes of the variable's
# attributes, then its data (the kernel's Documentation/filesystems/efivarfs.rst): one byte, 1 when the
# machine booted with Secure Boot on. mokutil --sb-state and shim-signed's update-secureboot-policy read
# the same variable. No efivars directory: not booted through UEFI (no Secure Boot), or not recorded.
_SECURE_BOOT = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


def _secure_boot(root: SysRoot) -> Any:
    raw = root.read_or(_SECURE_BOOT)
    if raw is None or len(raw) < 5:
        return Unknown(f"{_SECURE_BOOT} not readable (not booted through UEFI, efivarfs not mounted, or not recorded)")
    return {1: True, 0: False}.get(ord(raw[4]), Unknown(f"{_SECURE_BOOT} holds {ord(raw[4])}, neither 0 nor 1"))


# The kernel's lockdown state (security/lockdown/lockdown.c lockdown_read: "none [integrity]
# confidentiality", the one in force in brackets); the file was 0600 in its first release (5.4), 0644 since.
_LOCKDOWN = "/sys/kernel/security/lockdown"


def _lockdown(root: SysRoot) -> Any:
    m = re.search(r"\[(none|integrity|confidentiality)\]", root.read_or(_LOCKDOWN) or "")
    return m.group(1) if m else Unknown(f"{_LOCKDOWN} not readable (no lockdown LSM, root only on this kernel, or not recorded)")


# The NVIDIA kernel module's parameters, one "Name: value" line each (a recorded H100 node's file is
# tests/fixtures/nodes/h100-kvm-1gpu/fs/proc/driver/nvidia/params): RmProfilingAdminOnly is the module
# option NVreg_RestrictProfilingToAdminUsers, 1 keeping the GPU performance counters to administrators.
_NV_PARAMS = "/proc/driver/nvidia/params"
_ADMIN_ONLY = re.compile(r"^RmProfilingAdminOnly: ([0-9]{1,3})[ \t]{0,8}$", re.M)


def _profiling_admin_only(root: SysRoot) -> Any:
    text = root.read_or(_NV_PARAMS)
    if text is None:
        return Unknown(f"{_NV_PARAMS} not readable (no NVIDIA driver loaded, or not recorded)")
    m = _ADMIN_ONLY.search(text[:65536])
    return m.group(1) != "0" if m else Unknown(f"{_NV_PARAMS} has no RmProfilingAdminOnly line")


_CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0"


def _clocksource(root: SysRoot) -> Any:
    """The clock source timekeeping reads (current_clocksource) and those it could (available_clocksource),
    as the kernel's Documentation/ABI/testing/sysfs-devices-system-clocksource describes them."""
    current = (root.read_or(f"{_CLOCKSOURCE}/current_clocksource") or "").strip()
    if not re.fullmatch(r"[\w.-]{1,64}", current):
        return Unknown(f"{_CLOCKSOURCE}/current_clocksource not readable (not recorded, or no sysfs)")
    available = (root.read_or(f"{_CLOCKSOURCE}/available_clocksource") or "").split()
    return {"current": current, "available": [a[:64] for a in available[:16]]}
