"""A wheel pip refused ("<file> is not a supported wheel on this platform.") for its platform tag:
a pip older than the tag (pip-too-old-for-wheel-tag), or a node whose glibc is older than the
tag's floor (glibc-older-than-binary reads wheel_glibc_too_new from here). The tables are
knowledge/wheel_platform_tags.toml."""

from __future__ import annotations

import re
import shlex
from typing import Any, Iterator, List, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, ticket_all, told_evidence, told_text

_TABLE = knowledge.load("wheel_platform_tags")
_FIRST_PIP = _TABLE["pip_first_release"]["tags"]
_LAST_PIP = _TABLE["pip_last_for_python"]["pythons"]
_LEGACY_GLIBC = _TABLE["legacy_manylinux_glibc"]["tags"]
_DISTRO_GLIBC = _TABLE["distro_glibc"]["releases"]

_REFUSED = "pip:unsupported-wheel"
_PIP_SHOWN = ("pip:pip-version", "pip:pip-outdated-nag")
_RELEASE_SAID = "prose_os:linux-release-said"
_PERENNIAL = re.compile(r"^(manylinux|musllinux)_(\d{1,2})_(\d{1,3})_\w{1,20}$")
_LEGACY = re.compile(r"^(manylinux1|manylinux2010|manylinux2014)_\w{1,20}$")
_CPYTHON = re.compile(r"^cp(\d)(\d{1,2})$")
# How the table's distributions are written in a finding.
_SHOWN = {"ubuntu": "Ubuntu", "debian": "Debian", "rhel": "RHEL", "centos": "CentOS", "rocky": "Rocky Linux",
          "almalinux": "AlmaLinux", "amazon linux": "Amazon Linux"}
# How users name the distributions, as the table keys them.
_DISTRO_NAMES = {"red hat enterprise linux": "rhel", "rocky linux": "rocky", "alma linux": "almalinux",
                 "almalinux": "almalinux", "amazon linux": "amazon linux"}


_version = knowledge.version_of   # the one parser the tables and the rules compare with


def _family(plat: str) -> Optional[str]:
    """The platform tag's family as the pip table names it; None for any other tag (linux_x86_64, win_amd64)."""
    legacy = _LEGACY.match(plat)
    if legacy:
        return legacy.group(1)
    perennial = _PERENNIAL.match(plat)
    if perennial:
        return f"{perennial.group(1)}_x_y"
    return None


def _glibc_floor(plat: str) -> Any:
    legacy = _LEGACY.match(plat)
    if legacy:
        return _version(_LEGACY_GLIBC[legacy.group(1)])
    perennial = _PERENNIAL.match(plat)
    if perennial and perennial.group(1) == "manylinux":
        return _version(f"{perennial.group(2)}.{perennial.group(3)}")
    return None


def _plats(s: dict) -> List[str]:
    """A wheel's platform tags: a compressed tag set (PEP 425) lists several, joined by dots."""
    return [p for p in str(s.get("plat") or "").split(".") if p]


def _python_shown(f: FactView) -> Optional[str]:
    """The Python the pip shown runs under (its --version line), else the one the user names; both
    entries' patterns always capture it."""
    s = first_symptom(f, "pip:pip-version") or first_symptom(f, "prose:python-version-said")
    return str(s["python"]) if s is not None else None


def _python_of(s: dict) -> Optional[str]:
    """The CPython a wheel is for, from its Python tag (cp36: 3.6); None for any other tag."""
    tag = _CPYTHON.match(str(s.get("pytag") or ""))
    return f"{tag.group(1)}.{tag.group(2)}" if tag else None


def _other_python(s: dict, python: Optional[str]) -> bool:
    """Whether the wheel is for another CPython than the one shown: pip refuses it for that first."""
    wheel = _python_of(s)
    return bool(wheel and python and wheel != python)


