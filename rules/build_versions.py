"""Build tools that refuse a project because of their own release: CMake older than the project's
cmake_minimum_required (or CMake 4 refusing a project written for CMake < 3.5), and a GCC older than
an option or -march/-mcpu value the build gives it (knowledge/messages/cmake_version.toml,
compiler_options.toml, target_options.toml; the releases in knowledge/compiler_option_releases.toml)."""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, major_minor, told_evidence, told_text

CMAKE = "cmake-older-than-required"
COMPILER = "compiler-older-than-build-flags"

_CMAKE_REMOVED = "cmake_version:compatibility-below-3-5-removed"
_CMAKE_CHECK = "command -v cmake && cmake --version | head -1   # the cmake this shell runs"
# A newer CMake without root: PyPI's cmake package (binary wheels, manylinux2014 and later, x86_64,
# aarch64, ppc64le) puts cmake on the environment's PATH; conda-forge's cmake; a site module.
_CMAKE_FIX = ("module avail cmake 2>&1 | tail -5   # on a cluster: module load a cmake of at least {need} from this list\n"
              "python3 -m pip install --user 'cmake>={need}' && export PATH=\"$HOME/.local/bin:$PATH\"   # or PyPI's "
              "cmake wheel, no root needed (in a venv or conda env: pip install 'cmake>={need}' there)\n"
              "hash -r; cmake --version | head -1   # then configure again from an empty build directory "
              "(CMakeCache.txt keeps the old cmake's paths); conda: conda install -c conda-forge 'cmake>={need}'")
_CMAKE_POLICY_FIX = ("cmake --version | head -1   # CMake 4.0 or later: compatibility with projects written for CMake < 3.5 was removed\n"
                     "cmake -DCMAKE_POLICY_VERSION_MINIMUM=3.5 -S . -B build   # CMake's own way to try such a project "
                     "(or export CMAKE_POLICY_VERSION_MINIMUM=3.5 for builds that run cmake themselves: pip, a script)\n"
                     "# or configure with a CMake 3.x (python3 -m pip install --user 'cmake<4'); the lasting fix is "
                     "the project's: a cmake_minimum_required of 3.5 or later")


def _key(version: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:4])


# find_package's words where it found neither a Find module nor a config file (cmake_version.toml);
# the first says module mode was tried, so CMake had no Find module of that name.
_NOT_PROVIDED = "cmake_version:find-module-not-provided"
_NO_FIND_MODULE = (_NOT_PROVIDED, "cmake_version:config-file-not-found")
# CMake's own Find modules that appeared after 3.0, and the first release of each (knowledge/cmake_find_modules.toml).
_FIND_MODULES = knowledge.load("cmake_find_modules")["find_modules"]["added"]


def _find_module_missing(f: FactView, told: list) -> Iterator[Hit]:
    """find_package found no Find module of a name CMake ships from some release on: the CMake that
    ran is older than that release (or, with only the config-file line, the project asked for CONFIG)."""
    s = next((t for t in told if t.get("package") in _FIND_MODULES), None)
    if s is None:
        return
    package, since = str(s["package"]), _FIND_MODULES[str(s["package"])]
    # The oldest CMake named: a user who names their own and the one the module needs ("from CMake
    # v3.17 onwards") names the running one lowest.
    said = min((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "prose:cmake-version-said"),
               key=lambda t: _key(str(t.get("cmake"))), default=None)
    running = str(said["cmake"]) if said is not None else None
    if running and _key(running) >= _key(since):
        return   # this CMake has the module: the project asked for the package's own config file
    moduled = any(t.get("id") == _NOT_PROVIDED for t in told)
    quoted = f"line {s.get('line')}: \"{told_text(s)}\""
    if running:
        msg = (f"CMake {running} (line {said.get('line')}) has no Find{package} module, which CMake ships from {since} on: "
               f"find_package({package}) then looks for a {package}Config.cmake that nothing installs ({quoted})")
    else:
        msg = (f"find_package({package}) found no Find{package} module, which CMake ships from {since} on ({quoted}): the "
               f"cmake that ran is older than {since}" + ("" if moduled else ", unless the project asked for CONFIG mode"))
    fix = f"{_CMAKE_CHECK}\n" + _CMAKE_FIX.format(need=since)
    yield Hit(message=msg, fix=fix, evidence={**told_evidence(s), "cmake.required": since, "cmake.running": running},
              **({} if running or moduled else {"severity": "info"}))


