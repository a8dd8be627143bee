"""``hpcdoctor env``: shell lines setting the variables that fix findings.

Like PyTorch's CPU launcher, it never overrides a variable the user set: it says so and leaves
the value alone.

The output is eval'd, so each shell gets quoting by its own rules, checked against the real
shells in the tests: POSIX single quotes for bash and zsh; for fish, single quotes in which ``\\``
and ``'`` are escapes; for csh/tcsh, single quotes in which ``!`` still triggers history and must
be ``\\!``. fish's ``eval (…)`` joins the lines into one and interactive tcsh's eval reads ``#`` as
a command, so for those two the script holds only ``;``-terminated assignments and the notes go
to stderr.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Dict, List, Tuple

from hpcdoctor.report.safe import term

SHELLS = ("bash", "zsh", "fish", "csh")
# Shells whose eval idiom cannot carry comments.
_NO_COMMENTS = ("fish", "csh")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


_PLAIN = re.compile(r"^[A-Za-z0-9_@%+=:,./-]+$")


def quote(shell: str, value: str) -> str:
    if _PLAIN.match(value):
        return value  # nothing in it any of the shells would read specially
    if shell == "fish":
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if shell == "csh":
        return "'" + value.replace("'", "'\\''").replace("!", "\\!") + "'"
    return shlex.quote(value)


def _assign(shell: str, name: str, value: str) -> str:
    q = quote(shell, value)
    if shell == "fish":
        return f"set -gx {name} {q};"
    if shell == "csh":
        return f"setenv {name} {q};"
    return f"export {name}={q}"


def _unquotable(shell: str, name: str, value: str) -> str:
    """Why a variable cannot be written for this shell, or ''."""
    if not _NAME.match(name):
        return "its name is not a shell variable name"
    # fish's eval splits on newlines and csh cannot hold one in quotes: such a value is refused.
    if shell in _NO_COMMENTS and _CONTROL.search(value):
        return f"its value holds a control character that {shell} cannot quote safely"
    return ""


def render_parts(doc: Dict[str, Any], shell: str, user_env: Dict[str, str]) -> Tuple[List[str], List[str]]:
    """The assignments, and the notes that explain or withhold them."""
    lines: List[str] = []
    notes: List[str] = []
    seen: Dict[str, str] = {}
    for f in doc.get("findings", []):
        for name, value in (f.get("env") or {}).items():
            if name in seen:
                continue
            seen[name] = value
            value = str(value)
            if name in user_env:
                notes.append(f"{term(name)} is already set to {term(repr(user_env[name]))}; {f['symbol']} "
                             f"suggests {term(repr(value))} (not overriding)")
                continue
            why = _unquotable(shell, name, value)
            if why:
                notes.append(f"{term(name)} not set: {why}")
                continue
            if shell in _NO_COMMENTS:
                lines.append(_assign(shell, name, value))
                notes.append(f"{name}: {f['code']} {f['symbol']}")
            else:
                lines.append(f"{_assign(shell, name, value)}   # {f['code']} {f['symbol']}")
    return lines, notes


def render(doc: Dict[str, Any], shell: str, user_env: Dict[str, str]) -> str:
    """The text to eval. For bash and zsh the notes are comments in it; for fish and csh they
    are left out (see ``render_parts``; the command line prints them on stderr)."""
    lines, notes = render_parts(doc, shell, user_env)
    if shell not in _NO_COMMENTS:
        lines = lines + [f"# {n}" for n in notes if "(not overriding)" in n or " not set: " in n]
        if not lines:
            lines.append("# hpcdoctor: no environment variable to set")
    return "\n".join(lines) + "\n" if lines else ""
