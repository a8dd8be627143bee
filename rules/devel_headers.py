"""A source build that stops because a system library's development files are not installed: its
header (GCC's and Clang's missing #include, autoconf's failed AC_CHECK_HEADER), its unversioned
lib<name>.so (GNU ld's, lld's and ld64's "-l<name>" not found, autoconf's AC_CHECK_LIB), its .pc file
(pkg-config, pkgconf) or both as CMake's FindPackageHandleStandardArgs reports them (missing:
<NAME>_INCLUDE_DIR, <NAME>_LIBRARY). Catalogued in knowledge/messages/build.toml, linker.toml,
autoconf.toml, pkgconfig.toml and cmake_find.toml; packages from knowledge/devel_packages.toml."""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_read, told_evidence, told_text

SYMBOL = "library-devel-headers-missing"
_LIBRARIES = knowledge.load("devel_packages")["libraries"]

# Headers of the C and C++ standard libraries, POSIX and the kernel's user API, and the compilers' own
# (omp.h, the intrinsics): missing, they are the toolchain's (libc6-dev, the compiler, multilib), not
# a library's development package. Matched on the header's first path part.
_TOOLCHAIN_HEADERS = frozenset("""
assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h setjmp.h
signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h stdnoreturn.h
string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h unistd.h fcntl.h dirent.h dlfcn.h pthread.h
sched.h semaphore.h strings.h syslog.h termios.h poll.h netdb.h malloc.h alloca.h features.h getopt.h
omp.h immintrin.h x86intrin.h emmintrin.h xmmintrin.h arm_neon.h arm_sve.h stdc-predef.h
sys bits gnu asm asm-generic linux netinet arpa net
algorithm any array atomic bitset cassert cctype cerrno cfloat chrono climits cmath complex cstddef cstdint
cstdio cstdlib cstring ctime deque exception filesystem fstream functional future iomanip ios iosfwd
iostream istream iterator limits list map memory mutex new numeric optional ostream queue random ratio
regex set sstream stack stdexcept streambuf string string_view system_error thread tuple type_traits
typeinfo unordered_map unordered_set utility valarray variant vector execution span ranges format
""".split())
_SOURCE = re.compile(r"\.(?:c|cc|cpp|cxx|c\+\+|f|f77|f90|f95|for|cu|s|S|o|a|so|py)$")
# -l names that are the toolchain's or the C library's (a static link without glibc-static, a compiler
# without its runtime): not a library's development package.
_TOOLCHAIN_LIBS = frozenset("c m pthread dl rt util stdc++ gcc gcc_s gcc_eh atomic gomp omp iomp5 quadmath "
                            "crypt resolv".split())
# pkg-config modules and CMake packages that other rules own (Python's, MPI's, CUDA's) or that are
# not a library (the compiler's OpenMP, Threads, PkgConfig itself).
_OTHER_OWNERS = re.compile(r"^(?:python|pythonlibs|pythoninterp|mpi|ompi|mpich|cuda|cudatoolkit|cudnn|nccl|"
                           r"nvidia|openmp|threads|pkgconfig|torch|tensorrt|hip|rocm)", re.I)
_CONFIGURE_OPTION = re.compile(r"--with-[A-Za-z0-9_-]{1,40}(?:=[A-Z_]{1,30})?")


_CUDA_HEADER = "build:gcc-cuda-include-missing"
_CUDA_COMPONENTS = knowledge.load("cuda_wheel_libs")["wheel_headers"]["components"]
_NVCC_RAN = re.compile(r"\bnvcc\b")


def _cuda_component(header: str) -> Optional[Tuple[str, dict]]:
    """The CUDA component (a wheel's nvidia/<folder>) whose include/ holds ``header``, or None."""
    first = header.split("/", 1)[0] if "/" in header else ""
    for key, comp in _CUDA_COMPONENTS.items():
        if header in comp["headers"] or (first and first in comp["header_dirs"]):
            return key, comp
    return None


def _cuda_header_missing(f: FactView, s: dict, header: str, component: Tuple[str, dict]) -> Hit:
    """A CUDA header the preprocessor could not find. Where nvcc ran the build, the toolkit's include
    folder was on its path and the header is missing from the install: an error. From a plain C++
    compile it may as well be an include folder the build was not given: a hint that says both."""
    folder, comp = component
    # a line naming nvcc that ran it (setuptools' "command 'nvcc' failed", make's recipe), not the shell
    # saying it has no nvcc
    nvcc = any(_NVCC_RAN.search(str(t.get("text") or "")) for t in ticket_read(f) if t.get("id") != "shell:nvcc-not-found")
    said = (f"line {s.get('line')}: \"{told_text(s)}\": {header} is a header of {comp['title']}, and no include "
            "directory of the build holds it: ")
    if nvcc:
        said += ("nvcc searches its own toolkit's include folder, so that toolkit was installed without this "
                 "component's development files (a runtime-only package, or an incomplete install)")
    else:
        said += ("its development files are not installed (distributions and NVIDIA's repositories ship the "
                 "library apart from its headers), or the build was not given CUDA's include folder (a plain C++ "
                 "compile does not search /usr/local/cuda/include by itself)")
    fix = (f"ls \"${{CUDA_HOME:-/usr/local/cuda}}/include/{header}\"   # present: give the build that folder "
           f"(export CPATH=\"${{CUDA_HOME:-/usr/local/cuda}}/include${{CPATH:+:$CPATH}}\", or -I); absent: install "
           "the component's development package\n"
           f"apt-file search '/{header}' || dnf provides '*/{header}'   # the package of this CUDA release that holds "
           "it (the -dev / -devel one of the same release as nvcc --version)\n"
           f"# from pip: {comp['wheel']} carries it under site-packages/nvidia/{folder}/include (CUDA 12)")
    return Hit(message=said, fix=fix, evidence=told_evidence(s), severity=None if nvcc else "info")


