"""The machine word of `uname -m` and of a recorded `uname -a`."""

from __future__ import annotations

import re
from typing import Optional

_WORD = re.compile(r"^[a-z][a-z0-9_]{1,19}$")


def machine(text: str) -> Optional[str]:
    """`uname -m`'s one word, or None for anything else."""
    word = text.strip()
    return word if _WORD.match(word) else None


def machine_from_all(text: str) -> Optional[str]:
    """The machine field of `uname -a` ("... @0 x86_64 x86_64 x86_64 GNU/Linux"). The kernel's
    version string before it has spaces, and GNU uname leaves out the processor and platform words
    when they are unknown, so the machine is the first of the lowercase words that run up to the
    operating system at the end; a year, a time zone or "(2023-09-29)" is never one."""
    words = text.split()
    if len(words) < 4 or words[-1] not in ("GNU/Linux", "Linux"):
        return None
    run = []
    for word in reversed(words[3:-1]):
        if not _WORD.match(word) or len(run) == 3:
            break
        run.append(word)
    return run[-1] if run else None
