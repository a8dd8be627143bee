"""pip's refusal to install torch, read from a pasted log (knowledge/messages/pip.toml): a wheel
whose tags this interpreter does not accept, or a version pip found no file of for it, answered
with the release this Python and platform can install (knowledge/torch_wheels.toml)."""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import releases, version_of, wheels
from hpcdoctor.rules._builds import node_platform
from hpcdoctor.rules._common import first_symptom, ticket_all, ticket_evidence, ticket_symptoms

PACKAGE = "torch"
_OS_NAME = {"linux": "Linux", "windows": "Windows", "macos": "macOS"}
# pip's messages that print the interpreter's version, most direct first.
_PYTHON_SAID_BY_PIP = ("pip:requires-python-package", "pip:requires-python-packages", "pip:requires-python-link",
                       "pip:pip-version", "pip:python-end-of-life", "pip:python-from-site-packages")


@rule("SW038", "torch-wheel-unavailable", "error", "pip found no torch wheel this Python and platform can install",
      impact=8, also={"info": "the version pinned is not a torch release at all (past the last minor of an ended "
                              "series, such as 1.15: 1.x ended at 1.13): check the pin"})
def torch_wheel_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, pip's refusals to install torch (knowledge/messages/pip.toml, from pip's
        source at 20.0-26.2.1): "torch-V-cpXY-cpXY-PLATFORM.whl is not a supported wheel on this
        platform.", "Could not find a version that satisfies the requirement torch==V (from
        versions: ...)" with "No matching distribution found for torch==V", and "Package 'torch'
        requires a different Python: X not in 'SPEC'". It reads the wheel's tags, the Python the
        paste shows (pip's own lines: a site-packages path, pip --version, Requires-Python; a
        collect_env; the user's words), and the "from versions" list, which holds exactly the
        releases that have a file for this interpreter.

    Why it matters:
        A wheel is built for one CPython version (cp311) and one platform (linux_x86_64,
        win_amd64, macosx_..._arm64); pip refuses any other. The "+cuXYZ" local versions are
        served only by PyTorch's own index (https://download.pytorch.org/whl/cuXYZ), never by
        PyPI, and each release was built for a few CUDA variants and Python versions only. So a
        pinned "torch==1.7.1+cu110" from an old README cannot install on a Python newer than that
        release, and "from versions: 2.2.0, ..." says the interpreter is Python 3.12, whose first
        torch is 2.2.

    How to fix:
        Name the release, not the file, and let pip pick the wheel for this interpreter: the
        release nearest the one asked for that has wheels for this Python (and the asked CUDA
        variant, from PyTorch's index: pip install torch==V --index-url
        https://download.pytorch.org/whl/cuXYZ); or keep the pinned release in a new environment
        of a Python it was built for (python3.X -m venv).

    References:
        - https://packaging.python.org/en/latest/specifications/platform-compatibility-tags/
        - https://pytorch.org/get-started/previous-versions/
        - https://github.com/pypa/pip/blob/26.2.1/src/pip/_internal/resolution/resolvelib/factory.py
    """
    symptoms = ticket_symptoms(f)
    if not symptoms:
        return
    python, said = _python_of_paste(f, symptoms)
    index = _index_of_paste(symptoms)
    platform = _platform_of_paste(f, symptoms)
    wheel = next((s for s in ticket_all(f, "pip:unsupported-wheel") if _name(s.get("dist")) == PACKAGE), None)
    if wheel:
        yield _unsupported_wheel(f, wheel, python, said, platform)
        return
    for refused in ticket_all(f, "pip:no-version-satisfies"):
        req = _requirement(refused.get("req"))
        if req and req["name"] == PACKAGE:
            if _index_unread(symptoms, refused):
                return  # pip saw no release because it read no index: that is the fault, not the wheels
            ended = wheels.series_past_end(req["release"]) if req["op"] in ("==", "===") else None
            if ended is not None:
                yield _not_a_release(refused, req, ended)
                return
            yield _with_index(_no_version(f, refused, req, python, said, platform, index), index)
            return
    needs = first_symptom(f, "pip:requires-python-package")
    if needs and _name(needs.get("package")) == PACKAGE:
        yield _requires_python(needs)


def _not_a_release(s: dict, req: Dict[str, str], ended: dict) -> Hit:
    """A pin past the last minor of an ended series (torch==1.15.0: 1.x ended at 1.13, the next
    release was 2.0.0; knowledge/torch_wheels.toml [[series]]): no platform has it, the pin is wrong
    (a typo for 1.5.0, a README's slip). Info: nothing is wrong with the machine."""
    last = f"{ended['major']}.{ended['last_minor']}"
    return Hit(message=f"torch=={req['version']} is not a torch release (line {s['line']}): torch {ended['major']}.x ended "
                       f"at {last} and the next release was {ended['next']}, so pip finds it on no platform; the pinned "
                       "version is wrong (a typo, or a README's slip), not this Python or platform",
               severity="info",
               fix="python3 -m pip index versions torch   # the releases this interpreter can install: pin one of them",
               evidence={**ticket_evidence(s), "requirement": f"{req['name']}{req['op']}{req['version']}",
                         "series_last_minor": last})


# pip's own lines saying an index was not read (pip.toml, netclient.toml): skipped as an insecure
# http:// host, or a connection, proxy, TLS or HTTP failure on the way to it.
_INDEX_UNREAD = ("pip:untrusted-host-ignored", "pip:fetch-url-failed", "pip:ssl-certificate-problem",
                 "pip:ssl-verification-failed", "pip:proxy-connection-failed", "pip:connection-failed",
                 "pip:connection-timeout", "pip:retrying-connection-broken", "pip:read-timed-out",
                 "pip:http-client-error", "pip:http-server-error", "pip:http-error-while-getting")


def _index_unread(symptoms: Dict[str, dict], refused: dict) -> bool:
    """An empty (or unshown) "from versions" list in a paste where pip says it could not read an
    index: no release was seen at all, so nothing can be said of the wheels."""
    listed = [v for v in str(refused.get("versions") or "").split(",") if v.strip() and v.strip() != "none"]
    return not listed and any(k in _INDEX_UNREAD or k.startswith("netclient:") for k in symptoms)


# --- What the paste says of the interpreter --------------------------------------------------------

def _name(value) -> str:
    return str(value or "").strip().lower().replace("_", "-")


def _python_of_paste(f: FactView, symptoms: Dict[str, dict]) -> Tuple[Optional[str], str]:
    """The user's CPython minor and where the paste says it; (None, "") when it does not."""
    for sid in _PYTHON_SAID_BY_PIP:
        s = symptoms.get(sid)
        py = releases.python_minor(s.get("python")) if s else None
        if py:
            return py, f"pip's line {s['line']}"
    py = releases.python_minor(f.get("torch.python_version"))
    if py:
        return py, "the pasted environment report"
    s = symptoms.get("prose:python-version-said")
    py = releases.python_minor(s.get("python")) if s else None
    return (py, f"line {s['line']}") if py else (None, "")


def _index_of_paste(symptoms: Dict[str, dict]) -> Optional[str]:
    """The first index pip said it searched (pip's "Looking in indexes: URL"), or None (PyPI)."""
    s = symptoms.get("pip:looking-in-indexes")
    return str(s.get("urls")).split(",")[0].strip() if s and s.get("urls") else None


def _with_index(hit: Hit, index: Optional[str]) -> Hit:
    """A pip install that names no index, in a paste where the user searched another one (PyTorch's
    /whl/cpu): the fix keeps it, or pip would fetch another build from PyPI."""
    if index and hit.fix.startswith("pip install ") and "--index-url" not in hit.fix.split("#")[0]:
        command, sep, comment = hit.fix.partition("   #")
        hit.fix = f"{command} --index-url {index}{sep}{comment}"
    return hit


def _platform_of_paste(f: FactView, symptoms: Dict[str, dict]) -> Optional[Tuple[str, str]]:
    """(os, cpu) the paste shows; cpu is None where only the OS is said. None when unsaid."""
    t = f.get("torch") if isinstance(f.get("torch"), dict) else {}
    if t.get("os") or t.get("python_platform"):
        os_name, cpu = node_platform(f)
        return ("macos" if "mac" in str(t.get("os") or "").lower() else os_name), cpu
    if "prose:apple-mac" in symptoms or "prose:apple-silicon-said" in symptoms:
        return "macos", None
    if "prose:windows-said" in symptoms:
        return "windows", "x86_64"
    return None


def _wheel_platform(plat: str) -> Tuple[str, str]:
    """A platform tag (manylinux_2_28_x86_64, linux_aarch64, win_amd64, macosx_11_0_arm64) as
    (os, cpu)."""
    p = plat.lower()
    os_name = "windows" if p.startswith("win") else "macos" if p.startswith("macosx") else "linux"
    cpu = ("aarch64" if p.endswith(("aarch64", "arm64")) else "x86_64" if p.endswith(("x86_64", "amd64"))
           else p.rsplit("_", 1)[-1])
    return os_name, cpu


def _where(os_name: str, cpu: Optional[str]) -> str:
    return f"{_OS_NAME.get(os_name, os_name)}{' ' + cpu if cpu else ''}"


def _requirement(text) -> Optional[Dict[str, str]]:
    """'torch==1.7.1+cu110' -> name, operator, version, release minor, local tag."""
    m = re.match(r"^\s*([A-Za-z0-9_.-]{1,80})\s{0,3}(?:\[[^\]]{0,80}\])?\s{0,3}(===|==|~=|>=|<=|!=|<|>)?\s{0,3}"
                 r"([0-9][A-Za-z0-9_.!+*]{0,60})?", str(text or ""))
    if not m:
        return None
    version = (m.group(3) or "").rstrip(".")
    release, _, local = version.partition("+")
    return {"name": _name(m.group(1)), "op": m.group(2) or "", "version": version, "release": release,
            "minor": releases.release_minor(release) or "", "local": local.lower()}


# --- The answers ------------------------------------------------------------------------------------

def _install(release: str, cuda: Optional[str], exact: bool = True) -> str:
    pin = f"torch=={release}" if exact else f'"torch{releases.pin(release)}"'
    return f"pip install {pin}" + (f" --index-url {wheels.index_url(wheels.cuda_tag(cuda))}" if cuda else "")


def _new_env(python: str, release: str, cuda: Optional[str], windows: bool) -> str:
    what = f"torch=={release}" + (f" --index-url {wheels.index_url(wheels.cuda_tag(cuda))}" if cuda else "")
    return wheels.venv_command(python, what, windows)


def _env_for(release: str, minor: str, python: str, asked: Optional[str], os_name: str, cpu: str) -> str:
    """A new environment of the Python nearest this one that torch ``minor`` has wheels for, with
    ``release`` installed in it."""
    pys = releases.pythons_of(minor)
    alt = pys[-1] if version_of(python) > version_of(pys[-1]) else pys[0]
    cuda = _variant(minor, asked, os_name, cpu)[0] if wheels.cuda_variants(minor, os_name, cpu) else None
    return _new_env(alt, release, cuda, os_name == "windows")


def _variant(minor: str, asked: Optional[str], os_name: str, cpu: str) -> Tuple[Optional[str], str]:
    """The CUDA variant of torch ``minor`` to install for an asked one ('11.0'): the asked one where
    PyTorch built it, else the newest below it (a driver that ran the asked CUDA runs it), else the
    oldest above; with the words that say so. (None, why) when knowledge lists none."""
    have = wheels.cuda_variants(minor, os_name, cpu)
    if not asked:
        return None, ""
    if not have:
        return None, f"hpcdoctor's tables list no CUDA wheels of torch {minor} for {_where(os_name, cpu)}"
    if asked in have:
        return asked, ""
    below = [c for c in have if version_of(c) <= version_of(asked)]
    pick = below[-1] if below else have[0]
    with_it = [m for m in releases.known_minors() if asked in wheels.cuda_variants(m, os_name, cpu)]
    where = (f"; the +{wheels.cuda_tag(asked)} builds are torch {with_it[0]}" + (f"-{with_it[-1]}" if len(with_it) > 1 else "")
             if with_it else f"; no release in hpcdoctor's tables has +{wheels.cuda_tag(asked)} builds")
    return pick, (f"torch {minor} has no +{wheels.cuda_tag(asked)} build (its CUDA builds for "
                  f"{_where(os_name, cpu)}: {', '.join(have)}), so +{wheels.cuda_tag(pick)}"
                  + ("" if below else f", which needs a driver for CUDA {pick}") + where)


def _unsupported_wheel(f, s, python, said, platform) -> Hit:
    version, pytag = str(s.get("version") or ""), str(s.get("pytag") or "")
    release, _, local = version.partition("+")
    minor = releases.release_minor(release)
    w_os, w_cpu = _wheel_platform(str(s.get("plat") or ""))
    m = re.match(r"^cp(\d)(\d{1,2})$", pytag)
    w_py = f"{m.group(1)}.{m.group(2)}" if m else None
    asked = wheels.cuda_of_tag(local)
    os_name, cpu = platform if platform else (w_os, w_cpu)
    cpu = cpu or w_cpu
    wrong = []
    if python and w_py and python != w_py:
        wrong.append(f"this interpreter is Python {python} ({said}), the wheel is for CPython {w_py} ({pytag})")
    if platform and (os_name, cpu) != (w_os, w_cpu):
        wrong.append(f"this machine is {_where(*platform)}, the wheel is for {_where(w_os, w_cpu)}")
    why = "; ".join(wrong) or (f"the wheel is for CPython {w_py or pytag} on {_where(w_os, w_cpu)} only, and this "
                               "interpreter is another Python version or platform")
    message = f"pip refused {s.get('wheel')} (line {s['line']}): {why}"
    if local.startswith("rocm") and wheels.rocm_wheel_gfx_list(version) and (python is None or python in
                                                                              releases.pythons_of(minor or "")):
        fix, note = f"{_install(release, None)} --index-url {wheels.index_url(local)}   # pip picks the file for this interpreter", ""
    elif local and not asked and local != "cpu":
        # A build from outside PyTorch's index (+git..., a site's own): only its maker has other files of it.
        fix = ("python3 -m pip debug --verbose   # the tags this interpreter accepts; this wheel "
               f"(+{local}, not one of PyTorch's builds) needs {pytag} on {_where(w_os, w_cpu)}")
        note = ""
    else:
        fix, note = _release_for(release, minor, asked, python, os_name, cpu)
    return Hit(message=message + (f"; {note}" if note else ""), fix=fix,
               evidence={**ticket_evidence(s), "wheel.python": w_py or pytag, "wheel.platform": str(s.get("plat")),
                         "python": python})


def _release_for(release: str, minor: Optional[str], asked: Optional[str], python: Optional[str],
                 os_name: str, cpu: str, listed: Optional[List[str]] = None) -> Tuple[str, str]:
    """(fix, note): install ``release`` by name where this Python has wheels of it, else the nearest
    release that has, else a new environment of a Python the release was built for."""
    if os_name == "macos" and asked:
        return (f"pip install torch=={release}   # from PyPI, without +{wheels.cuda_tag(asked)}: torch's macOS wheels "
                "carry no CUDA (Apple GPUs are used through MPS)",
                "PyTorch's CUDA builds are for Linux and Windows only (hpcdoctor's wheel tables), never macOS")
    known = minor in releases.known_minors() if minor else False
    if not known:
        probe = ("pip index versions torch" + (f" --index-url {wheels.index_url(wheels.cuda_tag(asked))}" if asked else ""))
        return (f"{probe}   # the releases with a wheel for this interpreter; install one by its version",
                f"torch {release or '?'} is outside hpcdoctor's wheel tables ({releases.known_minors()[0]}-"
                f"{releases.known_minors()[-1]}): which Pythons and CUDA builds it had is not known here")
    pys = releases.pythons_of(minor)
    if python is None or python in pys:
        cuda, why = _variant(minor, asked, os_name, cpu)
        if asked and cuda is None and why:
            return f"pip index versions torch --index-url {wheels.index_url(wheels.cuda_tag(asked))}   # {why}", why
        span = f"Python {pys[0]}-{pys[-1]}"
        comment = (f"pip picks the file for this interpreter (torch {minor} has wheels for {span})" if python is None
                   else f"torch {minor} has wheels for Python {python}")
        return f"{_install(release, cuda)}   # {comment}", why
    # This Python has no wheel of the release: the nearest release that has, or the release in a new env.
    mine = [m for m in releases.known_minors() if python in releases.pythons_of(m)]
    if listed:
        mine = [m for m in mine if m in {releases.release_minor(v) for v in listed}] or mine
    env = _env_for(release, minor, python, asked, os_name, cpu)
    if not mine:
        return (f"{env}   # Python {python} has no torch wheels of any release in hpcdoctor's tables (2.0-"
                f"{releases.known_minors()[-1]}); torch {minor} has wheels for Python {pys[0]}-{pys[-1]}",
                f"Python {python} has no wheels of torch {minor} (it has Python {pys[0]}-{pys[-1]})")
    near = releases.nearest(mine, minor)[0]
    cuda, why = _variant(near, asked, os_name, cpu)
    first = releases.first_release_for(python)
    note = (f"torch {minor} has wheels for Python {pys[0]}-{pys[-1]} only; Python {python}'s torch releases run "
            f"{'from ' + first if first != releases.known_minors()[0] else 'up'} to "
            f"{releases.last_release_for(python)}, the nearest is {near}" + (f"; {why}" if why else "")
            + f"; or keep torch {release} in a new environment: {env}")
    return f"{_install(near, cuda, exact=False)}   # the nearest release with wheels for Python {python}", note


def _no_version(f, s, req, python, said, platform, index=None) -> Hit:
    listed = [v.strip() for v in str(s.get("versions") or "").split(",") if v.strip() and v.strip() != "none"]
    asked = wheels.cuda_of_tag(req["local"]) or wheels.cuda_of_tag(str(index or "").rstrip("/").rsplit("/", 1)[-1])
    plain = sorted({v.split("+")[0] for v in listed}, key=lambda v: version_of(v) or version_of("0"))
    by_list = releases.python_of_listing(plain) if plain else []
    told = f"{req['name']}{req['op']}{req['version']}"
    parts = [f"pip found no file of {told} this interpreter can install (line {s['line']})"]
    if python is None and len(by_list) == 1:
        python, said = by_list[0], f"the listed releases: {', '.join(plain[:3])}{', ...' if len(plain) > 3 else ''}"
        first = releases.first_release_for(python)
        parts.append(f"the list pip printed is Python {python}'s (its first torch release is {first})")
    elif python:
        parts.append(f"this interpreter is Python {python} ({said})")
    os_name, cpu = platform if platform else ("linux", "x86_64")
    cpu = cpu or "x86_64"
    if not listed and s.get("versions") is not None:
        parts.append("no release at all has a wheel for this interpreter on the indexes searched")
        release = req["release"] or (releases.known_minors()[-1] + ".0")
        minor = releases.release_minor(release)
        pys = releases.pythons_of(minor) if minor else []
        if python and (not releases.first_release_for(python) or (pys and python not in pys)):
            # The Python is the cause: a release it has wheels of, or a new environment.
            fix, note = _release_for(release, minor, asked, python, os_name, cpu)
            if not releases.first_release_for(python):
                note = (f"Python {python} has no torch wheels of any release 2.0-{releases.known_minors()[-1]} "
                        "(hpcdoctor's tables)")
        else:
            # A Python torch builds wheels for (or one not said) and still none: the interpreter's tags.
            span = (f"torch {minor} has wheels for Python {pys[0]}-{pys[-1]}" + (f", {python} among them" if python else "")
                    if pys else f"torch {release} is outside hpcdoctor's wheel tables")
            note = (f"{span}; an interpreter whose tags match none of torch's wheels (a PyPy or 32-bit Python, or a "
                    "platform the wheels are not built for: they are CPython wheels for Linux x86_64 and aarch64, "
                    "Windows x86_64 and macOS arm64)")
            fix = ("python3 -m pip debug --verbose   # this interpreter's Python version, implementation and "
                   "the wheel tags it accepts")
        return Hit(message="; ".join(parts + [note]), fix=fix,
                   evidence={**ticket_evidence(s), "requested": told, "python": python})
    if req["local"].startswith("cu") and req["release"] in plain and not any("+" in v for v in listed):
        parts.append(f"torch {req['release']} is listed, but without its +{req['local']} build: the +cuXYZ "
                     "builds are served only by PyTorch's own index, not by PyPI")
        fix, note = _release_for(req["release"], req["minor"], asked, python, os_name, cpu)
        return Hit(message="; ".join(parts + ([note] if note else [])), fix=fix,
                   evidence={**ticket_evidence(s), "requested": told, "python": python})
    if python and not releases.first_release_for(python):
        parts.append(f"Python {python} has no torch wheels of any release 2.0-{releases.known_minors()[-1]} "
                     "(hpcdoctor's tables)")
    near = _nearest_listed(plain, req["release"])
    outside = bool(near) and releases.release_minor(near) not in releases.known_minors()
    if outside and version_of(req["release"] or "") is not None and version_of(near) < version_of(req["release"]):
        # Only releases older than the asked one, and older than the tables: nothing to install.
        parts.append(f"pip lists only torch {plain[0]}-{plain[-1]} for this interpreter, older than "
                     f"{req['release']}: a Python or platform that newer torch releases have no wheels for (a 32-bit or PyPy "
                     "Python, an old Python, a platform without wheels)")
        return Hit(message="; ".join(parts), fix=("python3 -m pip debug --verbose   # this interpreter's Python "
                                                  "version, implementation and the wheel tags it accepts"),
                   evidence={**ticket_evidence(s), "requested": told, "python": python, "listed": ", ".join(listed[:12])})
    if near:
        parts.append(f"{req['release'] or 'it'} has no wheel for this interpreter; the nearest listed release is {near}")
    fix, note = _release_for(near or req["release"], releases.release_minor(near or req["release"]), asked,
                             python, os_name, cpu, listed=plain)
    pys = releases.pythons_of(req["minor"]) if req["minor"] else []
    if near and python and pys and python not in pys and releases.release_minor(near) != req["minor"]:
        keep = (f"torch {req['minor']} has wheels for Python {pys[0]}-{pys[-1]}: to keep {req['release']}, a new "
                f"environment: {_env_for(req['release'], req['minor'], python, asked, os_name, cpu)}")
        note = f"{note}; {keep}" if note else keep
    if outside:
        fix = f"{_install(near, None)}   # listed by pip for this interpreter"
        if asked:
            fix += (f"; for its +{req['local']} build: pip index versions torch --index-url "
                    f"{wheels.index_url(req['local'])}")
    return Hit(message="; ".join(parts + ([note] if note else [])), fix=fix,
               evidence={**ticket_evidence(s), "requested": told, "python": python, "listed": ", ".join(listed[:12])})


def _nearest_listed(listed: List[str], asked: str) -> Optional[str]:
    """Of the listed releases, the one nearest the asked: its own minor's newest, else the first
    newer one, else the newest older one."""
    vs = [v for v in listed if version_of(v) is not None]
    if not vs:
        return None
    want = version_of(asked) if asked else None
    if want is None:
        return vs[-1]
    minor = releases.release_minor(asked)
    same = [v for v in vs if releases.release_minor(v) == minor]
    if same:
        return same[-1]
    up = [v for v in vs if version_of(v) > want]
    pick = releases.release_minor(up[0] if up else vs[-1])
    return [v for v in vs if releases.release_minor(v) == pick][-1]


def _requires_python(s) -> Hit:
    python = releases.python_minor(s.get("python"))
    last = releases.last_release_for(python) if python else None
    fix = (f"{_install(last, None, exact=False)}   # the newest torch with wheels for Python {python}" if last else
           f"python3 --version   # Python {s.get('python')} is outside torch's '{s.get('spec')}': a new environment "
           "with a Python inside it")
    return Hit(message=f"torch requires Python {s.get('spec')}, this interpreter is {s.get('python')} (pip, line "
                       f"{s['line']})", fix=fix, evidence=ticket_evidence(s))
