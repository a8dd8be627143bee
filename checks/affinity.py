"""Where this process may run: allowed CPUs, cgroup CPU quota and memory limit, SMT, isolation.

The allowed set is what a job step's ranks inherit from Slurm's cgroup and binding, so rules
compare thread counts against it, not against the node's CPU count.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional

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


def _cgroup_v2_dir(root: SysRoot) -> Optional[str]:
    text = root.read_or("/proc/self/cgroup") or ""
    for line in text.splitlines():
        if line.startswith("0::"):
            rel = line[3:].strip()
            return CG + (rel if rel != "/" else "")
    return None


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


def _v1(root: SysRoot) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    q = root.read_or(f"{CG}/cpu/cpu.cfs_quota_us") or root.read_or(f"{CG}/cpu,cpuacct/cpu.cfs_quota_us")
    p = root.read_or(f"{CG}/cpu/cpu.cfs_period_us") or root.read_or(f"{CG}/cpu,cpuacct/cpu.cfs_period_us")
    if q is not None and p is not None:
        try:
            qi, pi = int(q), int(p)
            out["cpu_quota"] = round(qi / pi, 3) if qi > 0 and pi > 0 else None
        except ValueError:
            out["cpu_quota"] = Unknown("cfs quota unparsable")
    m = root.read_or(f"{CG}/memory/memory.limit_in_bytes")
    if m is not None and m.strip().isdecimal():
        # v1 writes a huge page-aligned number for "no limit".
        out["memory_limit_bytes"] = int(m) if int(m) < (1 << 60) else None
    return out


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    cdir = _cgroup_v2_dir(root)
    aff: Dict[str, Any] = _allowed(root, cdir)
    aff["cgroup"] = "v2" if cdir else ("v1" if root.exists(f"{CG}/cpu") or root.exists(f"{CG}/memory")
                                        else Unknown("/proc/self/cgroup not readable"))
    if cdir:
        aff["cpu_quota"] = _quota_v2(root, cdir)
        aff["memory_limit_bytes"] = _memlimit_v2(root, cdir)
    else:
        v1 = _v1(root)
        aff["cpu_quota"] = v1.get("cpu_quota", Unknown("no cgroup CPU controller readable"))
        aff["memory_limit_bytes"] = v1.get("memory_limit_bytes", Unknown("no cgroup memory controller readable"))
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
