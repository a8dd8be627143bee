"""Limits of the system a job meets before its program does: free space and free inodes on the file
systems a run writes to ($HOME, the working directory, the temporary directory, the caches of
Hugging Face, torch, Triton, pip and conda), one entry per file system, and the process and thread
limit (RLIMIT_NPROC) every thread of the user counts against."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "limits"
TIMEOUT = 2.0


def write_dirs(env: Dict[str, str]) -> List[Tuple[str, str]]:
    """(role, path) of each directory a run writes to, from the job's environment, with each
    tool's documented default where its variable is unset (huggingface_hub: $HF_HOME, else
    $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface; torch.hub: $TORCH_HOME, else
    ~/.cache/torch; Triton: $TRITON_CACHE_DIR, else ~/.triton/cache; pip: $PIP_CACHE_DIR, else
    ~/.cache/pip; conda: the first of $CONDA_PKGS_DIRS). The working directory is added by the probe."""
    home = env.get("HOME") or ""
    xdg = env.get("XDG_CACHE_HOME") or (f"{home}/.cache" if home else "")
    out: List[Tuple[str, str]] = []

    def add(role: str, path: Optional[str]) -> None:
        if path and path.startswith("/"):
            out.append((role, path))

    add("HOME", home)
    add("TMPDIR", env.get("TMPDIR") or "/tmp")
    add("HF_HOME", env.get("HF_HOME") or (f"{xdg}/huggingface" if xdg else None))
    add("TORCH_HOME", env.get("TORCH_HOME") or (f"{xdg}/torch" if xdg else None))
    add("TRITON_CACHE_DIR", env.get("TRITON_CACHE_DIR") or (f"{home}/.triton/cache" if home else None))
    add("PIP_CACHE_DIR", env.get("PIP_CACHE_DIR") or (f"{xdg}/pip" if xdg else None))
    add("CONDA_PKGS_DIRS", (env.get("CONDA_PKGS_DIRS") or "").split(",")[0].strip() or None)
    return out


def _existing(path: str) -> str:
    """The path itself or its nearest existing parent: a cache not yet created will be created there."""
    p = os.path.normpath(path)
    while p != "/" and not os.path.exists(p):
        p = os.path.dirname(p)
    return p


def statvfs_dirs(dirs: List[Tuple[str, str]]) -> List[Dict[str, Any]]:
    """One record per file system (by st_dev) holding any of ``dirs`` and the working directory:
    the roles and paths on it, its size and what an unprivileged user may still use of it."""
    try:
        dirs = [("working directory", os.getcwd())] + list(dirs)
    except OSError:
        pass
    by_dev: Dict[int, Dict[str, Any]] = {}
    for role, path in dirs:
        where = _existing(path)
        try:
            dev = os.stat(where).st_dev
            st = os.statvfs(where)
        except OSError as exc:
            by_dev.setdefault(-len(by_dev) - 1, {"roles": [role], "paths": [path], "error": exc.strerror or str(exc)})
            continue
        if dev in by_dev:
            by_dev[dev]["roles"].append(role)
            by_dev[dev]["paths"].append(path)
            continue
        # f_files == 0: the file system keeps no inode count (btrfs, some network file systems).
        by_dev[dev] = {"roles": [role], "paths": [path], "mount_probe": where,
                       "size_bytes": st.f_blocks * st.f_frsize, "free_bytes": st.f_bavail * st.f_frsize,
                       "total_inodes": st.f_files or None, "free_inodes": st.f_favail if st.f_files else None}
    return list(by_dev.values())


def _rlimit_nproc() -> Dict[str, Any]:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard, "uid": os.getuid()}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    env = root.environ()
    try:
        out["filesystems"] = root.probe("statvfs_write_dirs", lambda: statvfs_dirs(write_dirs(env)))
    except Missing as exc:
        out["filesystems"] = Unknown(f"free space not read: {exc}")
    try:
        out["nproc"] = root.probe("rlimit_nproc", _rlimit_nproc)
    except Missing as exc:
        out["nproc"] = Unknown(f"RLIMIT_NPROC not read: {exc}")
    return {"limits": out}
