"""A program or extension the loader cannot start because the libstdc++.so.6 it found is older than
the one it was linked against: glibc's "libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by
X)" (knowledge/messages/loader.toml version-not-found), told apart by where that copy lives (a conda
environment, the system's, a GCC module's, one an application bundles), and dated by libstdc++'s own
ABI table (knowledge/libstdcxx_versions.toml). torch's own libraries stay torch-import-failed's."""

from __future__ import annotations

import posixpath
import re
from typing import Iterator, List, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import ticket_all, ticket_symptoms, told_evidence, told_text, torch_import_frame_before
from hpcdoctor.rules._loader import _TORCH_LIB
from hpcdoctor.rules.shared_libraries import _key as glibc_version_key

_TABLE = knowledge.load("libstdcxx_versions")
_FIRST = _TABLE["symbol_versions"]["first_release"]
_NOTES = _TABLE["symbol_versions"].get("notes", {})
_SONAMES = _TABLE["sonames"]["first_release"]
_CONDA = _TABLE["conda_forge"]

_VERSION = re.compile(r"(GLIBCXX_3\.4|CXXABI_1\.3)(?:\.(\d{1,2}))?$")
_GLIBC = re.compile(r"GLIBC_2\.\d{1,3}(?:\.\d{1,3})?$")
_ELIDED = re.compile(r"\.\.\.|…")
# A conda (or mamba) environment's folder: Anaconda, Miniconda, Miniforge, Mambaforge, micromamba,
# ~/.conda/envs/NAME: where conda-forge's libstdcxx-ng puts lib/libstdc++.so.6.
_CONDA_PATH = re.compile(r"(?i)(?:conda|miniforge|mambaforge|micromamba)[^/]{0,20}/|/envs/[^/]{1,80}/")
# The distribution's own copy: /lib64, /usr/lib64, /lib, /usr/lib and their multiarch folders.
_SYSTEM = re.compile(r"^/(?:usr/)?lib(?:64|32)?/(?:[\w-]{1,40}-linux-gnu[\w]{0,8}/)?libstdc\+\+\.so")
# A compiler installed beside the system's: an environment module's GCC (/u/local/compilers/gcc/10.2.0,
# /opt/apps/gcc/11.2.0, spack's gcc-12.3.0-hash), RHEL's devtoolset or gcc-toolset.
_GCC_TREE = re.compile(r"(?i)/(?:gcc[/-](?P<v1>\d{1,2}(?:\.\d{1,2}){0,2})|(?:devtoolset|gcc-toolset)-(?P<v2>\d{1,2}))(?:[/-]|$)")
_BUNDLED = re.compile(r"(?i)matlab|mcr|/v\d{2,3}/|steam|/opt/[^/]{1,60}/")


def _key(version: str) -> Tuple[int, int]:
    m = _VERSION.match(version)
    return (0 if m.group(1).startswith("CXXABI") else 1, int(m.group(2) or 0)) if m else (9, 0)


def _release_key(release: Optional[str]) -> Tuple[int, ...]:
    return tuple(int(p) for p in release.split(".")) if release else (999,)


def _lines(f: FactView) -> List[dict]:
    """The loader's refusals naming a libstdc++ version, torch's own libraries left to torch-import-failed."""
    said_torch = "prose:importing-torch" in ticket_symptoms(f)
    out = []
    for s in ticket_all(f, "loader:version-not-found"):
        if not _VERSION.match(str(s.get("version") or "")):
            continue
        file, who = str(s.get("file") or ""), str(s.get("required_by") or "")
        if _TORCH_LIB.search(file) or _TORCH_LIB.search(who):
            continue
        if not who and (said_torch or torch_import_frame_before(f, s)):
            continue   # torch's import, told without the library that needed it: torch-import-failed's
        out.append(s)
    return out


