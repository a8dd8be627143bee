"""Every fix a rule prints must run as printed: shell fixes pass ``bash -n``, Python fixes
``compile()``. conftest wraps the engine so every finding any test fires is checked here."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from typing import Optional


@functools.lru_cache(maxsize=None)
def fix_problem(fix: str, lang: str) -> Optional[str]:
    """Why the fix would not run as printed, or None."""
    if "\n" not in fix and len(fix) > 0 and fix.strip() != fix:
        return "leading or trailing blanks"
    if lang == "python":
        try:
            compile(fix, "<fix>", "exec")
        except SyntaxError as exc:
            return f"not Python: {exc.msg}"
        return None
    if lang != "bash":
        return f"unknown fix language {lang!r}"
    for line in fix.splitlines():
        code = "" if line.lstrip().startswith("#") else line.split(" #", 1)[0]
        if re.search(r"<[A-Za-z][^<>]*>", code):  # parses as two redirections, runs as neither
            return f"a <placeholder> where a command must run: {code.strip()}"
    bash = shutil.which("bash")
    if bash is None:  # pragma: no cover - every supported CI image has bash
        return None
    res = subprocess.run([bash, "-n"], input=fix, capture_output=True, text=True, timeout=10)
    return None if res.returncode == 0 else f"not shell: {res.stderr.strip()}"
