"""A compiler's own runtime library missing at link time because the compilers of one build are of
different versions: gcc links Fortran objects against the libgfortran of its own version, which only
the gfortran of that version installs (knowledge/messages/linker.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "gcc-gfortran-version-mismatch"

_FIX = ("gcc --version | head -1; gfortran --version | head -1   # two different versions: the build mixes the compilers\n"
        "gcc -print-file-name=libgfortran.so   # a bare \"libgfortran.so\" back: this gcc's own directory has none\n"
        "gfortran -print-file-name=libgfortran.so   # where the gfortran in use keeps its runtime\n"
        "sudo apt-get install gfortran-$(gcc -dumpversion | cut -d. -f1)   # Debian/Ubuntu: the gfortran of gcc's own "
        "version (RHEL: sudo dnf install gcc-gfortran, which follows gcc's version)\n"
        "# or build with a matching pair, as the project's make or CMake take them: make CC=gcc-9 FC=gfortran-9, "
        "or module load of one gcc that provides both")


@rule("SW063", SYMBOL, "warning",
      "the linker finds no libgfortran for gcc: the gfortran installed is of another version than gcc, or missing",
      impact=4)
def gcc_gfortran_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, a linker that finds no GNU Fortran runtime: GNU ld's and gold's
        "/usr/bin/ld: cannot find -lgfortran" (binutils 2.38 and later add ": No such file or
        directory"), and lld's "unable to find library -lgfortran". A warning: the line states that
        no libgfortran was found where the compiler driver looked, and a gcc and gfortran of
        different versions is the usual cause; a gfortran not installed at all gives the same line.
        Apple ld64's "library not found for -lgfortran" is catalogued but not read (on macOS
        gfortran comes apart from the system compiler).

    Why it matters:
        gcc passes the linker its own versioned library directory (/usr/lib/gcc/<triple>/<N>/),
        and distributions install libgfortran.so there with the gfortran of the same version
        (gfortran-N and libgfortran-N-dev on Debian and Ubuntu). A library that mixes C and Fortran
        objects and is linked by gcc (OpenBLAS's shared library, a Python extension) finds no
        libgfortran when gfortran is of another version than gcc, or absent, and the build stops.

    How to fix:
        Compare the two versions; install the gfortran of gcc's own version (or point CC and FC at
        a matching pair, or load one compiler module that provides both), then rebuild.

    References:
        - https://gcc.gnu.org/onlinedocs/gcc/Developer-Options.html (-print-file-name=library)
        - https://gcc.gnu.org/onlinedocs/gcc/Directory-Options.html (the driver's library search)
        - https://sourceware.org/git/?p=binutils-gdb.git;a=blob;f=ld/ldfile.c (ldfile_open_file: "cannot find")
        - https://github.com/llvm/llvm-project/blob/main/lld/ELF/Driver.cpp (addLibrary: "unable to find library -l")
        - https://packages.ubuntu.com/jammy/gfortran-11 (gfortran-N depends on libgfortran-N-dev: the versioned runtime)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    yield Hit(message=(f"the linker found no libgfortran (line {s.get('line')}: \"{told_text(s)}\"): gcc looks for it in "
                       "its own version's directory, where only the gfortran of that same version installs it; the "
                       "gfortran here is most likely of another version than gcc (or not installed)"),
              fix=_FIX, evidence=told_evidence(s))
