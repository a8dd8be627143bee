"""``hpcdoctor env``: shell lines setting the variables that fix findings.

Like PyTorch's CPU launcher, it never overrides a variable the user set: it says so in a comment
and leaves the value alone.
"""

from __future__ import annotations

import shlex
from typing import Any, Dict, List

SHELLS = ("bash", "zsh", "fish", "csh")


def _assign(shell: str, name: str, value: str) -> str:
    q = shlex.quote(value)
    if shell == "fish":
        return f"set -gx {name} {q}"
    if shell == "csh":
        return f"setenv {name} {q}"
    return f"export {name}={q}"


def render(doc: Dict[str, Any], shell: str, user_env: Dict[str, str]) -> str:
    lines: List[str] = []
    seen: Dict[str, str] = {}
    for f in doc.get("findings", []):
        for name, value in (f.get("env") or {}).items():
            if name in seen:
                continue
            seen[name] = value
            why = f"# {f['code']} {f['symbol']}"
            if name in user_env:
                lines.append(f"# {name} is already set to {user_env[name]!r}; {f['symbol']} suggests {value!r} "
                             "(not overriding)")
            else:
                lines.append(f"{_assign(shell, name, value)}   {why}")
    if not lines:
        lines.append("# hpcdoctor: no environment variable to set")
    return "\n".join(lines) + "\n"
