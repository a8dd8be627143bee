"""Memory: total, available, the commit limit and overcommit mode, transparent huge pages, huge
pages, /dev/shm, and the host DRAM errors the kernel's EDAC drivers have counted."""

from __future__ import annotations

import os
from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.kv import bracketed_choice, parse_meminfo
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "memory"
TIMEOUT = 2.0
THP = "/sys/kernel/mm/transparent_hugepage"
# One mcN directory per memory controller an EDAC driver manages, each with the correctable (CE)
# and uncorrectable (UE) errors counted since the driver loaded (the kernel's ABI:
# Documentation/ABI/testing/sysfs-devices-edac, read at torvalds/linux 2cc2c3cb on 2026-11-26).
EDAC_MC = "/sys/devices/system/edac/mc"


def _statvfs(path: str) -> Dict[str, int]:
    try:
        st = os.statvfs(path)
    except OSError as exc:
        raise Missing(f"{path}: {exc.strerror or exc}") from None
    return {"size_bytes": st.f_blocks * st.f_frsize, "free_bytes": st.f_bavail * st.f_frsize}


def _shm_from_mounts(root: SysRoot) -> Dict[str, Any]:
    # Replays of snapshots without the statvfs probe: tmpfs carries its size in the options.
    for line in (root.read_or("/proc/mounts") or "").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "/dev/shm":
            for opt in parts[3].split(","):
                if opt.startswith("size="):
                    return {"size_bytes": _kib_option(opt[5:])}
    raise Missing("/dev/shm size not recorded")


def _kib_option(value: str) -> int:
    units = {"k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4}
    v = value.strip().lower()
    if v and v[-1] in units:
        return int(float(v[:-1]) * units[v[-1]])
    return int(v)


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    info = parse_meminfo(root.read("/proc/meminfo"))
    mem: Dict[str, Any] = {
        "total_bytes": info.get("MemTotal", Unknown("no MemTotal in /proc/meminfo")),
        "available_bytes": info.get("MemAvailable", Unknown("no MemAvailable in /proc/meminfo")),
        "hugepages_total": info.get("HugePages_Total", 0),
        "hugepage_size_bytes": info.get("Hugepagesize", Unknown("no Hugepagesize")),
    }
    # Swap, for node-memory-taken-by-other-jobs: a node whose swap is used up as well as its memory
    # has nothing left for a new job (proc(5): SwapTotal, SwapFree; 0 where no swap is configured).
    mem["swap_total_bytes"] = info.get("SwapTotal", Unknown("no SwapTotal in /proc/meminfo"))
    mem["swap_free_bytes"] = info.get("SwapFree", Unknown("no SwapFree in /proc/meminfo"))
    # The commit accounting vm.overcommit_memory=2 enforces (Documentation/mm/overcommit-accounting.rst:
    # "strict overcommit": no mapping beyond CommitLimit, which Committed_AS counts against).
    mem["commit_limit_bytes"] = info.get("CommitLimit", Unknown("no CommitLimit in /proc/meminfo"))
    mem["committed_as_bytes"] = info.get("Committed_AS", Unknown("no Committed_AS in /proc/meminfo"))
    raw = (root.read_or("/proc/sys/vm/overcommit_memory") or "").strip()
    mem["overcommit_memory"] = int(raw) if raw in ("0", "1", "2") else Unknown("/proc/sys/vm/overcommit_memory unreadable")
    for key in ("enabled", "defrag"):
        raw = root.read_or(f"{THP}/{key}")
        mem[f"thp_{key}"] = (bracketed_choice(raw) if raw else None) or Unknown(f"{THP}/{key} unreadable")
    try:
        shm = root.probe("statvfs_dev_shm", lambda: _statvfs("/dev/shm"))
    except Missing as exc:
        try:
            shm = _shm_from_mounts(root)
        except (Missing, ValueError):
            shm = {"size_bytes": Unknown(f"/dev/shm: {exc}")}
    mem["shm_size_bytes"] = shm.get("size_bytes", Unknown("no size"))
    mem["edac"] = _edac(root)
    return {"memory": mem}


def _edac(root: SysRoot) -> Any:
    """Correctable and uncorrectable host memory errors per memory controller; Unknown where no
    EDAC driver is loaded (no mc directories: a VM, or a kernel without the platform's driver),
    since no count is then no evidence of healthy memory."""
    controllers = []
    for path in root.glob(f"{EDAC_MC}/mc*"):
        name = path.rsplit("/", 1)[-1]
        if not name[2:].isdigit():
            continue
        counts: Dict[str, Any] = {"mc": name}
        for key in ("ce_count", "ue_count"):
            raw = (root.read_or(f"{path}/{key}") or "").strip()
            counts[key] = int(raw) if raw.isdigit() else Unknown(f"{path}/{key} unreadable")
        controllers.append(counts)
    if not controllers:
        return Unknown(f"no EDAC memory controller under {EDAC_MC} (no EDAC driver loaded, or not readable)")
    return {"controllers": controllers}
