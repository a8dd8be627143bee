"""Sizes as programs print them ("530.00 MiB", "7.92GiB", "512B", "4.5 Gb", "201. GiB", "0 bytes"), in GiB.

Every emitter hpcdoctor reads this way counts in powers of 1024 whatever it writes after the
number: torch's format_size() (c10/cuda/CUDACachingAllocator.cpp: KiB, MiB, GiB), TensorFlow's
HumanReadableNumBytes (tsl/platform/numbers.cc: B, KiB, MiB, GiB, TiB), R's "cannot allocate
vector of size 4.5 Gb" (src/main/memory.c: Kb, Mb, Gb of 1024), glibc's and the C++ runtimes' own
figures. So the unit's first letter decides, and an emitter that counts in powers of 1000 (Ray's
"GB" of the object store) keeps its own conversion beside its reader."""

from __future__ import annotations

import re
from typing import Optional

_POWER = {"b": -3, "k": -2, "m": -1, "g": 0, "t": 1, "p": 2, "e": 3}
_SIZE = re.compile(r"^\s*(\d{1,15}(?:\.\d{0,6})?)\s{0,2}([A-Za-z]{1,5})\.?\s*$")


def unit_gib(unit: str) -> Optional[float]:
    """GiB per one of ``unit`` ("MiB", "Gb", "kB", "bytes", "B"), or None for an unknown unit."""
    u = (unit or "").strip().lower()
    if not u or not u.isalpha():
        return None
    if u in ("b", "byte", "bytes"):
        return 2.0 ** -30
    power = _POWER.get(u[0])
    if power is None or u[0] == "b" or u[1:] not in ("", "b", "ib", "iob"):
        return None
    return 1024.0 ** power


def gib(value: float, unit: str) -> Optional[float]:
    """``value`` of ``unit`` in GiB, or None for an unknown unit."""
    per = unit_gib(unit)
    return None if per is None else float(value) * per


def parse_gib(text: str) -> Optional[float]:
    """A size written as number and unit, spaced or not ("530.00 MiB", "7.92GiB", "0 bytes"), in GiB;
    None where it is not one."""
    m = _SIZE.match(text or "")
    return gib(float(m.group(1)), m.group(2)) if m else None
