"""Shared memory the user's processes left behind: POSIX segments (files in /dev/shm, which shm_open
creates and only shm_unlink or a reboot removes) that no process of the user has open or mapped, and
System V segments (/proc/sysvipc/shm) of the user with no process attached. A program that crashes
leaves both; they hold memory and /dev/shm room until removed. /dev/shm's size is the memory check's
(memory.shm_size_bytes), read once there."""

from __future__ import annotations

import os
import stat
import time
from typing import Any, Dict, List

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "shm_segments"
TIMEOUT = 2.0
SHM_DIR = "/dev/shm"
MAX_FILES = 4096        # a /dev/shm with more entries is read in part and said so
SCAN_BUDGET_S = 1.2     # walking /proc stops here: a partial walk is unknown, never "nothing held"


def _held_paths(uid: int, deadline: float) -> Any:
    """/dev/shm paths the user's processes have open (fd) or mapped (maps); None when the walk ran
    out of time. Other users' processes cannot be read and cannot hold the user's 0600 files."""
    held = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        if time.monotonic() > deadline:
            return None
        base = f"/proc/{pid}"
        try:
            if os.stat(base).st_uid != uid:
                continue
            for fd in os.listdir(f"{base}/fd"):
                target = os.readlink(f"{base}/fd/{fd}")
                if target.startswith(SHM_DIR + "/"):
                    held.add(target.replace(" (deleted)", ""))
            with open(f"{base}/maps", encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    at = line.find(SHM_DIR + "/")
                    if at >= 0:
                        held.add(line[at:].rstrip("\n").replace(" (deleted)", ""))
        except OSError:
            continue   # the process ended while read, or is not readable: it holds nothing we can see
    return held


def posix_orphans() -> Dict[str, Any]:
    """The user's regular files in /dev/shm and which of them no process of the user holds."""
    deadline = time.monotonic() + SCAN_BUDGET_S
    uid = os.getuid()
    mine: Dict[str, int] = {}
    seen = 0
    try:
        with os.scandir(SHM_DIR) as it:
            for entry in it:
                seen += 1
                if seen > MAX_FILES:
                    break
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(st.st_mode) and st.st_uid == uid:
                    mine[entry.path] = st.st_blocks * 512   # what tmpfs holds, not the sparse length
    except OSError as exc:
        raise Missing(f"{SHM_DIR}: {exc.strerror or exc}") from None
    held = _held_paths(uid, deadline) if mine else set()
    if held is None:
        raise Missing(f"the processes holding {SHM_DIR} files were not all read within {SCAN_BUDGET_S:g} s")
    orphans = sorted(((p, b) for p, b in mine.items() if p not in held), key=lambda x: -x[1])
    return {"uid": uid, "files": len(mine), "complete": seen <= MAX_FILES,
            "orphans": len(orphans), "orphan_bytes": sum(b for _, b in orphans),
            "largest": [{"path": p, "bytes": b} for p, b in orphans[:8]]}


def parse_sysvipc_shm(text: str, uid: int) -> Dict[str, Any]:
    """/proc/sysvipc/shm (ipc/shm.c sysvipc_shm_proc_show: a header row, then one row per segment)
    reduced to the user's segments with no process attached (nattch 0)."""
    lines = [ln.split() for ln in text.splitlines() if ln.strip()]
    if not lines or "shmid" not in lines[0]:
        raise ValueError("no header")
    col = {name: i for i, name in enumerate(lines[0])}
    need = ("shmid", "size", "nattch", "uid")
    if any(n not in col for n in need):
        raise ValueError("columns missing")
    segs: List[Dict[str, int]] = []
    for row in lines[1:4097]:
        try:
            rec = {n: int(row[col[n]]) for n in need}
        except (IndexError, ValueError):
            continue
        if rec["uid"] == uid and rec["nattch"] == 0:
            segs.append(rec)
    return {"orphans": len(segs), "orphan_bytes": sum(s["size"] for s in segs),
            "shmids": [s["shmid"] for s in sorted(segs, key=lambda s: -s["size"])[:8]]}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    try:
        out["posix"] = root.probe("shm_posix_orphans", posix_orphans)
    except Missing as exc:
        out["posix"] = Unknown(f"/dev/shm not read: {exc}")
    text = root.read_or("/proc/sysvipc/shm")
    uid = out["posix"].get("uid") if isinstance(out["posix"], dict) else None
    if text is None or not isinstance(uid, int):
        out["sysv"] = Unknown("/proc/sysvipc/shm unreadable" if text is None else "the user's uid was not read")
    else:
        try:
            out["sysv"] = parse_sysvipc_shm(text, uid)
        except ValueError as exc:
            out["sysv"] = Unknown(f"/proc/sysvipc/shm not understood: {exc}")
    return {"shm_segments": out}
