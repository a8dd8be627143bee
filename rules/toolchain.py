"""A C, C++ or Fortran compiler missing where a build or a JIT needs one (knowledge/messages/
toolchain.toml, frameworks.toml's torch.compile and Triton lookups, and the shells' "command not
found" for a compiler's name): a minimal container, a node without the site's compiler module, or
CC/CXX naming a compiler that is not there."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "compile-toolchain-missing"
_SHELL = "shell:command-not-found"
# The names a C, C++ or Fortran compiler answers to (GNU, LLVM, Intel classic and oneAPI, NVIDIA HPC SDK),
# with a target prefix (x86_64-linux-gnu-gcc) or a version suffix (gcc-12).
_COMPILER = re.compile(r"^(?:[\w.]{0,40}-)?(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|gfortran|icc|icpc|icx|icpx|ifort|ifx|"
                       r"nvc|nvc\+\+|nvfortran)(?:-[0-9][0-9.]{0,7})?$")
_WHO = {
    "toolchain:distutils-command-failed-enoent": "pip/setuptools building a package from source",
    "toolchain:distutils-unable-to-execute": "pip/setuptools building a package from source",
    "toolchain:python-subprocess-compiler-enoent": "a Python build step",
    "toolchain:cmake-no-compiler-found": "CMake",
    "toolchain:cmake-cc-variable-not-found": "CMake",
    "toolchain:make-compiler-enoent": "make",
    "frameworks:inductor-cxx-compiler-missing": "torch.compile (Inductor)",
    "frameworks:inductor-no-working-cxx": "torch.compile (Inductor)",
    "frameworks:triton-no-c-compiler": "Triton (torch.compile on a GPU)",
}

_FIX = ("command -v gcc g++ cc c++ gfortran || echo 'no compiler on PATH'   # what this shell finds\n"
        "module avail gcc 2>&1 | tail -5   # on a cluster: module load one of these (then rerun the build in the same shell or job)\n"
        "echo \"CC=$CC CXX=$CXX\"   # a CC/CXX naming a compiler that is not here is the same fault: unset it or point it at one that is\n"
        "# in a container image you build: apt-get install -y build-essential (Debian, Ubuntu) or "
        "dnf install -y gcc gcc-c++ make (RHEL family); a conda environment: conda install -c conda-forge compilers")
_FIX_JIT = ("\nexport CC=$(command -v gcc) CXX=$(command -v g++)   # torch.compile and Triton use these once a compiler is on PATH")


def _shell_compiler(s: dict) -> Optional[str]:
    """The compiler a shell's "command not found" names, or None for any other command."""
    name = next((str(s[k]) for k in ("command", "dash", "zsh", "fish") if s.get(k)), "")
    return name if _COMPILER.match(name) else None


@rule("SW076", SYMBOL, "error", "a C/C++/Fortran compiler a build or torch.compile needs is not on the node", impact=5)
def compile_toolchain_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a build or a JIT that could not find or start its compiler:
        setuptools' "command 'gcc' failed: No such file or directory" and distutils' older
        "unable to execute 'gcc': No such file or directory" (pip building a source package),
        Python's FileNotFoundError naming the compiler, CMake's "No CMAKE_CXX_COMPILER could be
        found." and "Could not find compiler set in environment variable CC", GNU make's
        "make: gcc: No such file or directory" (make 3.x: "Command not found"), torch.compile's
        "No working C++ compiler found" and "Compiler: ... is not found.", Triton's "Failed to
        find C compiler", and a shell's "gcc: command not found" (bash, dash, zsh, fish, tcsh).
        "command 'gcc' failed with exit status 1" alone is not this: the compiler ran and the
        code or a header failed.

    Why it matters:
        Wheels built from source (no wheel for this platform or Python), CMake and make builds,
        and torch.compile (Inductor on CPU, Triton's launcher on GPU) all need a compiler at run
        time. Slim container images and compute nodes where the site's compiler is a module do
        not have one on PATH.

    How to fix:
        Load the site's compiler module (module load gcc) in the shell or job that builds, install
        one in the container image (build-essential, gcc gcc-c++), or fix a CC/CXX that names a
        missing compiler; torch.compile and Triton then find it on PATH or through CC/CXX.

    References:
        - https://github.com/pypa/setuptools/blob/main/setuptools/_distutils/spawn.py
        - https://cmake.org/cmake/help/latest/variable/CMAKE_LANG_COMPILER.html
        - https://github.com/pytorch/pytorch/blob/main/torch/_inductor/exc.py (InvalidCxxCompiler)
        - https://github.com/triton-lang/triton/blob/main/python/triton/runtime/build.py (_build: "Failed to find C compiler")
        - https://github.com/docker-library/python/issues/180 (pip on a RHEL host without gcc)
    """
    told = catalogued(f, SYMBOL)
    named = None if told else next((s for s in f.get("ticket.symptoms") or []
                                    if s.get("id") == _SHELL and _shell_compiler(s)), None)
    s = told[0] if told else named
    if s is None:
        return
    compiler = _shell_compiler(s) if named else str(s.get("compiler") or s.get("variable") or s.get("lang") or "")
    who = _WHO.get(str(s.get("id")), "the shell")
    what = (f"CC/CXX names a compiler that is not here ({compiler})" if s.get("id") == "toolchain:cmake-cc-variable-not-found"
            else f"the {compiler} compiler is not on this node's PATH" if compiler and s.get("id") != "toolchain:cmake-no-compiler-found"
            else f"no {compiler or 'C/C++'} compiler is on this node's PATH")
    jit = str(s.get("id")).startswith("frameworks:")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}, and {who} needs one: load the site's compiler "
                      "module or install one where the job runs",
              fix=_FIX + (_FIX_JIT if jit else ""), evidence=told_evidence(s))
