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
    if fix in _PARSED:
        return None
    bash = shutil.which("bash")
    if bash is None:  # pragma: no cover - every supported CI image has bash
        return None
    res = subprocess.run([bash, "-n"], input=fix, capture_output=True, text=True, timeout=10)
    return None if res.returncode == 0 else f"not shell: {res.stderr.strip()}"


# Shell fixes one `bash -n` run found well formed (prime); the rest are checked one by one.
_PARSED: set = set()


def prime(fixes) -> None:
    """Parse many shell fixes in one `bash -n` run, each as the body of its own function, so the
    corpus-wide check costs one process instead of hundreds. Only a run that parses cleanly marks
    them: any error (an unclosed quote swallows the functions after it) leaves every fix to be
    checked alone, so a broken fix is never passed by its neighbours."""
    todo = sorted({f for f in fixes if f and f not in _PARSED})
    bash = shutil.which("bash")
    if not todo or bash is None:
        return
    script = "".join(f"__hpcdoctor_fix_{i}() {{\n{fix}\n}}\n" for i, fix in enumerate(todo))
    res = subprocess.run([bash, "-n"], input=script, capture_output=True, text=True, timeout=30)
    if res.returncode == 0 and not res.stderr.strip():
        _PARSED.update(todo)
