"""Whether the kernel counts its clock as synchronised: adjtimex(2) with modes 0 only reads the NTP
state that chronyd, ntpd or systemd-timesyncd keep up to date (no root needed, nothing changed).
The kernel marks the clock unsynchronised (STA_UNSYNC, and the call returns TIME_ERROR) when no
time service has told it otherwise within its error budget; node_exporter's timex collector reads
the same call (node_timex_sync_status)."""

from __future__ import annotations

import ctypes
import os
from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "clock_sync"
TIMEOUT = 1.0

# include/uapi/linux/timex.h (torvalds/linux v6.12): clock states adjtimex returns, status bits.
TIME_ERROR = 5
STA_UNSYNC = 0x0040
STA_NANO = 0x2000
STATES = {0: "TIME_OK", 1: "TIME_INS", 2: "TIME_DEL", 3: "TIME_OOP", 4: "TIME_WAIT", 5: "TIME_ERROR"}
_READ_ONLY = 0   # modes 0: adjtimex reads and sets nothing


class _Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class _Timex(ctypes.Structure):
    # struct timex of include/uapi/linux/timex.h and man 2 adjtimex: longs (__kernel_long_t) and ints
    # in this order, then 11 reserved ints; ctypes pads as the C ABI does (LP64 on x86_64 and aarch64).
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("time", _Timeval), ("tick", ctypes.c_long), ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long),
                ("shift", ctypes.c_int), ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long),
                ("calcnt", ctypes.c_long), ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long),
                ("tai", ctypes.c_int), ("_reserved", ctypes.c_int * 11)]


_RECORDED = ("offset", "freq", "maxerror", "esterror", "status", "constant", "precision", "tolerance", "tick", "tai")


def read_adjtimex() -> Dict[str, Any]:
    """The kernel's NTP state, raw: adjtimex's return value and the struct's fields a judgement needs."""
    try:
        # the interpreter's own symbols hold the C library's: no search for libc.so (find_library runs
        # ldconfig, or a compiler where that is missing) on every check
        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.adjtimex
    except (OSError, AttributeError) as exc:
        raise Missing(f"adjtimex is not available from the C library: {exc}") from None
    buf = _Timex()
    buf.modes = _READ_ONLY
    rc = call(ctypes.byref(buf))
    if rc < 0:
        err = ctypes.get_errno()
        raise Missing(f"adjtimex failed: {os.strerror(err) if err else 'error'}")
    out: Dict[str, Any] = {"rc": int(rc)}
    out.update({name: int(getattr(buf, name)) for name in _RECORDED})
    return out


def timex_facts(raw: Any) -> Dict[str, Any]:
    """Facts from a recorded adjtimex reading (pure): synchronised, the kernel's error estimates in
    seconds, the clock state. Values that are not integers make the reading unknown."""
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), int) and not isinstance(raw.get(k), bool)
                                            for k in ("rc", "status", "maxerror", "esterror")):
        raise ValueError("the reading lacks rc, status, maxerror or esterror as integers")
    rc, status = raw["rc"], raw["status"]
    if rc not in STATES:
        raise ValueError(f"adjtimex returned {rc}, which is no clock state")
    unsync = bool(status & STA_UNSYNC)
    return {
        "synchronised": rc != TIME_ERROR and not unsync,
        "state": STATES[rc],
        "unsync_flag": unsync,
        "status": status,
        # man 2 adjtimex: maxerror and esterror are in microseconds whatever STA_NANO says
        "maxerror_s": raw["maxerror"] / 1e6,
        "esterror_s": raw["esterror"] / 1e6,
        "offset_s": (raw["offset"] / (1e9 if status & STA_NANO else 1e6)) if isinstance(raw.get("offset"), int) else None,
    }


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    try:
        raw = root.probe("adjtimex", read_adjtimex)
    except Missing as exc:
        return {"clock_sync": Unknown(f"the kernel's clock state was not read: {exc}")}
    try:
        return {"clock_sync": timex_facts(raw)}
    except ValueError as exc:
        return {"clock_sync": Unknown(f"the recorded adjtimex reading is not understood: {exc}")}