def _pip_needed(s: dict) -> Optional[Tuple[str, str]]:
    """(the oldest pip that knows one of the wheel's platform tags, that tag); None where a tag is not in
    the table."""
    families = [(_family(p), p) for p in _plats(s)]
    if not families or any(fam is None for fam, _ in families):
        return None
    fam, plat = min(families, key=lambda fp: _version(_FIRST_PIP[fp[0]]))
    return _FIRST_PIP[fam], plat


def _pip_too_old(f: FactView) -> Optional[Tuple[dict, dict, str, str, Optional[str]]]:
    """(the refused wheel, the pip shown, the pip its tag needs, that tag, the Python shown)."""
    pip = first_symptom(f, *_PIP_SHOWN)
    if pip is None:
        return None
    python = _python_shown(f)
    for s in ticket_all(f, _REFUSED):
        needed = _pip_needed(s)
        if needed and not _other_python(s, python) and _version(str(pip["pip"])) < _version(needed[0]):
            return s, pip, needed[0], needed[1], python
    return None


@rule("SW120", "pip-too-old-for-wheel-tag", "error",
      "pip is older than the platform tag of the wheel it refuses", impact=5)
def pip_too_old_for_wheel_tag(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, pip refusing a wheel ("PyMuPDF-1.16.7-cp36-cp36-manylinux2010_x86_64.whl
        is not a supported wheel on this platform.") whose platform tag the pip shown beside it
        ("pip 9.0.1 from /usr/lib/python3/dist-packages (python 3.6)", or its own "You are using pip
        version 9.0.1" notice) predates: manylinux1 from pip 8.1.0, manylinux2010 from 19.0,
        manylinux2014 from 19.3, the perennial manylinux_X_Y tags (PEP 600) from 20.3, musllinux
        from 21.2 (knowledge/wheel_platform_tags.toml, from pip's changelog and source). A wheel for
        another CPython than the one shown is refused for that first and is left alone.

    Why it matters:
        An old pip, often the distribution's own (manylinux#389's Ubuntu 18.04 shows pip 9.0.1 from
        /usr/lib/python3/dist-packages), does not know the tag at all, so it refuses every wheel of
        it however new the machine: pip then builds from source, fails, or finds no distribution. A
        newer pip installs the same wheel.

    How to fix:
        Upgrade pip for the user (python3 -m pip install --user --upgrade "pip>=19.0"; in a virtual
        or conda environment without --user), then install with python3 -m pip. A Python whose last
        pip predates the tag (Python 3.4 stops at pip 19.1.1) needs a newer Python.

    References:
        - https://github.com/pypa/pip/blob/6d309205789d368b2749d93fd6193d584811efd5/NEWS.rst
        - https://github.com/pypa/manylinux/blob/ad3c453962dd6d0644f765dcc19cc79c6123b9a0/README.rst
        - https://github.com/pypa/manylinux/issues/389 (pip 9 and a manylinux2010 wheel)
    """
    found = _pip_too_old(f)
    if found is None:
        return
    s, pip, needed, plat, python = found
    last = _LAST_PIP.get(python or "")
    interpreter = f"python{python}" if python else "python3"
    where = str(pip.get("text") or "")
    system = "/usr/lib/python" in where or "/usr/share/python" in where or "dist-packages" in where
    if last and _version(last) < _version(needed):
        fix = (f"# Python {python}'s last pip is {last}, older than {needed}: use a newer Python, e.g.\n"
               "module avail python 2>&1 | tail -5   # or: conda create -n py311 python=3.11\n"
               f"python3.11 -m pip install --user {shlex.quote(str(s.get('dist') or 'NAME'))}   # the package's wheel for "
               "that Python, which pip picks itself")
    else:
        fix = (f"{interpreter} -m pip install {'--user ' if system else ''}--upgrade 'pip>={needed}'   # "
               + ("the system's pip stays; yours goes to ~/.local" if system else "in this environment")
               + f"\n{interpreter} -m pip --version   # {needed} or newer now\n"
               f"{interpreter} -m pip install {'--user ' if system else ''}{shlex.quote(str(s.get('wheel') or 'WHEEL.whl'))}")
    yield Hit(message=f"pip {pip['pip']} (line {pip.get('line')}) is older than the first pip that installs {plat.split('_')[0]} "
                      f"wheels, {needed}: it does not know the wheel's platform tag {plat} and refuses it whatever the "
                      f"machine (line {s.get('line')}: \"{told_text(s)}\")",
              fix=fix, evidence=told_evidence(s))


def _node_glibc(f: FactView) -> Optional[Tuple[Any, str, Optional[dict]]]:
    """(glibc, where it was read, the symptom) of the node: collect_env's "Libc version: glibc-2.27", or
    the distribution release the user names (its glibc by the PEP 600 survey)."""
    t = f.get("torch") if isinstance(f.get("torch"), dict) else {}
    libc = re.match(r"glibc-(\d+\.\d+)", str(t.get("libc") or ""))
    if libc:
        return _version(libc.group(1)), f"collect_env's Libc version, glibc {libc.group(1)}", None
    for s in ticket_all(f, _RELEASE_SAID):
        distro = str(s.get("distro") or "").lower()
        distro = _DISTRO_NAMES.get(re.sub(r"[ \t]+", " ", distro), distro)
        release = str(s.get("release") or "")
        key = f"{distro} {release}" if distro == "ubuntu" else f"{distro} {release.split('.')[0]}"
        if key in _DISTRO_GLIBC:
            glibc = _DISTRO_GLIBC[key]
            name = _SHOWN.get(distro, distro.title())
            return _version(glibc), f"{name} {key.split(' ')[-1]} (line {s.get('line')}), whose glibc is {glibc}", s
    return None


# Debian's releases by codename, as the official Python images name their variants.
_DEBIAN = {"bookworm": "12", "trixie": "13"}


def _debian_for(floor: Any) -> Optional[str]:
    """The oldest Debian of the Python images whose glibc meets the floor (distro_glibc); None past them."""
    for codename, release in _DEBIAN.items():
        if _version(_DISTRO_GLIBC[f"debian {release}"]) >= floor:
            return codename
    return None


def wheel_glibc_too_new(f: FactView) -> Iterator[Hit]:
    """glibc-older-than-binary's reading of a refused manylinux wheel: every platform tag of the wheel
    needs a newer glibc than the node's, and the pip shown (if any) knows the tag."""
    node = _node_glibc(f)
    if node is None or _pip_too_old(f) is not None:
        return
    glibc, where, said = node
    python = _python_shown(f)
    for s in ticket_all(f, _REFUSED):
        floors = [_glibc_floor(p) for p in _plats(s)]
        if not floors or None in floors or _other_python(s, python):
            continue
        floor = min(floors)
        if glibc >= floor:
            continue
        need = str(floor)
        dist = str(s.get("dist") or "NAME")
        debian = _debian_for(floor)
        yield Hit(message=f"the wheel {s.get('wheel')} needs glibc {need} or newer (its platform tag) and this machine is "
                          f"{where}: pip refuses it (line {s.get('line')}: \"{told_text(s)}\"); it was built on a newer OS "
                          "than this one",
                  fix=("ldd --version | head -1   # this node's glibc\n"
                       f"python3 -m pip install --no-binary {shlex.quote(dist)} {shlex.quote(dist)}   # built from source "
                       "against this glibc (needs the project's build tools), where no wheel for an older glibc exists"
                       + (f"\napptainer exec docker://python:{_python_of(s) or '3.12'}-{debian} python3 -m pip install "
                          f"--user {shlex.quote(dist)}   # or install, and run the program, in a container of an OS with "
                          f"glibc {need} or newer (the Python image of Debian {_DEBIAN[debian]})" if debian else "")),
                  evidence={**told_evidence(s), **({"said.line": said.get("line")} if said else {})})
        return
