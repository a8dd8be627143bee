"""Memory: total, available, transparent huge pages, huge pages, /dev/shm."""

from __future__ import annotations

import os
from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.kv import bracketed_choice, parse_meminfo
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "memory"
TIMEOUT = 2.0
THP = "/sys/kernel/mm/transparent_hugepage"


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
    return {"memory": mem}