@rule("SW107", CMAKE, "error", "the CMake that runs is older than the project requires, or CMake 4 refuses a project written for CMake before 3.5",
      impact=5, also={"info": "a Find module CMake ships from a later release was not found, the running CMake not shown "
                              "and only the config-file line pasted (the project may have asked for CONFIG mode)"})
def cmake_older_than_required(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, CMake refusing a project because of its own release: "CMake 3.20 or
        higher is required.  You are running version 3.19.7" (cmake_minimum_required), "An
        attempt was made to set the policy version of CMake to "3.27" which is greater than this
        version of CMake" (cmake_policy VERSION), and a policy the running CMake does not know
        ("Policy "CMP0148" is not known to this version of CMake", cmake_policy GET of one).
        find_package finding no Find module that CMake itself ships from a later release ("By not
        providing "FindCUDAToolkit.cmake" in CMAKE_MODULE_PATH ...", or "Could not find a package
        configuration file provided by "CUDAToolkit"" with the running CMake named older than 3.17;
        knowledge/cmake_find_modules.toml lists the 25 modules added after CMake 3.0). And
        the opposite case: CMake 4.0 or later refusing a project whose minimum is below 3.5
        ("Compatibility with CMake < 3.5 has been removed from CMake"). A package version refused
        by find_package is the package's, not CMake's, and is not read here.

    Why it matters:
        The configure step stops before anything builds. Clusters and older distributions ship an
        old CMake (RHEL 7's cmake is 2.8; cmake3 from EPEL), while projects raise their minimum;
        the fix is a newer CMake on PATH, not an edit of the project's CMakeLists.txt. CMake 4.0
        removed compatibility with CMake < 3.5, so a newer CMake refuses old projects instead.

    How to fix:
        Put a CMake at least as new as the project asks on PATH: the site's module (module avail
        cmake), PyPI's cmake package (pip install --user cmake, binary wheels for x86_64, aarch64
        and ppc64le), or conda-forge's cmake; then configure again from an empty build directory.
        For CMake 4 and an old project: -DCMAKE_POLICY_VERSION_MINIMUM=3.5 (or the environment
        variable of that name), CMake's documented way to try it, or a CMake 3.x.

    References:
        - https://github.com/Kitware/CMake/blob/v4.4.2/Source/cmCMakeMinimumRequired.cxx
        - https://github.com/Kitware/CMake/blob/v4.4.2/Source/cmPolicies.cxx
        - https://cmake.org/cmake/help/latest/release/4.0.html
        - https://cmake.org/cmake/help/latest/variable/CMAKE_POLICY_VERSION_MINIMUM.html
        - https://pypi.org/project/cmake/
        - https://anaconda.org/conda-forge/cmake
    """
    told = catalogued(f, CMAKE)
    if not told:
        return
    removed = next((s for s in told if s.get("id") == _CMAKE_REMOVED), None)
    older = [s for s in told if s.get("id") != _CMAKE_REMOVED and s.get("id") not in _NO_FIND_MODULE]
    if not older and not removed:
        yield from _find_module_missing(f, [s for s in told if s.get("id") in _NO_FIND_MODULE])
        return
    if older:
        s = max(older, key=lambda t: _key(str(t.get("required") or "0")))
        required, running = s.get("required"), s.get("running")
        quoted = f"line {s.get('line')}: \"{told_text(s)}\""
        if required and running:
            msg = (f"the project needs CMake {required} or newer and the cmake that ran is {running} ({quoted}): "
                   "install or load a newer CMake, not an edit of the project")
        elif required:
            msg = (f"the project sets the CMake policy version {required}, newer than the cmake that ran ({quoted}): "
                   "that cmake is older than the project needs")
        else:
            msg = (f"the project sets CMake policy {s.get('policy')}, which the cmake that ran does not know ({quoted}): "
                   "the project was written for a newer CMake than this one")
        need = major_minor(str(required)) if required else "3.16"
        fix = f"{_CMAKE_CHECK}\n" + _CMAKE_FIX.format(need=need)
        if not required:
            fix = fix.replace(f"'cmake>={need}'", "cmake").replace(f"a cmake of at least {need}", "the newest cmake")
        yield Hit(message=msg, fix=fix, evidence={**told_evidence(s), "cmake.required": required, "cmake.running": running})
        return
    s = removed
    yield Hit(message=(f"line {s.get('line')}: \"{told_text(s)}\": this is CMake 4.0 or later, which no longer configures "
                       "projects whose cmake_minimum_required is below 3.5; the CMake is newer than the project, not older"),
              fix=_CMAKE_POLICY_FIX, evidence=told_evidence(s))


_RELEASES = knowledge.load("compiler_option_releases")
_FEATURE_MODIFIER = "target_options:aarch64-invalid-feature-modifier"
_BY_OPTION = {o["option"]: o for o in _RELEASES["option"]}
_EXTENSIONS = {e["name"]: e for e in _RELEASES.get("extension", [])}
# -std= values for C and C++ are host-compiler-too-old's (rules/toolchain_releases.py).
_STD_C = re.compile(r"^-std=(?:c|gnu)(?:\+\+)?[0-9a-z]{1,3}$")
_SAID_VERSION = re.compile(r"^(\d{1,2})\.(\d{1,2})")


def _refused(s: dict) -> Optional[str]:
    """The option as the table spells it: -fallow-argument-mismatch, -march=znver4, -mcpu=a64fx."""
    if s.get("option"):
        return str(s["option"]).rstrip(".,;:")
    value, flag = s.get("value"), s.get("flag")
    if value and flag:
        return f"-m{'arch' if flag == 'tune' else flag}={value}"
    return None


def _lookup(opt: str) -> Optional[dict]:
    row = _BY_OPTION.get(opt)
    if row is None and opt.startswith(("-march=", "-mtune=")):
        row = _BY_OPTION.get("-mcpu=" + opt.split("=", 1)[1])   # aarch64: -march/-mtune refuse a CPU name too
    if row is None and opt.startswith("-mcpu="):
        row = _BY_OPTION.get("-march=" + opt.split("=", 1)[1])
    return row


def _extension_refused(s: dict) -> Optional[Tuple[str, dict]]:
    """aarch64's "invalid feature modifier": the modifier GCC names, or else the newest of the value's
    modifiers, as (what to call it, a row of the table shaped as an option's). None where a modifier
    the table does not date is among them (a typo, or one older than the release notes' naming)."""
    if s.get("id") != _FEATURE_MODIFIER:
        return None
    named = str(s.get("modifier") or "")
    names = [named] if named else [m for m in str(s.get("modifiers") or "").split("+") if m]
    names = [n[2:] if n.startswith("no") and n[2:] in _EXTENSIONS else n for n in names]   # +nosve turns sve off
    if not names or any(n not in _EXTENSIONS for n in names):
        return None
    newest = max((_EXTENSIONS[n] for n in names), key=lambda e: _key(e["gcc"]))
    same = [n for n in dict.fromkeys(names) if _EXTENSIONS[n]["gcc"] == newest["gcc"]]
    what = " and ".join(f"+{n}" for n in same) + f" (in {s.get('option')})"
    return what, {"option": what, "gcc": newest["gcc"], "language": "AArch64", "source": newest["source"]}


def _gcc_version(f: FactView) -> Optional[str]:
    gcc = f.get("host_compilers.gcc")
    if isinstance(gcc, dict) and gcc.get("version"):
        return str(gcc["version"])
    return None


@rule("SW108", COMPILER, "error", "the compiler is older than an option or CPU name the build gives it", impact=5)
def compiler_older_than_build_flags(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, GCC refusing an option or a -march/-mcpu value that a newer GCC
        release accepts: "gfortran: error: unrecognized command line option
        '-fallow-argument-mismatch'" (new in GCC 10), "cc1: error: bad value 'znver4' for
        '-march=' switch" (GCC 12.3/13), "unknown value 'neoverse-v2' for '-mcpu'" (GCC 13),
        "unrecognized argument in option '-mcpu=...'", aarch64's "invalid feature modifier in
        '-march=armv8.2-a+sve+fp16+dotprod'" (the newest of its modifiers, +sve and +dotprod: GCC 8).
        Only options (and feature modifiers) that
        knowledge/compiler_option_releases.toml dates from GCC's release notes are answered: any
        other refused option is a typo or another compiler's option (mpi-wrapper-wraps-other-compiler,
        x86-build-flags-on-arm), never an old GCC; C and C++ -std= values are host-compiler-too-old's.

    Why it matters:
        Build systems written on a current workstation pass the newest options; a cluster's system
        GCC (CentOS 7's 4.8.5, Ubuntu 20.04's 9.x) does not know them, and every compile of the
        build stops at the same refusal.

    How to fix:
        Use a GCC at least as new as the release that introduced the option: the site's modules
        (module avail gcc), conda-forge's compilers, or devtoolset/gcc-toolset on RHEL; then rebuild
        from a clean build directory so the build records the new compiler.

    References:
        - https://gcc.gnu.org/gcc-10/changes.html (Fortran: -fallow-argument-mismatch)
        - https://gcc.gnu.org/gcc-11/changes.html (x86-64-v2/v3/v4, sapphirerapids, znver3, neoverse-v1/n2)
        - https://gcc.gnu.org/gcc-13/changes.html (znver4, graniterapids, neoverse-v2)
        - https://gcc.gnu.org/gcc-14/changes.html (znver5)
        - https://gcc.gnu.org/onlinedocs/gcc/x86-Options.html
        - https://gcc.gnu.org/onlinedocs/gcc/AArch64-Options.html
    """
    for s in f.get("ticket.symptoms") or []:
        if not isinstance(s, dict) or COMPILER not in (s.get("rules") or []):
            continue
        opt = _refused(s)
        if not opt or _STD_C.match(opt):
            continue
        row = _lookup(opt)
        extension = _extension_refused(s)
        if extension is not None:
            opt, row = extension
        if row is None:
            continue
        # an x86 CPU refused by a compiler for Arm is x86-build-flags-on-arm's, an Arm CPU refused by an
        # x86 compiler a cross build's flag: only a refusal by a compiler of the row's own architecture
        arm_said = s.get("id") == "target_options:aarch64-unknown-arch-value"
        if row["language"] in ("x86", "AArch64") and (row["language"] == "AArch64") != arm_said \
                and s.get("id") in ("target_options:aarch64-unknown-arch-value", "compiler_options:x86-bad-march-value"):
            continue
        first = row["gcc"]
        backports = row.get("backports") or []
        since = f"GCC {first}" + (f" (and {', '.join(backports)} of older series)" if backports else "")
        have = _gcc_version(f)
        older = ""
        if have:
            m = _SAID_VERSION.match(have)
            if m and (int(m.group(1)), int(m.group(2))) < _key(first)[:2]:
                older = f"; this node's gcc is {have}, older than that"
        prog = str(s.get("program") or "gcc").rsplit("/", 1)[-1].split(":")[0] or "gcc"
        verb = "are" if extension is not None and " and " in extension[0].split(" (in ")[0] else "is"
        yield Hit(message=(f"line {s.get('line')}: \"{told_text(s)}\": {opt} {verb} accepted from {since} on "
                           f"(GCC's release notes), so the compiler that ran is older than the build's flags{older}"),
                  fix=(f"{prog} --version | head -1   # the release that refused {opt}: it needs {first} or newer\n"
                       f"module avail gcc 2>&1 | tail -5   # on a cluster: module load a GCC of at least {first}, "
                       "then rebuild from a clean build directory\n"
                       "# without modules: conda install -c conda-forge compilers (a current GCC in the environment), "
                       "or on RHEL 8/9: sudo dnf install gcc-toolset-13 && scl enable gcc-toolset-13 bash"),
                  evidence={**told_evidence(s), "option": opt, "first_gcc": first, "source": row["source"][:160]})
        return
