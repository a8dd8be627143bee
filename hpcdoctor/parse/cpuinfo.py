"""/proc/cpuinfo on x86-64, aarch64 and ppc64le."""

from __future__ import annotations

import re
from typing import Dict, List, Optional


def parse_cpuinfo(text: str) -> List[Dict[str, str]]:
    """One dict per processor block. Blank lines separate blocks; on aarch64 a trailing block
    of machine-wide keys (Hardware, Serial) may follow and is kept as its own dict."""
    blocks: List[Dict[str, str]] = []
    cur: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if not line.strip() and cur:
                blocks.append(cur)
                cur = {}
            continue
        cur[key.strip()] = value.strip()
    if cur:
        blocks.append(cur)
    return blocks


def processors(blocks: List[Dict[str, str]]) -> List[Dict[str, str]]:
    return [b for b in blocks if "processor" in b]


def infer_arch(blocks: List[Dict[str, str]]) -> Optional[str]:
    """The ISA family, from what only that family's kernel writes into cpuinfo."""
    for b in blocks:
        if "flags" in b and ("vendor_id" in b or "model name" in b):
            return "x86_64"
        if "CPU implementer" in b or "Features" in b:
            return "aarch64"
        cpu = b.get("cpu", "")
        if re.match(r"POWER\d", cpu):
            return "ppc64le"
        if "isa" in b and b.get("isa", "").startswith("rv64"):
            return "riscv64"
    return None


def flags(block: Dict[str, str]) -> List[str]:
    return sorted(set((block.get("flags") or block.get("Features") or "").split()))


def power_generation(block: Dict[str, str]) -> int:
    m = re.search(r"POWER(\d+)", block.get("cpu", ""))
    return int(m.group(1)) if m else 0
