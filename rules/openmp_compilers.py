"""A build that asks for OpenMP with a compiler that has none: Apple's clang, a clang without the LLVM
OpenMP runtime, or any compiler CMake's FindOpenMP could not make work
(knowledge/messages/openmp_flags.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_symptoms, told_evidence, told_text

SYMBOL = "compiler-lacks-openmp"
# R for macOS's own advice (https://mac.r-project.org/openmp/): Apple clang compiles OpenMP with
# -Xclang -fopenmp and a libomp built for it, linked with -lomp; R reads the flags from ~/.R/Makevars.
_MAC_FIX = ("brew install libomp   # the LLVM OpenMP runtime and omp.h for Apple clang (or the libomp build R for "
            "macOS offers at https://mac.r-project.org/openmp/)\n"
            "export CPPFLAGS=\"-Xclang -fopenmp -I$(brew --prefix libomp)/include\" LDFLAGS=\"-L$(brew --prefix "
            "libomp)/lib -lomp\"   # Apple clang accepts OpenMP only through -Xclang, with libomp linked\n"
            "# or build with a compiler that has OpenMP: Homebrew's gcc (brew install gcc, then CC=gcc-NN CXX=g++-NN), "
            "or LLVM's clang (brew install llvm)")
_R_MAC_FIX = ("# R: put the same flags in ~/.R/Makevars, then install the package again:\n"
              "printf 'CPPFLAGS += -Xclang -fopenmp\\nLDFLAGS += -lomp\\n' >> ~/.R/Makevars")
_LINUX_FIX = ("cc --version; c++ --version   # the compiler the build uses\n"
              "export CC=gcc CXX=g++ FC=gfortran   # GCC builds OpenMP with -fopenmp (libgomp); on a cluster: module load "
              "gcc first\n"
              "# clang: install the LLVM OpenMP runtime that matches it (libomp-dev / libomp-devel, or the site's llvm "
              "module), which provides omp.h and libomp")


@rule("SW125", SYMBOL, "error", "a build asks for OpenMP and the compiler has none", impact=5)
def compiler_lacks_openmp(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, the clang driver's "clang: error: unsupported option '-fopenmp'"
        (Apple's clang), clang's "fatal error: 'omp.h' file not found" (no LLVM OpenMP runtime
        for it), and CMake's "Could NOT find OpenMP_CXX (missing: OpenMP_CXX_FLAGS
        OpenMP_CXX_LIB_NAMES)"; R's "ERROR: compilation failed for package '...'" names the package.

    Why it matters:
        Packages with OpenMP code (R packages with SHLIB_OPENMP flags, Python extensions, CMake
        projects) pass -fopenmp or look for omp.h; a compiler without OpenMP stops the build. Apple
        ships clang without OpenMP, so source installs on a Mac fail where the same package builds
        on a Linux node with GCC.

    How to fix:
        On macOS: install libomp (Homebrew, or R for macOS's build of it) and compile with
        -Xclang -fopenmp and -lomp (for R, in ~/.R/Makevars), or use GCC or LLVM's own clang. On
        Linux: build with GCC (module load gcc on a cluster) or install the LLVM OpenMP runtime
        for the clang in use.

    References:
        - https://mac.r-project.org/openmp/ (OpenMP on macOS with Xcode tools)
        - https://github.com/llvm/llvm-project/blob/main/clang/include/clang/Basic/DiagnosticDriverKinds.td (err_drv_unsupported_opt)
        - https://cmake.org/cmake/help/latest/module/FindOpenMP.html
        - https://openmp.llvm.org/ (the LLVM OpenMP runtime, libomp)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    sym = ticket_symptoms(f)
    mac = "prose:apple-mac" in sym or str(s.get("id")) == "openmp_flags:clang-fopenmp-unsupported"
    r_pkg = sym.get("openmp_flags:r-compilation-failed")
    what = f"the R package {r_pkg.get('package')}'s build" if r_pkg else "the build"
    why = ("Apple's clang, which has no OpenMP (it accepts it only as -Xclang -fopenmp, with libomp installed)"
           if mac else "a compiler without OpenMP support (a clang without the LLVM OpenMP runtime)")
    fix = _MAC_FIX + ("\n" + _R_MAC_FIX if r_pkg else "") if mac else _LINUX_FIX
    yield Hit(message=f"{what} asks for OpenMP and the compiler has none (line {s.get('line')}: \"{told_text(s)}\"): "
                      f"{why}",
              fix=fix, evidence=told_evidence(s))