def _copy(file: str) -> Optional[str]:
    """The loaded file as the loader named it, normalised (bin/../lib), or None where the paste gives no path."""
    file = file.lstrip("([{'\"`")   # a title wraps the loader's line: "conda-libmamba-solver (/lib64/..."
    if "libstdc++" not in file or not file.startswith(("/", "~")) or _ELIDED.search(file):
        return None
    return posixpath.normpath(file)


def _conda_prefix(path: str) -> Optional[str]:
    """The environment a path is in: the folder above its lib/ (or bin/), where it is a conda one."""
    if not _CONDA_PATH.search(path + "/"):
        return None
    parts = path.split("/")
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] in ("lib", "bin") and (i + 1 == len(parts) - 1 or parts[i] == "bin" or "site-packages" in parts[i:]
                                           or parts[i + 1].startswith(("python", "libstdc++"))):
            return "/".join(parts[:i]) or None
    return None


def _where(path: Optional[str]) -> Tuple[str, str]:
    """(kind, words): which copy of libstdc++ the loader loaded."""
    if path is None:
        return "unknown", "a libstdc++.so.6 the paste does not name"
    prefix = _conda_prefix(path)
    if prefix:
        return "conda", f"the conda environment {prefix}'s own copy ({path})"
    if _SYSTEM.match(path):
        return "system", f"the system's copy ({path})"
    m = _GCC_TREE.search(path)
    if m:
        v = m.group("v1") or m.group("v2")
        return "gcc", f"a GCC {v} installation's copy ({path}, a compiler module or toolset)"
    return "bundled", f"a copy an application bundles or a folder on LD_LIBRARY_PATH holds ({path})"


def _listed(f: FactView) -> List[Tuple[Optional[str], str, dict]]:
    """Each pasted listing of a libstdc++'s versions: (the file its strings command named, its newest version, the line)."""
    commands = sorted(ticket_all(f, "libstdcxx:listing-command"), key=lambda s: s.get("line") or 0)
    groups: dict = {}
    for s in ticket_all(f, "libstdcxx:version-listed"):
        line = s.get("line") or 0
        cmd = max((c for c in commands if (c.get("line") or 0) < line), key=lambda c: c.get("line") or 0, default=None)
        key = cmd.get("line") if cmd else None
        file = _copy(str(cmd.get("file") or "")) if cmd else None
        best = groups.get(key)
        version = str(s.get("version"))
        if best is None or _key(version)[0] == 1 and (_key(best[1])[0] != 1 or _key(version) > _key(best[1])):
            groups[key] = (file, version, s)
    return list(groups.values())


def _conda_fix(prefix: Optional[str], major: int, version: str) -> str:
    where = f"-p {prefix}" if prefix else "-p \"$CONDA_PREFIX\""
    lib = f"{prefix}/lib" if prefix else "$CONDA_PREFIX/lib"
    newest = int(_CONDA["newest"].split(".")[0])
    if major > newest:
        return (f"# conda-forge's {_CONDA['package']} goes to {_CONDA['newest']} ({_CONDA_READ}): no build of GCC {major}'s "
                f"runtime there yet; use a GCC {major} module's (module load gcc/{major}) or rebuild the program with "
                "the compiler at hand\n")
    spec = max(major, int(_CONDA["oldest"].split(".")[0]))
    return (f"conda install -y {where} -c conda-forge \"{_CONDA['package']}>={spec}\"   # GCC {spec}'s or newer "
            f"libstdc++.so.6 into {lib}\n"
            f"strings {lib}/libstdc++.so.6 | grep -c '^{version}$'   # 1: the environment's copy now has it\n")


_CONDA_READ = f"conda-forge, read {_CONDA['read']}"


@rule("SW099", "libstdcxx-older-than-binary", "error",
      "the libstdc++ the loader found is older than the one a program or extension was built against", impact=6)
