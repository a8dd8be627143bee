"""The lock files of torch C++/CUDA extension builds (torch.utils.cpp_extension load()/load_inline()):
one file named lock in each extension's build folder, created (O_CREAT|O_EXCL, its descriptor kept open)
by the process that builds it and removed when that build ends. A lock no process holds open and older
than a build takes was left by a build that was killed, and every later load() of that extension waits
on it forever, silently (torch's FileBaton.wait). Read where torch would build: TORCH_EXTENSIONS_DIR, else
$XDG_CACHE_HOME or ~/.cache, /torch_extensions/<py>_<cu>/<name>/lock (torch 2.13.0 cpp_extension.py
_get_build_directory and get_default_build_root)."""

from __future__ import annotations

import os
import stat
import time
from typing import Any, Dict, List, Optional, Set

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "torch_extensions"
TIMEOUT = 2.0
MAX_LOCKS = 256         # a root with more build folders is read in part and said so
SCAN_BUDGET_S = 1.0     # walking /proc for holders stops here: a partial walk is unknown, never "nobody holds it"


def extension_roots(env: Dict[str, str]) -> List[str]:
    """Where torch builds extensions for this environment: TORCH_EXTENSIONS_DIR as set (folders named for
    each extension directly under it), else the default root (a <py>_<cu> folder first)."""
    if env.get("TORCH_EXTENSIONS_DIR"):
        return [env["TORCH_EXTENSIONS_DIR"]]
    cache = env.get("XDG_CACHE_HOME") or (os.path.join(env["HOME"], ".cache") if env.get("HOME") else "")
    return [os.path.join(cache, "torch_extensions")] if cache else []


def _locks_under(root: str, limit: int) -> List[str]:
    """root/<name>/lock and root/<py_cu>/<name>/lock, the two places torch puts a build folder."""
    found: List[str] = []
    for top in sorted(os.listdir(root)):
        first = os.path.join(root, top)
        if not os.path.isdir(first) or os.path.islink(first):
            continue
        for inner in [first] + sorted(os.path.join(first, n) for n in os.listdir(first)):
            lock = os.path.join(inner, "lock")
            if os.path.lexists(lock):
                found.append(lock)
                if len(found) >= limit:
                    return found
    return found


def _held(paths: Set[str], uid: int, deadline: float) -> Optional[Set[str]]:
    """Which of ``paths`` a process of the user has open (a build in progress holds its lock's
    descriptor); None when the walk of /proc ran out of time."""
    held: Set[str] = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        if time.monotonic() > deadline:
            return None
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target in paths:
                    held.add(target)
        except OSError:
            continue   # ended while read, or not readable: it holds nothing we can see
    return held


def scan_locks(roots: List[str], now: Optional[float] = None, proc: bool = True) -> Dict[str, Any]:
    """Each lock file under the extension roots with its age (seconds since its last change) and
    whether a process of this user on this node holds it open; ``proc`` False leaves holders unread."""
    now = time.time() if now is None else now
    uid = os.getuid()
    locks: List[Dict[str, Any]] = []
    read: List[str] = []
    complete = True
    for root in roots:
        if not os.path.isdir(root):
            continue
        read.append(root)
        paths = _locks_under(root, MAX_LOCKS - len(locks))
        complete = complete and len(locks) + len(paths) < MAX_LOCKS
        for path in paths:
            try:
                st = os.lstat(path)
            except OSError:
                continue   # removed between the listing and now: a build that just ended
            if stat.S_ISREG(st.st_mode):
                locks.append({"path": path, "age_s": round(max(0.0, now - st.st_mtime), 1),
                              "mine": st.st_uid == uid})
    held = _held({x["path"] for x in locks}, uid, time.monotonic() + SCAN_BUDGET_S) if locks and proc else set()
    for x in locks:
        x["held"] = None if held is None or not proc else x["path"] in held
    return {"roots": roots, "roots_found": read, "locks": locks, "complete": complete}


def live_locks() -> Dict[str, Any]:
    """The live probe: the roots from this process's environment (the job's), then their locks."""
    env = dict(os.environ)
    if not env.get("HOME"):
        env["HOME"] = os.path.expanduser("~")
    roots = extension_roots(env)
    if not roots:
        raise Missing("neither TORCH_EXTENSIONS_DIR, XDG_CACHE_HOME nor a home directory is known")
    try:
        return scan_locks(roots)
    except OSError as exc:
        raise Missing(f"{exc.filename or roots[0]} not read: {exc.strerror or exc}") from None


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    try:
        return {"torch_extensions": root.probe("torch_extension_locks", live_locks)}
    except Missing as exc:
        return {"torch_extensions": {"locks": Unknown(f"torch extension locks not read: {exc}")}}
