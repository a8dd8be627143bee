"""pip's refusal to install tensorflow, read from a pasted log (knowledge/messages/pip.toml) and
answered from the wheels PyPI publishes for each release (knowledge/tensorflow_wheels.toml): which
Pythons and platforms have one, so which interpreter or machine pip looked for and found none."""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import version_of
from hpcdoctor.rules._common import ticket_all, ticket_evidence, ticket_symptoms
from hpcdoctor.rules.torch_install import _name, _platform_of_paste, _python_of_paste, _requirement, _wheel_platform

PACKAGE = "tensorflow"
_PLATFORMS = ("linux_x86_64", "linux_aarch64", "macos_x86_64", "macos_arm64", "windows_x86_64")
_SAY = {"linux_x86_64": "Linux x86_64", "linux_aarch64": "Linux aarch64", "macos_x86_64": "macOS x86_64",
        "macos_arm64": "macOS arm64", "windows_x86_64": "Windows x86_64"}
_CHECK = "python3 -c 'import platform, sys; print(platform.machine(), sys.version)'   # the CPU and Python pip looked for"


def _releases() -> List[Dict]:
    return list(knowledge.load("tensorflow_wheels")["release"])


def _platform_key(os_name: Optional[str], cpu: Optional[str]) -> Optional[str]:
    if not os_name or not cpu:
        return None
    cpu = "aarch64" if cpu in ("aarch64", "arm64") else cpu
    key = f"{os_name}_{'arm64' if os_name == 'macos' and cpu == 'aarch64' else cpu}"
    return key if key in _PLATFORMS else None


def _platform(f: FactView, symptoms: Dict[str, dict]) -> Optional[str]:
    """The paste's platform as a table key: a Jetson is Linux aarch64 (NVIDIA's Jetson Linux)."""
    if "prose:jetson-said" in symptoms:
        return "linux_aarch64"
    said = _platform_of_paste(f, symptoms)
    return _platform_key(*said) if said else None


def _span(pys: List[str]) -> str:
    pys = sorted(set(pys), key=version_of)
    return pys[0] if len(pys) == 1 else f"{pys[0]}-{pys[-1]}"


def _newest_for(plat: str, python: Optional[str]) -> Optional[Tuple[str, List[str]]]:
    """(release, its Pythons on ``plat``) of the newest release with a wheel for ``plat`` (and ``python``)."""
    for r in reversed(_releases()):
        pys = r.get(plat) or []
        if pys and (python is None or python in pys):
            return r["version"], pys
    return None


def _fix(plat: Optional[str], python: Optional[str], release: Optional[str] = None) -> str:
    lines = [_CHECK]
    if plat:
        pick = None
        if release:
            r = next((x for x in _releases() if x["version"] == release), None)
            pys = (r or {}).get(plat) or []
            pick = (release, pys) if pys else None
        pick = pick or _newest_for(plat, python) or _newest_for(plat, None)
        if pick:
            rel, pys = pick
            if python in pys:
                lines.append(f"pip install tensorflow=={rel}   # PyPI has it for Python {python} on {_SAY[plat]}")
            else:
                py = pys[-1]
                env = f"~/tf-py{py.replace('.', '')}"
                lines.append(f"python{py} -m venv {env} && {env}/bin/pip install tensorflow=={rel}   # tensorflow {rel}'s "
                             f"{_SAY[plat]} wheels are for Python {_span(pys)}")
    lines.append("python3 -m pip debug --verbose | grep -A5 'Compatible tags'   # the wheel tags this interpreter accepts")
    return "\n".join(lines)


def _where_python(python: str) -> List[str]:
    return [p for p in _PLATFORMS if any(python in (r.get(p) or []) for r in _releases())]


@rule("SW040", "tensorflow-wheel-unavailable", "error", "pip found no tensorflow wheel this Python and platform can install",
      impact=8)
