"""Arm core names from the MIDR implementer and part numbers, as lscpu gives them.

The table is data (arm_parts.toml beside this module, transcribed from util-linux's lscpu-arm.c
with its source and read date). A number the table lacks is named by its numbers, never guessed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, Optional, Tuple

from hpcdoctor import knowledge


@lru_cache(maxsize=1)
def _table() -> Dict[int, Tuple[str, Dict[int, str]]]:
    data = knowledge.load("arm_parts")
    return {int(i["code"]): (str(i["name"]), {int(k, 16): str(v) for k, v in i.get("parts", {}).items()})
            for i in data.get("implementer", [])}


def vendor(implementer: int) -> Optional[str]:
    found = _table().get(implementer)
    return found[0] if found else None


def name(implementer: int, part: int) -> str:
    """lscpu's name for a core ("Cortex-X925"), or the numbers themselves where unknown."""
    found = _table().get(implementer)
    if found and part in found[1]:
        return found[1][part]
    who = found[0] if found else f"implementer 0x{implementer:02x}"
    return f"{who} part 0x{part:03x}"


def parse_midr(text: str) -> Optional[Tuple[int, int]]:
    """(implementer, part) of a midr_el1 register value ("0x00000000410fd4f0"): implementer is
    bits 31:24 and part number bits 15:4 (Arm ARM, MIDR_EL1)."""
    try:
        value = int(text.replace("\x00", "").strip(), 16)
    except ValueError:
        return None
    return (value >> 24) & 0xFF, (value >> 4) & 0xFFF
