"""Key/value files: /proc/meminfo, sysfs node meminfo, /proc/self/status, os-release."""

from __future__ import annotations

import re
from typing import Dict, Optional

_MEMINFO = re.compile(r"^(?:Node \d+ )?([A-Za-z0-9_()]+):\s+(\d+)(?:\s*kB)?\s*$")


def parse_meminfo(text: str) -> Dict[str, int]:
    """Values in bytes where the kernel wrote kB; plain counts (HugePages_Total) as they are."""
    out: Dict[str, int] = {}
    for line in text.splitlines():
        m = _MEMINFO.match(line.strip())
        if not m:
            continue
        value = int(m.group(2))
        out[m.group(1)] = value * 1024 if line.rstrip().endswith("kB") else value
    return out


def parse_status(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def parse_os_release(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.startswith("#"):
            out[key.strip()] = value.strip().strip('"').strip("'")
    return out


def bracketed_choice(text: str) -> Optional[str]:
    """The selected word of a sysfs choice file: ``always [madvise] never`` -> ``madvise``."""
    m = re.search(r"\[([^\]]+)\]", text)
    if m:
        return m.group(1).strip()
    words = text.split()
    return words[0] if len(words) == 1 else None
