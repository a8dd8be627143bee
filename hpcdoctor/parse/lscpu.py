"""``lscpu`` human output: a "Key: value" table."""

from __future__ import annotations

from typing import Dict


def parse_lscpu(text: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out.setdefault(key.strip(), value.strip())
    return out


def int_field(fields: Dict[str, str], *names: str) -> int:
    """First of ``names`` that parses as an int; 0 when none does."""
    for name in names:
        value = fields.get(name, "").strip()
        if value.isdecimal():
            return int(value)
    return 0