def _library(kind: str, name: str) -> Optional[Tuple[str, dict]]:
    """The table's entry for a header, -l library, pkg-config module or CMake package name."""
    low = name.lower()
    for key, lib in _LIBRARIES.items():
        if kind == "header":
            # by its name, or by its first directory (<openssl/ssl.h>, <gsl/gsl_math.h>)
            if name in lib["headers"] or name.split("/", 1)[0] in lib["header_dirs"]:
                return key, lib
        elif kind == "lib" and name in lib["libs"]:
            return key, lib
        elif kind == "module" and name in lib["pkgconfig"]:
            return key, lib
        elif kind == "cmake" and (low in (c.lower() for c in lib["cmake"]) or low == key):
            return key, lib
    return None


def _what(s: dict) -> Optional[Tuple[str, str]]:
    """(kind, name) of what the message says is missing, or None where it is not a library's."""
    if s.get("header"):
        h = str(s["header"])
        if _SOURCE.search(h) or h.split("/", 1)[0] in _TOOLCHAIN_HEADERS:
            return None
        return "header", h
    if s.get("lib"):
        lib = str(s["lib"])
        return None if lib in _TOOLCHAIN_LIBS else ("lib", lib)
    if s.get("module"):
        m = str(s["module"])
        return None if _OTHER_OWNERS.match(m) else ("module", m)
    if s.get("package"):
        p = str(s["package"])
        return None if _OTHER_OWNERS.match(p) else ("cmake", p)
    return None


def _lookup(kind: str, name: str, lib: Optional[dict]) -> str:
    """The package managers' own file searches, which answer on the node for any library."""
    if kind == "header":
        path = name
    elif kind == "lib":
        path = f"lib{name}.so"
    elif kind == "module":
        path = f"{name}.pc"
    else:
        path = (lib["headers"][0] if lib and lib["headers"] else f"lib{name.lower()}.so")
    dnf = f"pkgconfig({name})" if kind == "module" else f"*/{path}"
    return (f"apt-file search {path}   # Debian, Ubuntu: which package installs it (sudo apt-get install apt-file && "
            f"sudo apt-file update first)\n"
            f"dnf provides '{dnf}'   # RHEL, Rocky, Alma, Fedora: which package installs it")


def _no_root(key: str, kind: str, option: Optional[str]) -> str:
    lines = [f"module avail {key}   # on a cluster without root: a site module of the library (module load it, then "
             "rebuild: it sets the include, library and pkg-config paths)",
             f"spack list {key}; conda search -c conda-forge {key}   # or install it in your own prefix with Spack or "
             "conda-forge"]
    if kind == "module":
        lines.append('export PKG_CONFIG_PATH="$CONDA_PREFIX/lib/pkgconfig:$PKG_CONFIG_PATH"   # a conda-forge (or '
                     "other prefix) install: tell pkg-config where its .pc files are")
    elif kind == "cmake":
        lines.append("# then re-run cmake with -DCMAKE_PREFIX_PATH=\"$CONDA_PREFIX\" (or the module's or Spack's "
                     "prefix) so that find_path/find_library search it")
    else:
        lines.append('export CPATH="$CONDA_PREFIX/include:$CPATH" LIBRARY_PATH="$CONDA_PREFIX/lib:$LIBRARY_PATH"   # a '
                     "conda-forge (or other prefix) install: let the compiler and linker search it")
    if option:
        opt = option.split("=", 1)[0]
        prefix = "$CONDA_PREFIX/" + ("include" if "include" in opt else "lib" if "lib" in opt else "")
        lines.append(f"# the message names the configure option for a prefix: {opt}=\"{prefix}\" (R: "
                     f"install.packages(..., configure.args=\"{opt}={prefix}\"))")
    return "\n".join(lines)


_KIND_WORDS = {"header": "the header {}", "lib": "the library -l{} (lib{}.so)", "module": "the pkg-config module {}",
               "cmake": "CMake's package {}"}


