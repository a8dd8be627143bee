"""``lscpu`` human output: a "Key: value" table."""

from __future__ import annotations

from typing import Dict, Optional


def parse_lscpu(text: str) -> Dict[str, str]:
    """Fields of lscpu's table. lscpu wraps a long value (Flags) onto indented lines that carry
    no key, cut at the column's width even mid-word ("svebitpe" / "rm"): a continuation is
    joined back at the value's column, so a cut word is whole again and a cut between words
    keeps its space."""
    out: Dict[str, str] = {}
    last: Optional[str] = None
    col = 0
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            name = key.strip()
            last = None if name in out else name
            out.setdefault(name, value.strip())
            col = len(line) - len(value.lstrip()) if value.strip() else 0
            continue
        indent = len(line) - len(line.lstrip())
        if last and col and line.strip() and indent >= col:
            out[last] = (out[last] + line[col:]).rstrip()
        else:
            last = None
    return out


def int_field(fields: Dict[str, str], *names: str) -> int:
    """First of ``names`` that parses as an int; 0 when none does."""
    for name in names:
        value = fields.get(name, "").strip()
        if value.isdecimal():
            return int(value)
    return 0
