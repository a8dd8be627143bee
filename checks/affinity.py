"""Where this process may run: allowed CPUs, cgroup CPU quota and memory limit, SMT, isolation.

The allowed set is what a job step's ranks inherit from Slurm's cgroup and binding, so rules
compare thread counts against it, not against the node's CPU count.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist
from hpcdoctor.parse.kv import parse_status
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "affinity"
TIMEOUT = 2.0
CG = "/sys/fs/cgroup"


def _live_affinity() -> Dict[str, Any]:
    if not hasattr(os, "sched_getaffinity"):
        raise Missing("sched_getaffinity is not available on this platform")
    return {"allowed_cpus": sorted(os.sched_getaffinity(0))}


def _allowed(root: SysRoot, cgroup_dir: Optional[str]) -> Dict[str, Any]:
    try:
        return {**root.probe("sched_getaffinity", _live_affinity), "allowed_source": "sched_getaffinity"}
    except Missing:
        pass
    status = parse_status(root.read_or("/proc/self/status") or "")
    if status.get("Cpus_allowed_list"):
        try:
            return {"allowed_cpus": parse_cpulist(status["Cpus_allowed_list"]),
                    "allowed_source": "/proc/self/status"}
        except ListFormatError:
            pass
    for path in filter(None, [cgroup_dir and f"{cgroup_dir}/cpuset.cpus.effective", f"{CG}/cpuset.cpus.effective"]):
        text = root.read_or(path)
        if text and text.strip():
            try:
                return {"allowed_cpus": parse_cpulist(text), "allowed_source": path}
            except ListFormatError:
                continue
    return {"allowed_cpus": Unknown("no affinity probe, /proc/self/status or cpuset recorded")}


def _cgroup_lines(root: SysRoot) -> Tuple[Optional[str], Dict[str, str]]:
    """/proc/self/cgroup read: the v2 path ("0::" line) and each v1 controller's path. A host in
    systemd's hybrid mode has both, and its controllers are v1's: its v2 tree
    (/sys/fs/cgroup/unified) holds none, so the v1 paths are the ones that limit the process."""
    v2, v1 = None, {}
    for line in (root.read_or("/proc/self/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and not parts[1]:
            v2 = parts[2].strip()
        else:
            for ctl in parts[1].split(","):
                if ctl and not ctl.startswith("name="):
                    v1[ctl] = parts[2].strip()
    return v2, v1


def _cgroup_v2_dir(root: SysRoot) -> Optional[str]:
    rel, v1 = _cgroup_lines(root)
    if rel is None or any(c in v1 for c in ("cpu", "memory", "pids", "cpuset")):
        return None
    return CG + (rel if rel != "/" else "")


def _quota_v2(root: SysRoot, cdir: str) -> Any:
    text = root.read_or(f"{cdir}/cpu.max")
    if text is None:
        return Unknown(f"{cdir}/cpu.max unreadable")
    parts = text.split()
    if len(parts) == 2 and parts[0] != "max" and parts[0].isdecimal() and parts[1].isdecimal() and int(parts[1]):
        return round(int(parts[0]) / int(parts[1]), 3)
    return None  # no quota


def _memlimit_v2(root: SysRoot, cdir: str) -> Any:
    text = root.read_or(f"{cdir}/memory.max")
    if text is None:
        return Unknown(f"{cdir}/memory.max unreadable")
    text = text.strip()
    return int(text) if text.isdecimal() else None


def _count(text: Optional[str]) -> Optional[int]:
    t = (text or "").strip()
    return int(t) if t.isdecimal() else None


def _pids_levels(root: SysRoot, cdir: str, top: str) -> Any:
    """The pids controller from this process's cgroup up to the root's child: every level that sets
    a limit or counts refused forks (pids.events "max": forks refused because a limit was hit; since
    Linux 6.12 counted where the limit is, before that where the forking task was). A limit set on
    an ancestor (systemd's user-UID.slice TasksMax, a job's cgroup) binds everything below it."""
    levels = []
    here = cdir
    while here.startswith(top + "/"):
        pmax = root.read_or(f"{here}/pids.max")
        if pmax is not None:
            events = root.read_or(f"{here}/pids.events") or ""
            refused = next((_count(ln.split()[1]) for ln in events.splitlines()
                            if ln.split()[:1] == ["max"] and len(ln.split()) == 2), None)
            limit = _count(pmax)
            current = _count(root.read_or(f"{here}/pids.current"))
            if limit is not None or refused:
                levels.append({"cgroup": here[len(top):], "max": limit, "current": current, "refused": refused or 0})
        here = here.rsplit("/", 1)[0]
    if not levels and root.read_or(f"{cdir}/pids.current") is None and cdir != top:
        return Unknown(f"{cdir}/pids.current unreadable (not recorded, or no pids controller there)")
    return levels


def _v1_dir(controller: str, rel: str) -> List[str]:
    rel = "" if rel in ("", "/") else rel
    if controller == "cpu":   # mounted as cpu,cpuacct on most distributions, with cpu a link to it
        return [f"{CG}/cpu{rel}", f"{CG}/cpu,cpuacct{rel}"]
    return [f"{CG}/{controller}{rel}"]


def _v1(root: SysRoot) -> Dict[str, Any]:
    """cgroup v1 (and hybrid hosts): the limits of this process's own cgroup in each hierarchy, as
    /proc/self/cgroup names it (a Slurm job's /slurm/uid_U/job_J/step_S), not the hierarchy's root."""
    _, paths = _cgroup_lines(root)
    out: Dict[str, Any] = {}
    for cdir in _v1_dir("cpu", paths.get("cpu", "/")):
        q, p = root.read_or(f"{cdir}/cpu.cfs_quota_us"), root.read_or(f"{cdir}/cpu.cfs_period_us")
        if q is None or p is None:
            continue
        try:
            qi, pi = int(q), int(p)
            out["cpu_quota"] = round(qi / pi, 3) if qi > 0 and pi > 0 else None
        except ValueError:
            out["cpu_quota"] = Unknown("cfs quota unparsable")
        break
    mdir = _v1_dir("memory", paths.get("memory", "/"))[0]
    # memory.stat's hierarchical_memory_limit is the tightest limit of the cgroup and its ancestors
    stat = root.read_or(f"{mdir}/memory.stat") or ""
    limit = next((ln.split()[1] for ln in stat.splitlines() if ln.startswith("hierarchical_memory_limit ")), None)
    m = limit or root.read_or(f"{mdir}/memory.limit_in_bytes")
    if m is not None and m.strip().isdecimal():
        # v1 writes a huge page-aligned number for "no limit".
        out["memory_limit_bytes"] = int(m) if int(m) < (1 << 60) else None
    if "pids" in paths:
        out["pids_limits"] = _pids_levels(root, _v1_dir("pids", paths["pids"])[0], f"{CG}/pids")
    return out


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    cdir = _cgroup_v2_dir(root)
    aff: Dict[str, Any] = _allowed(root, cdir)
    aff["cgroup"] = "v2" if cdir else ("v1" if root.exists(f"{CG}/cpu") or root.exists(f"{CG}/memory")
                                        else Unknown("/proc/self/cgroup not readable"))
    if cdir:
        aff["cpu_quota"] = _quota_v2(root, cdir)
        aff["memory_limit_bytes"] = _memlimit_v2(root, cdir)
        aff["pids_limits"] = _pids_levels(root, cdir, CG)
    else:
        v1 = _v1(root)
        aff["cpu_quota"] = v1.get("cpu_quota", Unknown("no cgroup CPU controller readable"))
        aff["memory_limit_bytes"] = v1.get("memory_limit_bytes", Unknown("no cgroup memory controller readable"))
        aff["pids_limits"] = v1.get("pids_limits", Unknown("no cgroup pids files readable (not recorded, or no pids controller)"))
    smt = root.read_or("/sys/devices/system/cpu/smt/active")
    aff["smt_active"] = (smt.strip() == "1") if smt is not None else Unknown("/sys/devices/system/cpu/smt/active unreadable")
    iso = root.read_or("/sys/devices/system/cpu/isolated")
    try:
        aff["isolated_cpus"] = parse_cpulist(iso) if iso is not None else Unknown("isolated CPU list unreadable")
    except ListFormatError as exc:
        aff["isolated_cpus"] = Unknown(str(exc))
    allowed = aff.get("allowed_cpus")
    aff["allowed_count"] = len(allowed) if isinstance(allowed, list) else Unknown("allowed CPUs unknown")
    return {"affinity": aff}