def tensorflow_wheel_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, pip's refusals to install tensorflow: "Could not find a version that
        satisfies the requirement tensorflow (from versions: none)" with "No matching distribution
        found for tensorflow", a pinned tensorflow==V missing from the versions pip lists, and
        "tensorflow-V-cpXY-cpXYm-PLATFORM.whl is not a supported wheel on this platform.", and the
        same refusal of a project tensorflow's wheel requires on the platform ("tensorflow-cpu-aws==V;
        platform_machine == "aarch64" ... (from tensorflow) (from versions: ...)"). It reads
        the Python and the platform the paste shows (pip's own lines, the user's words: Python
        3.6.8, a Jetson, a Mac, Windows) against the wheels PyPI publishes for each release.

    Why it matters:
        TensorFlow publishes wheels for a few CPython versions per release, for Linux x86_64,
        Windows x86_64, Linux aarch64 (from 2.10.0 only), macOS x86_64 (until 2.16) and macOS
        arm64 (from 2.13.0), as PyPI's files show; pip finds nothing for any other interpreter or
        machine: a Python newer or older than the release's, a 32-bit Python, an ARM board before
        2.10 (a Jetson with Python 3.6).

    How to fix:
        Install the release whose wheels include this Python and platform (the fix names it from
        PyPI's files), or a Python that release was built for in a new environment.

    References:
        - https://pypi.org/simple/tensorflow/ (the wheels of every release)
        - https://pypi.org/simple/tensorflow-cpu-aws/ (the Linux aarch64 build tensorflow 2.10-2.12's wheels require)
        - https://www.tensorflow.org/install/pip (system requirements: Python versions, platforms)
        - https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/
        - https://github.com/tensorflow/tensorflow/issues/31058
    """
    symptoms = ticket_symptoms(f)
    if not symptoms:
        return
    python, said = _python_of_paste(f, symptoms)
    plat = _platform(f, symptoms)
    refused = next((s for s in ticket_all(f, "pip:no-version-satisfies")
                    if (_requirement(s.get("req")) or {}).get("name") == PACKAGE), None)
    wheel = next((s for s in ticket_all(f, "pip:unsupported-wheel") if _name(s.get("dist")) == PACKAGE), None)
    # tensorflow's own wheel may pull its build from another project on some platforms (tensorflow-cpu-aws on
    # Linux aarch64, tensorflow-intel on Windows): pip then refuses that requirement, "(from tensorflow)"
    pulled = next((s for s in ticket_all(f, "pip:no-version-satisfies")
                   if _name(s.get("parent")) == PACKAGE and (_requirement(s.get("req")) or {}).get("name")), None)
    if refused is not None:
        yield _refused(refused, python, said, plat)
    elif pulled is not None:
        yield _pulled(pulled)
    elif wheel is not None:
        yield _unsupported(wheel, python, said, plat)


def _refused(s: dict, python: Optional[str], said: str, plat: Optional[str]) -> Hit:
    req = _requirement(s.get("req")) or {}
    listed = [v.strip() for v in str(s.get("versions") or "").split(",") if v.strip() and v.strip() != "none"]
    at = f"line {s['line']}"
    if not listed:
        if python and not _where_python(python):
            why = f"no tensorflow release on PyPI has a wheel for Python {python} ({said})"
        elif python and plat:
            rel = _newest_for(plat, None)
            where = [_SAY[p] for p in _where_python(python)]
            why = (f"PyPI's tensorflow has wheels for Python {python} ({said}) on {', '.join(where) or 'no platform'} only, "
                   f"and this machine is {_SAY[plat]}"
                   + (f", whose wheels begin at {_first_on(plat)} (Python {_span(_pythons_on(plat))})" if rel else ""))
        elif plat:
            why = (f"this machine is {_SAY[plat]}: PyPI's tensorflow wheels for it are {_first_on(plat)} onwards, for Python "
                   f"{_span(_pythons_on(plat))}; this interpreter is none of those")
        else:
            why = "no tensorflow release on PyPI has a wheel for this interpreter and machine (a Python or platform none was built for)"
        return Hit(message=f"pip found no tensorflow wheel at all ({at}: from versions: none): {why}",
                   fix=_fix(plat, python), evidence={**ticket_evidence(s), "python": python, "platform": plat})
    version = req.get("version") or ""
    rel = next((r for r in _releases() if r["version"] == version), None)
    what = f"tensorflow {version} has no wheel for this interpreter" if version else "no listed tensorflow fits the requirement"
    if rel:
        where = [f"{_SAY[p]} (Python {_span(rel[p])})" for p in _PLATFORMS if rel.get(p)]
        what += (f" (Python {python}, {said})" if python else "") + f": its wheels are for {'; '.join(where)}"
    finals = [v for v in listed if all(c.isdigit() or c == "." for c in v)] or listed
    return Hit(message=f"pip refused {s.get('req')} ({at}): {what}; pip offered {listed[0]} and later",
               fix=f"pip install tensorflow=={finals[-1]}   # the newest release pip listed for this interpreter\n"
                   + _fix(plat or ("linux_x86_64" if rel and rel.get("linux_x86_64") else None), python, version if rel else None),
               evidence={**ticket_evidence(s), "python": python, "listed": listed[-8:]})


def _pulled(s: dict) -> Hit:
    """A requirement tensorflow's wheel declares for this platform, refused: pip's own list says which exist."""
    req = _requirement(s.get("req")) or {}
    raw = str(s.get("req") or "")
    # the pin as pip printed it ("2.12.0-rc0"), not normalised: it is what the user compares with PyPI's page
    name, version = req.get("name"), (raw.split("==", 1)[1] if "==" in raw else req.get("version") or "")
    listed = [v.strip() for v in str(s.get("versions") or "").split(",") if v.strip() and v.strip() != "none"]
    finals = [v for v in listed if all(c.isdigit() or c == "." for c in v)]
    marker = " ".join(str(s.get("marker") or "").split())
    at = f"line {s['line']}"
    # the interpreter is pip's to say here (the list is what it accepts); a Python named in the user's words
    # may be the one a missing wheel was built for, so it is not quoted as theirs
    py = ""
    if not finals:
        why = f"no release of {name} has a file this interpreter{py} can install (from versions: none)"
    else:
        why = (f"{name} {version or 'of that requirement'} has no file this interpreter{py} can install: pip lists "
               f"{finals[0]} to {finals[-1]} for it" + (f", without {version}" if version and version not in listed else ""))
    fix = [_CHECK]
    series = ".".join(version.split(".")[:2])
    same = [v for v in finals if version and v.startswith(series + ".") and version_of(v) < version_of(req.get("version") or version)]
    if same:
        fix.append(f"pip install tensorflow=={same[-1]}   # the nearest earlier release whose {name} pip listed for this interpreter")
    if finals:
        fix.append(f"pip install tensorflow=={finals[-1]}   # the newest release whose {name} pip listed for this interpreter")
    fix.append("python3 -m pip debug --verbose | grep -A5 'Compatible tags'   # the wheel tags this interpreter accepts")
    return Hit(message=(f"pip refused {s.get('req')}, which tensorflow requires"
                        + (f" where {marker}" if marker else "") + f" ({at}): {why}"),
               fix="\n".join(fix), evidence={**ticket_evidence(s), "listed": listed[-8:]})


def _first_on(plat: str) -> str:
    return next(r["version"] for r in _releases() if r.get(plat))


def _pythons_on(plat: str) -> List[str]:
    return [p for r in _releases() for p in (r.get(plat) or [])]


def _unsupported(s: dict, python: Optional[str], said: str, plat: Optional[str]) -> Hit:
    pytag = str(s.get("pytag") or "")
    w_py = f"{pytag[2]}.{pytag[3:]}" if pytag.startswith("cp") and len(pytag) > 3 else None
    w_plat = _platform_key(*_wheel_platform(str(s.get("plat") or "")))
    wrong = []
    if python and w_py and python != w_py:
        wrong.append(f"this interpreter is Python {python} ({said}), the wheel is for CPython {w_py}")
    if plat and w_plat and plat != w_plat:
        wrong.append(f"this machine is {_SAY[plat]}, the wheel is for {_SAY[w_plat]}")
    why = "; ".join(wrong) or f"the wheel is for CPython {w_py or pytag} on {_SAY.get(w_plat or '', s.get('plat'))} only"
    return Hit(message=f"pip refused {s.get('wheel')} (line {s['line']}): {why}",
               fix=_fix(plat or w_plat, python), evidence={**ticket_evidence(s), "python": python, "platform": plat})
