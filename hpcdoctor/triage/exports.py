"""The NCCL_ and TORCH_ variables, and the locale and display ones, a pasted ticket sets in shell
lines of its own.

Users paste the lines they ran (``export NCCL_TIMEOUT=7200``) next to the error they got. Only a
line that is a shell assignment and nothing else is taken, optionally behind ``export`` and with a
trailing comment: ``NCCL_DEBUG=INFO torchrun ...``, ``os.environ[...] = ...``, an ``echo`` or prose
naming a variable are not, so a variable is taken only where the paste says it was set. A variable
set twice keeps its last value, as the shell would.
"""

from __future__ import annotations

import re
import shlex
from typing import Dict, Tuple

# Bounded throughout: a pasted log can hold megabyte lines.
_ASSIGN = re.compile(
    r"^[ \t]{0,16}(?:export[ \t]{1,8})?((?:NCCL|TORCH)_[A-Z0-9_]{1,80}|LC_[A-Z]{1,14}|LANG|PYTHONUTF8|PYTHONCOERCECLOCALE|DISPLAY)="
    r"(\"[^\"\n]{0,400}\"|'[^'\n]{0,400}'|[^\s\"'`$;&|<>()#]{0,400})"
    r"[ \t]{0,16}(?:#[^\n]{0,400})?\r?$", re.M)

# env.listed.source of the variables a paste sets in its own lines (checks/env.py, facts.ListedEnv).
EXPORT_SOURCE = "export lines"


def exported(text: str) -> Dict[str, Tuple[str, int]]:
    """{name: (value, line number)} of the paste's own assignments to NCCL_/TORCH_ variables and
    to the locale's and the display's (LANG, LC_*, PYTHONUTF8, PYTHONCOERCECLOCALE, DISPLAY)."""
    out: Dict[str, Tuple[str, int]] = {}
    line, at = 1, 0
    for m in _ASSIGN.finditer(text):
        line += text.count("\n", at, m.start())
        at = m.start()
        raw = m.group(2)
        try:
            value = shlex.split(raw)[0] if raw else ""
        except ValueError:
            continue
        out[m.group(1)] = (value, line)
    return out
