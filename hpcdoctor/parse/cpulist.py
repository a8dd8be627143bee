"""Kernel CPU lists ("0-3,8,10-11") and hex masks ("ff,ffffffff")."""

from __future__ import annotations

from typing import Iterable, List


# The largest CPU count Linux is built for is 8192 (x86 MAXSMP, powerpc; arm64 stops at 4096);
# this leaves room for larger machines yet keeps a hostile list ("400 ranges of 65,537" in 7 KB)
# from costing gigabytes: the cap is on the whole list, not only on each range.
MAX_CPUS = 1 << 16


class ListFormatError(ValueError):
    pass


def parse_cpulist(text: str) -> List[int]:
    """Parse a cpulist such as ``0-3,8,10-11`` (also ``0-7:2`` stride form). Empty means none."""
    text = _trim(text)
    if not text:
        return []
    cpus = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        stride = 1
        if ":" in part:
            part, _, s = part.partition(":")
            stride = _int(s)
            if stride <= 0:
                raise ListFormatError(f"bad stride in {text!r}")
        if "-" in part:
            lo_s, _, hi_s = part.partition("-")
            lo, hi = _int(lo_s), _int(hi_s)
            if hi < lo or hi - lo > MAX_CPUS:
                raise ListFormatError(f"bad range {part!r}")
            cpus.update(range(lo, hi + 1, stride))
        else:
            cpus.add(_int(part))
        if len(cpus) > MAX_CPUS:
            raise ListFormatError(f"CPU list names more than {MAX_CPUS} CPUs: not a real machine's")
    return sorted(cpus)


def parse_cpumask(text: str) -> List[int]:
    """Parse a hex mask as in /sys ``local_cpus`` or Cpus_allowed: comma-separated 32-bit words,
    most significant first."""
    digits = _trim(text).replace(",", "")
    if not digits:
        return []
    if len(digits) > MAX_CPUS // 4:
        raise ListFormatError(f"hex mask of more than {MAX_CPUS} CPUs: not a real machine's")
    try:
        value = int(digits, 16)
    except ValueError:
        raise ListFormatError(f"not a hex mask: {text[:40]!r}") from None
    return [i for i in range(value.bit_length()) if value >> i & 1]


def format_cpulist(cpus: Iterable[int]) -> str:
    """The compact kernel form of a CPU set, for messages and fixes."""
    out = []
    items = sorted(set(cpus))
    i = 0
    while i < len(items):
        j = i
        while j + 1 < len(items) and items[j + 1] == items[j] + 1:
            j += 1
        out.append(str(items[i]) if i == j else f"{items[i]}-{items[j]}")
        i = j + 1
    return ",".join(out)


def _trim(text: str) -> str:
    # Kernels 2.6.23 to about 3.3 wrote sysfs CPU lists and masks with the terminating NUL
    # included ("0-7\n\0"); only a trailing one is that, a NUL inside a list is garbage.
    return text.rstrip("\x00 \t\r\n").strip()


def _int(s: str) -> int:
    s = s.strip()
    if not s.isdecimal():
        raise ListFormatError(f"not a CPU number: {s!r}")
    return int(s)
