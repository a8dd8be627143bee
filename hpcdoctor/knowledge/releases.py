"""What else a torch release fixes besides its wheels' arch lists: the Python versions it was built
for and the torchvision/torchaudio releases built against it (knowledge/torch_wheels.toml
[[python]] and [[companion]], plus the site's [knowledge] config). The resolver picks a release
from these; an unknown is returned as None, never as a yes."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional

from hpcdoctor import knowledge
from hpcdoctor.knowledge import version_of

COMPANIONS = ("torchvision", "torchaudio")


def _site(config: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return (config or {}).get("knowledge") or {}


def python_minor(value: Any) -> Optional[str]:
    """'3.12.9 | packaged by Anaconda' -> '3.12'; None when no CPython version is readable."""
    m = re.match(r"^\s*(3)\.(\d{1,2})(?:\.\d+)?(?:[a-z]+\d*)?(?:\s|\+|$)", str(value or ""))
    return f"{m.group(1)}.{m.group(2)}" if m else None


def release_minor(value: Any) -> Optional[str]:
    """'2.6.0+cu126' -> '2.6'; None for anything that is not a release version."""
    m = re.match(r"^\s*(\d+)\.(\d+)(?:\.\d+)?", str(value or ""))
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _entries(kind: str, config: Optional[Dict[str, Any]]) -> List[Dict[str, Any]]:
    # The site's entries first: the first entry for a release wins.
    return list(_site(config).get(kind) or []) + list(knowledge.load("torch_wheels").get(kind, []))


def python_entry(minor: str, config: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    return next((e for e in _entries("python", config) if str(e.get("torch")) == minor), None)


def has_wheels_for(minor: str, python: str, rocm: bool = False,
                   config: Optional[Dict[str, Any]] = None) -> Optional[bool]:
    """Whether torch ``minor`` (2.7) published wheels for CPython ``python`` (3.12): None when
    knowledge has no Python list for that release."""
    e = python_entry(minor, config)
    if e is None:
        return None
    if rocm and python in (e.get("rocm_exclude") or []):
        return False
    return python in (e.get("versions") or [])


def python_span(minor: str, config: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """'3.9-3.13' for the release's (GIL) Python versions, or None when unknown."""
    e = python_entry(minor, config)
    plain = sorted((v for v in (e or {}).get("versions", []) if not v.endswith("t")), key=version_of)
    return f"{plain[0]}-{plain[-1]}" if plain else None


def companion(minor: str, package: str, config: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The minor of ``package`` (torchvision) built against torch ``minor``, or None when unknown."""
    e = next((e for e in _entries("companion", config) if str(e.get("torch")) == minor), None)
    return str(e[package]) if e and e.get(package) else None


def minors_between(lo: Any, hi: Any) -> List[str]:
    """The torch minors a wheel entry's range covers (lo inclusive, hi exclusive)."""
    lo_v, hi_v = version_of(lo), version_of(hi)
    if lo_v is None or hi_v is None or lo_v.major != hi_v.major:
        return []
    return [f"{lo_v.major}.{m}" for m in range(lo_v.minor, hi_v.minor)]


def next_minor(minor: str) -> str:
    major, m = minor.split(".")
    return f"{major}.{int(m) + 1}"


def pin(minor: str) -> str:
    """'2.7' -> '>=2.7,<2.8': one release, any of its patch releases."""
    return f">={minor},<{next_minor(minor)}"


def installed_companions(torch_facts: Dict[str, Any]) -> List[str]:
    """torchvision/torchaudio the environment lists (pip, the payload's packages, conda)."""
    have = set()
    for key in ("pip", "packages", "conda_list", "conda_packages"):
        listed = torch_facts.get(key)
        if isinstance(listed, dict):
            have.update(str(n).lower().replace("_", "-") for n in listed)
    return [c for c in COMPANIONS if c in have]


def nearest(minors: Iterable[str], current: Optional[str]) -> List[str]:
    """Minors ordered by how small a move they are from ``current``: the same release, then the
    next newer ones, then older ones; newest first without a current release."""
    ms = sorted(set(minors), key=version_of)
    cur = version_of(current) if current else None
    if cur is None:
        return list(reversed(ms))
    up = [m for m in ms if version_of(m) >= cur]
    down = [m for m in reversed(ms) if version_of(m) < cur]
    return up + down


def known_minors(config: Optional[Dict[str, Any]] = None) -> List[str]:
    """The torch minors whose Python lists knowledge holds, oldest first."""
    return sorted({str(e.get("torch")) for e in _entries("python", config) if e.get("torch")}, key=version_of)


def pythons_of(minor: str, config: Optional[Dict[str, Any]] = None) -> List[str]:
    """The (GIL) CPython versions torch ``minor`` has wheels for, oldest first; [] when unknown."""
    e = python_entry(minor, config) or {}
    return sorted((v for v in e.get("versions", []) if not v.endswith("t")), key=version_of)


def first_release_for(python: str, config: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The first torch minor in knowledge with wheels for CPython ``python`` (3.12 -> 2.2); None
    when none has. The oldest minor known (2.0) means "2.0 or earlier": knowledge starts there."""
    return next((m for m in known_minors(config) if python in pythons_of(m, config)), None)


def last_release_for(python: str, config: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The newest torch minor in knowledge with wheels for CPython ``python`` (3.8 -> 2.4)."""
    return next((m for m in reversed(known_minors(config)) if python in pythons_of(m, config)), None)


def python_of_listing(listed: Iterable[str], config: Optional[Dict[str, Any]] = None) -> List[str]:
    """The CPython versions whose interpreter pip could have listed these torch releases for
    (pip's "from versions: ..."): those every listed release in knowledge has wheels for, and, when
    the listing starts at a release later than the first known one, those whose first release it
    is (pip lists every release with a file for the interpreter, so an older one for that Python
    would be listed too). [] when no listed release is in knowledge."""
    known = known_minors(config)
    minors = sorted({m for m in (release_minor(v) for v in listed) if m}, key=version_of)
    inside = [m for m in minors if m in known]
    if not inside:
        return []
    sets = [set(pythons_of(m, config)) for m in inside]
    fits = sorted(set.intersection(*sets), key=version_of)
    if known and minors[0] in known and version_of(minors[0]) > version_of(known[0]):
        firsts = [p for p in fits if first_release_for(p, config) == minors[0]]
        fits = firsts or fits
    return fits
