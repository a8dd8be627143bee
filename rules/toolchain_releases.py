"""A compiler release older than what a build asks of it: a GCC whose default (or newest) language
standard is older than the code (knowledge/messages/compiler_std.toml) or whose release the Linux
kernel's own check refuses (linux_kernel_build.toml), and a ROCm whose clang does not
know the --offload-arch option hipcc's tools pass (knowledge/messages/rocm_clang.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "host-compiler-too-old"
ROCM = "rocm-release-too-old"

# Standards a -std= option names, with the year they mean; anything else in an "unrecognized" line is a
# misspelling, not an old compiler. GCC's aliases: 0x=11, 1y=14, 1z=17, 2a=20, 2b=23, 2c=26; C's 9x/1x/2x.
_CXX_YEAR = {"0x": 2011, "11": 2011, "1y": 2014, "14": 2014, "1z": 2017, "17": 2017, "2a": 2020, "20": 2020,
             "2b": 2023, "23": 2023, "2c": 2026, "26": 2026}
_C_YEAR = {"99": 1999, "9x": 1999, "11": 2011, "1x": 2011, "17": 2017, "18": 2017, "2x": 2023, "23": 2023, "2y": 2023}


def _standard(std: str) -> Optional[str]:
    """'c++17' -> 'C++17', 'gnu11' -> 'C11'; None for a value no standard has."""
    s = std.lower()
    for prefix in ("gnu++", "c++"):
        if s.startswith(prefix) and s[len(prefix):] in _CXX_YEAR:
            return f"C++{str(_CXX_YEAR[s[len(prefix):]])[2:]}"
    for prefix in ("gnu", "c"):
        if s.startswith(prefix) and s[len(prefix):] in _C_YEAR:
            return f"C{str(_C_YEAR[s[len(prefix):]])[2:]}"
    return None


_C_FIX = ("gcc --version | head -1   # GCC before 5 compiles C as gnu89 by default: no declarations in a 'for' (GCC 5 and later: gnu11)\n"
          "export CFLAGS=\"-std=gnu99 $CFLAGS\"   # then rerun the build's configure/make; a script that calls $CC itself: add -std=gnu99 after $CC\n"
          "module avail gcc 2>&1 | tail -5   # or a newer compiler: module load one of GCC 5 or later from this list "
          "(CentOS/RHEL 7: sudo yum install devtoolset-11-gcc && scl enable devtoolset-11 bash)")


def _cxx_fix(std: str) -> str:
    return ("g++ --version | head -1   # GCC before 6 compiles C++98 by default, GCC 6-10 C++14, GCC 11 and later C++17\n"
            f"export CXXFLAGS=\"-std=gnu++{std} $CXXFLAGS\"   # then rerun configure/cmake and make, if this g++ knows -std=gnu++{std} "
            "(g++ -std=gnu++" + std + " -x c++ -E /dev/null >/dev/null && echo known)\n"
            "module avail gcc 2>&1 | tail -5   # otherwise a newer compiler: module load a GCC from this list "
            "(CentOS/RHEL 7: sudo yum install devtoolset-11-gcc-c++ && scl enable devtoolset-11 bash)")


_STD_FIX = ("gcc --version | head -1; g++ --version | head -1   # the release that refused the -std option\n"
            "module avail gcc 2>&1 | tail -5   # load a GCC that knows the standard (CentOS/RHEL 7: sudo yum install "
            "devtoolset-11-gcc-c++ && scl enable devtoolset-11 bash), then start the build again from a clean build directory")


# linux_kernel_build.toml: the kernel's #error in compiler-gcc.h (before 5.15) and scripts/cc-version.sh (5.15 on)
_KERNEL_CHECKS = ("compiler-gcc-please-use", "compiler-gcc-please-upgrade", "cc-version-too-old")
_KERNEL_FIX = ("${{CROSS_COMPILE}}gcc --version | head -1   # the compiler the kernel build ran (CROSS_COMPILE is the prefix of a "
               "cross build, e.g. aarch64-linux-gnu-): it needs {need}\n"
               "module avail gcc 2>&1 | tail -5   # a newer GCC to load; a cross build needs a newer cross toolchain instead\n"
               "make clean   # then the same make command as before, with CC= or CROSS_COMPILE= naming the newer compiler; "
               "the .config is kept (make mrproper would remove it)")


@rule("SW069", SYMBOL, "error",
      "the compiler's default or newest language standard, or its release, is older than the code or the -std option the build gives it",
      impact=5)
def host_compiler_too_old(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, a compiler saying its language standard is older than the code:
        GCC's "'for' loop initial declarations are only allowed in C99 mode" (GCC 4.x, whose C
        default is gnu89) and "... in C99 or C11 mode" (GCC 5 and later, in a C90 mode a build
        set); g++'s "<feature> only available with -std=c++NN or -std=gnu++NN" (every entry of its
        table: lambdas, initializer lists, auto, structured bindings...); libstdc++'s "#error This
        file requires compiler and library support for the ISO C++ 2011 standard"; and a -std=
        value the compiler does not know (GCC's "unrecognized command-line option '-std=c++17'",
        clang's "invalid value 'c++20' in '-std=c++20'"). A misspelt -std value is not read as an
        old compiler. The Linux kernel's own minimum-compiler checks: compiler-gcc.h's "#error Sorry,
        your version of GCC is too old - please use 5.1 or newer." (kernels before 5.15 and the
        vendor trees built on them) and scripts/cc-version.sh's "*** C compiler is too old." with
        the version found and the minimum (5.15 and later).

    Why it matters:
        GCC compiled C as gnu89 until GCC 5 (gnu11 since), C++ as C++98 until GCC 6 (gnu++14) and
        C++14 until GCC 11 (gnu++17). A cluster's system compiler (CentOS 7's GCC 4.8.5) therefore
        stops on C99 and C++11 code that newer compilers build without any -std option, and does not
        know the options for newer standards at all.

    How to fix:
        Give the standard the code needs (-std=gnu99 for C99 code; -std=gnu++11/14/17 for C++) when
        this compiler knows it, or load a newer GCC (an environment module, or devtoolset through
        scl on RHEL/CentOS 7) and rebuild from a clean build directory.

    References:
        - https://gcc.gnu.org/gcc-5/changes.html (C: the default mode is now -std=gnu11)
        - https://gcc.gnu.org/gcc-6/changes.html (C++: the default mode is now -std=gnu++14)
        - https://gcc.gnu.org/gcc-11/changes.html (C++: the default mode is now -std=gnu++17)
        - https://gcc.gnu.org/onlinedocs/gcc/C-Dialect-Options.html (-std=)
        - https://gcc.gnu.org/onlinedocs/libstdc++/manual/using.html (libstdc++ and the -std dialects)
        - https://clang.llvm.org/docs/CommandGuide/clang.html (-std=)
        - https://github.com/torvalds/linux/blob/4981f05faf3655ebaf696d08ec100cb349113cef/scripts/cc-version.sh (the kernel's check)
        - https://www.kernel.org/doc/html/latest/process/changes.html (the kernel's minimal compiler versions)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    key = str(s.get("id", "")).split(":", 1)[-1]
    quoted = f"line {s.get('line')}: \"{told_text(s)}\""
    if key == "c-for-loop-decl-c99":
        yield Hit(message=f"{quoted}: this GCC compiles C in its default gnu89 mode, which GCC used before release 5 "
                          "(GCC 5 and later default to gnu11), and the code is C99: the compiler is older than the code",
                  fix=_C_FIX, evidence=told_evidence(s))
    elif key == "c-for-loop-decl-c99-c11":
        yield Hit(message=f"{quoted}: GCC compiled C in a C90 mode and the code is C99; GCC 5 and later default to gnu11, "
                          "so the build itself set -std=c89/gnu89 or -ansi, or an older gcc is in use",
                  fix=_C_FIX, evidence=told_evidence(s))
    elif key in ("cxx-feature-needs-newer-std", "libstdcxx-requires-cxx11"):
        year = _CXX_YEAR.get(str(s.get("std") or "c++11").replace("c++", ""), 2011)
        std = str(year)[2:]
        yield Hit(message=f"{quoted}: g++ compiled the code in an older C++ mode than the C++{std} it is written in: the "
                          "default of GCC before 6 (C++98) or before 11 (C++14), or a -std the build set",
                  fix=_cxx_fix(std), evidence=told_evidence(s))
    elif key in _KERNEL_CHECKS:
        found = f" (its version: {s['found']})" if s.get("found") else ""
        need = f"{s.get('compiler') or 'GCC'} {s['required']} or newer" if s.get("required") else "a newer release"
        yield Hit(message=f"{quoted}: the Linux kernel tree's own minimum-compiler check refused the compiler{found}: "
                          f"the tree needs {need}",
                  fix=_KERNEL_FIX.format(need=need), evidence=told_evidence(s))
    else:
        std = str(s.get("std") or "")
        named = _standard(std)
        if named is None:
            return
        who = "clang" if key == "clang-invalid-std" else "this GCC"
        yield Hit(message=f"{quoted}: {who} does not know -std={std}: its release predates the {named} standard the build asks for",
                  fix=_STD_FIX, evidence=told_evidence(s))


_ROCM_FIX = ("cat /opt/rocm/.info/version 2>/dev/null || /opt/rocm/bin/hipconfig --version   # ROCm before 3.5: its clang has no --offload-arch\n"
             "module avail rocm 2>&1 | tail -5   # load (or install) ROCm 3.5 or later, which the tool passing --offload-arch expects\n"
             "# with the old release only: the option it knows is --amdgpu-target=<gfx>, e.g. hipcc --amdgpu-target=gfx900")


@rule("SW067", ROCM, "error", "the ROCm release's clang does not know --offload-arch: ROCm is older than the tool expects",
      impact=5)
def rocm_release_too_old(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, the ROCm clang driver refusing the GPU target option that hipcc,
        hipfc, CMake's HIP language and Kokkos pass: "clang-10: error: unsupported option
        '--offload-arch=gfx900'" (clang's err_drv_unsupported_opt). Only clang's own words count:
        a gcc or c++ handed the same option ("unrecognized command-line option '--offload-arch=...'")
        is a build that did not use the HIP compiler at all, and is not read here.

    Why it matters:
        ROCm releases before 3.5 took the GPU target as --amdgpu-target=gfxNNN; tools written for
        later releases pass --offload-arch, which the old clang refuses, so nothing compiles.

    How to fix:
        Check the ROCm release; load or install ROCm 3.5 or later (or build with the old release's
        --amdgpu-target option where the tool lets you).

    References:
        - https://github.com/ROCm/hipfort/issues/12 (the maintainer: hipfort needs ROCm 3.5)
        - https://github.com/kokkos/kokkos/pull/4874 (--amdgpu-target replaced by --offload-arch)
        - https://github.com/llvm/llvm-project/blob/main/clang/include/clang/Basic/DiagnosticDriverKinds.td (err_drv_unsupported_opt)
        - https://rocm.docs.amd.com/projects/HIP/en/latest/ (hipcc and --offload-arch)
    """
    told = catalogued(f, ROCM)
    if not told:
        return
    s = told[0]
    major = s.get("clang_major")
    which = f"clang {major}" if major else "this clang"
    yield Hit(message=(f"line {s.get('line')}: \"{told_text(s)}\": {which}, the compiler of the installed ROCm, does not know "
                       "--offload-arch, which ROCm's clang took from release 3.5: the ROCm release is older than the tool "
                       "passing the option expects"),
              fix=_ROCM_FIX, evidence=told_evidence(s))