@rule("SW110", SYMBOL, "error", "a source build needs a system library's development files (headers, .pc, lib.so) that are not installed",
      impact=5, also={"info": "a file of a library knowledge/devel_packages.toml does not know (it may be the project's own), "
                              "or a CUDA header a plain C++ compile did not find (CUDA's include folder may only be missing)"})
def library_devel_headers_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, a compile, link or configure step that stops because a system
        library's development files are absent: GCC's "fatal error: gmp.h: No such file or
        directory" and Clang's "fatal error: 'gmp.h' file not found", autoconf's failed header
        and library checks ("checking for gmp.h... no" then "configure: error: "), a configure
        error that names the header ("Header file gmp.h not found"), GNU ld's "cannot find -lgsl"
        (lld's and ld64's too), pkg-config's and pkgconf's "Package gsl was not found in the
        pkg-config search path", and CMake's "Could NOT find ZLIB (missing: ZLIB_INCLUDE_DIR)".
        Python's and MPI's headers and libraries are left to their own rules, and so are CUDA's
        libraries; a CUDA header (a CUDA component's, cuDNN's, NCCL's) is named with the component
        that installs it (knowledge/cuda_wheel_libs.toml [wheel_headers]): an error where nvcc ran
        the compile (its own include folder was searched), a hint from a plain C++ compile, which
        may only lack CUDA's include folder.

    Why it matters:
        Distributions ship a library's run-time files (libgmp10) apart from what a build needs
        (libgmp-dev, gmp-devel: the headers, the .pc file and the unversioned libgmp.so), and
        compute nodes and minimal images install only the former. R's install.packages, pip
        without a wheel, and any configure or CMake build then stop at the first missing piece.

    How to fix:
        Install the library's development package (the finding names it where
        knowledge/devel_packages.toml knows the library, and always prints apt-file search and
        dnf provides for the file; a file of a library the table does not know is reported as
        info, since it may be the project's own: a submodule, a generated or vendored header); without root, load the site's module, or install the library
        with Spack or conda-forge and point the build at that prefix (CPATH/LIBRARY_PATH,
        PKG_CONFIG_PATH, CMAKE_PREFIX_PATH, or the configure option the message names).

    References:
        - https://github.com/gcc-mirror/gcc/blob/master/libcpp/files.cc (open_file_failed)
        - https://github.com/llvm/llvm-project/blob/main/clang/include/clang/Basic/DiagnosticLexKinds.td (err_pp_file_not_found)
        - https://www.gnu.org/software/autoconf/manual/autoconf-2.72/html_node/Generic-Headers.html
        - https://github.com/pkgconf/pkgconf/blob/master/cli/main.c
        - https://cmake.org/cmake/help/latest/module/FindPackageHandleStandardArgs.html
        - https://packages.debian.org/ and https://packages.fedoraproject.org/
    """
    for s in catalogued(f, SYMBOL):
        what = _what(s)
        if what is None:
            continue
        kind, name = what
        component = _cuda_component(name) if s.get("id") == _CUDA_HEADER else None
        if component is not None:
            yield _cuda_header_missing(f, s, name, component)
            return
        if s.get("id") == _CUDA_HEADER:
            continue   # a project's own cuda*.h: not a component NVIDIA ships
        found = _library(kind, name)
        key, lib = found if found else (None, None)
        option = None
        m = _CONFIGURE_OPTION.search(str(s.get("text") or ""))
        if m:
            option = m.group(0)
        missing = _KIND_WORDS[kind].format(name, name)
        if kind == "cmake" and s.get("missing"):
            missing += f" (missing: {' '.join(str(s['missing']).split())})"
        lines = []
        if lib:
            lines.append(f"sudo apt-get install {lib['debian']}   # Debian, Ubuntu: {lib['title']}'s development files")
            lines.append(f"sudo dnf install {lib['rpm']}   # RHEL, Rocky, Alma, Fedora (EPEL on RHEL for some)")
            if lib.get("note"):
                lines.append(f"# {lib['note']}")
            who = f"{lib['title']}'s development package ({lib['debian']} / {lib['rpm']}) is not installed"
        else:
            # Not a library the table knows: it may be a distribution's, or the project's own header (a
            # git submodule not checked out, a generated or vendored file, a build image that never built
            # it), so the node is not blamed at error.
            who = ("hpcdoctor does not know it as a system library's: if it is one, the development package "
                   "that provides it is not installed; if it is the project's own (a submodule, a generated or "
                   "vendored file), the checkout or the build's earlier step is incomplete")
        lines.append(_lookup(kind, name, lib))
        base = key or (name.split("/", 1)[0].rsplit(".", 1)[0] if kind == "header" else name).lower()
        lines.append(_no_root(base, kind, option))
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the build stops because {missing} is not found: "
                          f"{who}, or the build was not pointed at where it is installed",
                  fix="\n".join(lines), evidence=told_evidence(s), severity=None if lib else "info")
        return