def libstdcxx_older_than_binary(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, glibc's loader refusing a program or Python extension because the
        libstdc++.so.6 it loaded lacks a symbol version the object was linked against: "X:
        /lib64/libstdc++.so.6: version `GLIBCXX_3.4.21' not found (required by X)", or `CXXABI_1.3.9'
        (elf/dl-version.c match_symbol; knowledge/messages/loader.toml version-not-found), as the
        loader prints it or as a title retells it. It names the first GCC release whose libstdc++
        provides the missing version (libstdc++'s ABI policy, knowledge/libstdcxx_versions.toml),
        which copy was loaded (a conda environment's lib/, the system's /lib64 or /usr/lib, a GCC
        module's, one an application such as MATLAB bundles), and what a pasted `strings
        libstdc++.so.6 | grep GLIBCXX` listing or the user's "only has versions until CXXABI_1.3.7"
        says of a copy. GLIBC_ versions are glibc-older-than-binary's, and a failure in torch's own
        libraries torch-import-failed's.

    Why it matters:
        libstdc++ versions its symbols and only ever adds versions: a binary built by GCC 11
        requires GLIBCXX_3.4.29, and a libstdc++ from an older GCC cannot provide it. The loader
        takes the first libstdc++.so.6 on its search path (RPATH, LD_LIBRARY_PATH, the system's),
        which is often not the newest one on the machine: an old copy in a conda environment shadows
        the system's, and an old system (CentOS 7's GCC 4.8.5) has none new enough. Copying or
        symlinking another libstdc++ over a package manager's file breaks that package later.

    How to fix:
        For a conda environment's copy, install a newer runtime into it (conda install -c conda-forge
        "libstdcxx-ng>=N", N the GCC major the table names). For the system's copy, load a GCC module
        at least that new and put its lib64 first on LD_LIBRARY_PATH (or build the program with the
        node's own compiler). For a bundled copy, preload a newer one when starting the application.

    References:
        - https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-version.c;hb=refs/tags/glibc-2.42
        - https://anaconda.org/conda-forge/libstdcxx-ng
        - https://man7.org/linux/man-pages/man8/ld.so.8.html
    """
    lines = _lines(f)
    if not lines:
        return
    # The newest version wanted decides the GCC needed; a line that names its file and requirer says more.
    def weight(s: dict) -> tuple:
        v = str(s["version"])
        return (_release_key(_FIRST.get(v)), _copy(str(s.get("file") or "")) is not None, bool(s.get("required_by")))
    newest = max(lines, key=weight)
    version = str(newest["version"])
    release = _FIRST.get(version)
    named = next((s for s in sorted(lines, key=weight, reverse=True) if _copy(str(s.get("file") or ""))), None)
    path = _copy(str(named.get("file"))) if named else None
    who = str(newest.get("required_by") or next((s.get("required_by") for s in sorted(lines, key=weight, reverse=True)
                                                 if s.get("required_by")), "") or "")
    listings = _listed(f)
    if path is None:
        # the loader's line names no file, and a pasted listing shows a copy without the version: that copy
        path = next((file for file, top, _ in listings if file and _key(top)[0] == _key(version)[0]
                     and _key(top) < _key(version)), None)
    kind, where = _where(path)
    major = int(release.split(".")[0]) if release else None
    gcc = (f"GCC {release}" + (f", {_NOTES[version]}" if version in _NOTES else "")) if release else None
    needs = (f"{version} (first in {gcc}'s libstdc++)" if gcc
             else f"{version} (newer than libstdc++'s ABI table as read {_TABLE['symbol_versions']['read']})")
    missing = sorted({str(s["version"]) for s in lines}, key=lambda v: _release_key(_FIRST.get(v)))
    more = f"; missing: {', '.join(missing[-4:])}" if len(missing) > 1 else ""

    # What the paste says of a copy's newest version: a strings listing, or the user's words.
    told = []
    for file, top, s in listings:
        rel = _FIRST.get(top)
        whose = f"GCC {rel}'s" if rel else "an unknown release's"
        has = _key(top)[0] == _key(version)[0] and _key(top) >= _key(version)
        told.append(f"the listing of {file or 'a libstdc++.so.6'} (line {s.get('line')}) stops at {top}, {whose} copy"
                    + (f": it has {version}" if has else ""))
    said = ticket_all(f, "prose:libstdcxx-newest-said")
    for s in said[:1]:
        top = str(s.get("version"))
        rel = _FIRST.get(top)
        told.append(f"the user says that copy goes to {top}" + (f" (GCC {rel}'s libstdc++)" if rel else "")
                    + f" (line {s.get('line')})")
    if path:
        soname = posixpath.basename(path)
        if soname in _SONAMES:
            told.append(f"{soname} is GCC {_SONAMES[soname]}'s file name")
    glibc = [s for s in ticket_all(f, "loader:version-not-found") if _GLIBC.match(str(s.get("version") or ""))]

    m = major or 99
    series = ".".join(release.split(".")[:2]) if release and m < 5 else str(m)   # GCC 4.9, 5, 11: a module's version
    check = ((f"strings {path} | grep -E '^(GLIBCXX|CXXABI)_' | sort -V | tail -3   # the newest this copy has: "
              f"older than {version}\n") if path else
             (f"ldd {who} | grep libstdc++   # which libstdc++.so.6 the loader picks for it\n" if who.startswith("/")
              else "ldd ./PROGRAM | grep libstdc++   # which libstdc++.so.6 the loader picks (PROGRAM: the one that failed)\n"))
    module = (f"module avail gcc 2>&1 | tail -5; module load gcc/{series}   # a GCC {series} or newer module (its name at this site "
              "may differ)\n"
              "export LD_LIBRARY_PATH=\"$(dirname \"$(g++ -print-file-name=libstdc++.so.6)\")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"   "
              "# that GCC's libstdc++ first, in the job script too\n")
    rebuild = "# or rebuild it with the compiler this node has (its g++), so it asks for no newer libstdc++ than the node's\n"
    who_prefix = _conda_prefix(posixpath.normpath(who)) if who.startswith("/") and not _ELIDED.search(who) else None
    if kind == "conda":
        fix = check + _conda_fix(_conda_prefix(path), m, version)
    elif kind in ("system", "unknown") and who_prefix:
        # a conda environment's program that found the system's copy: give the environment a new one, first on the path
        fix = (check + _conda_fix(who_prefix, m, version)
               + f"export LD_LIBRARY_PATH={who_prefix}/lib${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}   # where the program does "
                 "not find its environment's lib/ by itself; or, instead of conda's:\n" + module)
    elif kind == "bundled":
        fix = (check + module.splitlines()[0] + "\n"
               + f"LD_PRELOAD=\"$(g++ -print-file-name=libstdc++.so.6)\" {who if who.startswith('/') else './PROGRAM'}   "
                 "# start it with that GCC's libstdc++ ahead of the bundled copy; or ask its vendor for a build against it\n")
    elif kind == "gcc":
        fix = (check + module + "# that is: load a newer GCC module than the one whose lib64 is on the path (module list), "
               "or rebuild the program with the loaded module's g++\n")
    else:
        fix = (check + module + rebuild
               + "# in a conda environment instead: " + _conda_fix(None, m, version).splitlines()[0].split("   #")[0].lstrip("# ") + "\n")
    if glibc:
        top = max((str(s.get("version")) for s in glibc), key=glibc_version_key)
        fix += (f"# the same paste misses {top} of glibc too (glibc-older-than-binary): a newer "
                "libstdc++ alone will not start it; build it on this OS, or run it in a container of the OS it was built on\n")
    fix = fix.rstrip("\n")
    yield Hit(message=(f"{'the program ' + who if who else 'a program or extension'} needs {needs}, and the libstdc++ "
                       f"the loader found is older: {where}{more}"
                       + (f"; {'; '.join(told)}" if told else "")
                       + f" (line {newest.get('line')}: \"{told_text(newest)}\")"),
              fix=fix, evidence={**told_evidence(newest), "libstdcxx.version": version, "libstdcxx.gcc": release,
                                 "libstdcxx.file": path, "libstdcxx.copy": kind})
