"""The GPU device nodes this process may open, and whether the dynamic loader can find the NVIDIA
driver's libraries: what a GPU job needs before any driver call, and what a container or a
device node's group can take away while the GPU itself is fine.

Both come from one probe (recorded in snapshots, replayed): os.access answers for this process's
user and groups, which is what the kernel's permission check (the node's mode, owner and group)
decides. A Slurm job's device cgroup is another gate, not seen here: the node's mode allows the
open and the cgroup refuses it (EPERM), which rules tell apart from EACCES.
"""

from __future__ import annotations

import glob
import grp
import os
import re
import stat
from typing import Any, Dict, List, Optional

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "devices"
TIMEOUT = 2.0

# The nodes CUDA opens (nvidiactl and one per GPU; nvidia-uvm for CUDA's unified memory, which the
# runtime needs to initialise), and the AMD ones ROCm opens (/dev/kfd and a render node per GPU).
NODE_GLOBS = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia[0-9]*", "/dev/kfd", "/dev/dri/renderD*")
MAX_NODES = 64
# The sonames a CUDA program and nvidia-smi load from the driver (libcuda's and NVML's).
DRIVER_LIBRARIES = ("libcuda.so.1", "libnvidia-ml.so.1")
# glibc's ld.so looks in LD_LIBRARY_PATH, then in /etc/ld.so.cache, then in its built-in system
# directories (ld.so(8); elf/dl-load.c _dl_map_object). The cache stores each soname as a string.
LD_CACHE = "/etc/ld.so.cache"
SYSTEM_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib")
MAX_CACHE_BYTES = 16 * 1024 * 1024


def _node(path: str) -> Optional[Dict[str, Any]]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISCHR(st.st_mode):
        return None
    try:
        group: Optional[str] = grp.getgrgid(st.st_gid).gr_name
    except (KeyError, OverflowError):
        group = None  # a container's /etc/group may not name the host's group
    return {"path": path, "mode": format(stat.S_IMODE(st.st_mode), "04o"), "uid": st.st_uid, "gid": st.st_gid,
            "group": group, "rw": os.access(path, os.R_OK | os.W_OK)}


def _cache_paths(cache: bytes, soname: str) -> List[str]:
    """The files ld.so.cache names for SONAME: its string table holds each entry's soname and path,
    NUL-terminated, and a path ends in the soname (glibc elf/cache.c)."""
    found = re.finditer(rb"(/[\x21-\x7e]{1,250}/" + re.escape(soname.encode()) + rb")\0", cache)
    return sorted({m.group(1).decode("ascii", "replace") for m in found})[:8]


def _found_by_loader(soname: str, ld_library_path: str, cache: Optional[bytes]) -> Optional[str]:
    for d in [p for p in ld_library_path.split(":") if p] + list(SYSTEM_DIRS):
        candidate = os.path.join(d, soname)
        if os.path.exists(candidate):
            return candidate
    if cache is not None and soname.encode() + b"\0" in cache:
        # A cache entry whose file is gone (a driver removed without ldconfig, a library hidden from
        # a container) is no library: the loader opens the path the cache gives and fails.
        paths = _cache_paths(cache, soname)
        existing = [p for p in paths if os.path.exists(p)]
        if existing:
            return existing[0]
        return None if paths else LD_CACHE
    return None


def live_probe() -> Dict[str, Any]:
    nodes: List[Dict[str, Any]] = []
    for pattern in NODE_GLOBS:
        for path in sorted(glob.glob(pattern)):
            found = _node(path)
            if found and len(nodes) < MAX_NODES:
                nodes.append(found)
    try:
        with open(LD_CACHE, "rb") as fh:
            cache: Optional[bytes] = fh.read(MAX_CACHE_BYTES)
    except OSError:
        cache = None
    ld_path = os.environ.get("LD_LIBRARY_PATH", "")
    libs = {s: _found_by_loader(s, ld_path, cache) for s in DRIVER_LIBRARIES}
    # Where each link leads: the CUDA toolkit's stub libcuda.so (lib64/stubs) behind a libcuda.so.1
    # made for it on LD_LIBRARY_PATH is the driver's name on a placeholder.
    targets = {s: os.path.realpath(p) for s, p in libs.items() if p and p != LD_CACHE}
    return {"euid": os.geteuid(), "groups": sorted(set(os.getgroups()) | {os.getegid()}), "nodes": nodes,
            "ld_cache_read": cache is not None, "driver_libraries": libs, "driver_library_targets": targets}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    try:
        data = root.probe("devices", live_probe)
    except Missing as exc:
        return {"devices": Unknown(str(exc))}
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        return {"devices": Unknown("the recorded devices probe is not in the shape this hpcdoctor reads")}
    nodes = [n for n in data["nodes"] if isinstance(n, dict) and isinstance(n.get("path"), str)]
    nvidia = [n for n in nodes if n["path"].startswith("/dev/nvidia")]
    out: Dict[str, Any] = {
        "euid": data.get("euid"),
        "groups": data.get("groups") if isinstance(data.get("groups"), list) else [],
        "nodes": nodes,
        "nvidia_nodes": len(nvidia),
        # One per GPU (/dev/nvidia0, /dev/nvidia1...): nvidiactl alone is the driver's, not a GPU given to this process.
        "nvidia_gpu_nodes": sum(1 for n in nvidia if re.fullmatch(r"/dev/nvidia[0-9]{1,3}", n["path"])),
        "nvidia_denied": [n for n in nvidia if n.get("rw") is False],
        "amd_denied": [n for n in nodes if n.get("rw") is False and not n["path"].startswith("/dev/nvidia")],
    }
    libs = data.get("driver_libraries")
    if isinstance(libs, dict) and (data.get("ld_cache_read") or any(libs.values())):
        out["driver_libraries"] = {k: v for k, v in libs.items() if k in DRIVER_LIBRARIES}
        targets = data.get("driver_library_targets")
        if isinstance(targets, dict):  # recorded since 2026-11-28
            out["driver_library_targets"] = {k: v for k, v in targets.items()
                                             if k in DRIVER_LIBRARIES and isinstance(v, str)}
    else:
        # No cache to read and nothing found on the paths: whether the loader would find them is unknown.
        out["driver_libraries"] = Unknown(f"{LD_CACHE} could not be read, and no driver library is on LD_LIBRARY_PATH")
    return {"devices": out}
