"""pip's resolver finding no set of versions that satisfies every requirement (knowledge/messages/pip.toml:
"Cannot install ... because these package versions have conflicting dependencies" and the causes it lists
under "The conflict is caused by:")."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, List, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, ticket_all, told_evidence, told_text

SYMBOL = "pip-dependency-conflict"
_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*(.*)")


def _split(requirement: str) -> Tuple[str, str]:
    """'torch==2.0.0' -> ('torch', '==2.0.0'); names compared as PEP 503 normalises them."""
    m = _NAME.match(requirement or "")
    if not m:
        return "", ""
    return re.sub(r"[-_.]+", "-", m.group(1)).lower(), m.group(2).strip()


def _clash(f: FactView) -> Optional[dict]:
    """The first requirement the causes disagree on: the user's own against a release's, else two releases'."""
    asked = {}
    for s in ticket_all(f, "pip:conflict-user-requested"):
        name, spec = _split(str(s.get("requirement")))
        asked.setdefault(name, (spec, s))
    deps: List[tuple] = []
    for s in ticket_all(f, "pip:conflict-depends-on"):
        name, spec = _split(str(s.get("requirement")))
        deps.append((name, spec, s))
    for name, spec, s in deps:
        if name in asked and spec != asked[name][0]:
            return {"name": name, "mine": asked[name][0], "theirs": spec, "by": s, "user": asked[name][1]}
    for i, (name, spec, s) in enumerate(deps):
        other = next((d for d in deps[i + 1:] if d[0] == name and d[1] != spec), None)
        if other is not None:
            return {"name": name, "mine": other[1], "theirs": spec, "by": s, "other": other[2]}
    return None


# An info: the requirements exclude each other (the user's pins, a release's exact pin); the install stops,
# but neither the node nor the environment is at fault, and the same request fails the same way anywhere.
@rule("SW129", SYMBOL, "info", "pip finds no set of versions that satisfies every requirement at once", impact=4)
def pip_dependency_conflict(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, pip's resolver giving up: "Cannot install ... because these package versions
        have conflicting dependencies", with the causes it lists under "The conflict is caused by:"
        ("The user requested torch==2.0.0", "xformers 0.0.26.post1 depends on torch==2.3.0"); the
        requirement the causes disagree on is named.

    Why it matters:
        Nothing is installed: the versions pinned (by the user, a requirements file, or another
        package) exclude each other, most often a framework pinned to one release and an extension
        whose every candidate was built for another (xformers, torchvision, flash-attn for torch).
        Retrying or upgrading pip does not change it. An info: the request, not the node or its
        environment, is what cannot be satisfied.

    How to fix:
        Pin the extension to a release built for the pinned framework (its index or release notes
        name it; pip install --dry-run checks a choice without installing), or drop the framework's
        pin and let pip take the one the extension needs.

    References:
        - https://pip.pypa.io/en/stable/topics/dependency-resolution/ (dealing with dependency conflicts)
        - https://github.com/pypa/pip/blob/main/src/pip/_internal/resolution/resolvelib/factory.py (get_installation_error)
    """
    refused = first_symptom(f, "pip:resolution-impossible")
    if refused is None:
        return
    clash = _clash(f)
    if clash is None:
        yield Hit(message=f"pip found no set of versions that satisfies every requirement at once (line {refused.get('line')}: "
                          f"\"{told_text(refused)}\"): the requirements pinned exclude each other; the lines under \"The "
                          "conflict is caused by:\" name them",
                  fix=("pip install --dry-run -r requirements.txt   # pip 22.2+: resolve without installing, after "
                       "loosening or removing the pins those lines name"),
                  evidence=told_evidence(refused))
        return
    by = clash["by"]
    name, pkg = clash["name"], str(by.get("package"))
    mine = f"{name}{clash['mine']}" if clash["mine"] else name
    whose = "you asked for" if "user" in clash else "another release needs"
    yield Hit(message=f"pip cannot satisfy every requirement at once (line {refused.get('line')}): {whose} {mine}, and "
                      f"{pkg} {by.get('version')} depends on {name}{clash['theirs']} (line {by.get('line')}): no release "
                      f"of {pkg} it may choose works with that {name}",
              fix=(f"pip index versions {shlex.quote(pkg)}   # the releases of {pkg} the index has (pip 21.2+)\n"
                   f"pip install --dry-run {shlex.quote(mine)} {shlex.quote(pkg + '==VERSION')}   # try a release of "
                   f"{pkg} built for {mine}: pip resolves without installing (22.2+); its release notes name the {name} "
                   "each needs\n"
                   f"# or drop the pin on {name} (and on what needs exactly that {name}) and let pip take the {name} "
                   f"{pkg} needs"),
              evidence={**told_evidence(refused), "conflict.line": by.get("line"), "conflict.text": told_text(by)})
