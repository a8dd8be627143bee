"""A C, C++ or Fortran compiler missing where a build or a JIT needs one (knowledge/messages/
toolchain.toml, frameworks.toml's torch.compile and Triton lookups, and the shells' "command not
found" for a compiler's name): a minimal container, a node without the site's compiler module, or
CC/CXX naming a compiler that is not there."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, shell_command, told_evidence, told_text

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
    "toolchain:gcc-cannot-execute-compiler-proper": "GCC's driver",
    "toolchain:gcc-error-trying-to-exec": "GCC's driver",
    "toolchain:gcc-installation-problem-cannot-exec": "GCC's driver",
    "toolchain:gcc-driver-compiler-named-as-input": "the build's compiler command",
    "host_config:nvcc-host-compiler-not-in-path": "nvcc (it compiles the host side of CUDA code with it)",
}
# GCC's compiler proper per program: its language and packages (knowledge/gcc_compiler_propers.toml).
_PROPER = knowledge.load("gcc_compiler_propers")["propers"]["programs"]

_FIX = ("command -v gcc g++ cc c++ gfortran || echo 'no compiler on PATH'   # what this shell finds\n"
        "module avail gcc 2>&1 | tail -5   # on a cluster: module load one of these (then rerun the build in the same shell or job)\n"
        "echo \"CC=$CC CXX=$CXX\"   # a CC/CXX naming a compiler that is not here is the same fault: unset it or point it at one that is\n"
        "# in a container image you build: apt-get install -y build-essential (Debian, Ubuntu) or "
        "dnf install -y gcc gcc-c++ make (RHEL family); a conda environment: conda install -c conda-forge compilers")
# Visual Studio puts cl.exe on PATH only in its developer prompts (vcvars64.bat); vswhere.exe sits at this
# fixed place from Visual Studio 2017 on and lists the installations (Microsoft's vswhere README).
_FIX_MSVC = ("where cl.exe\n"
             "\"%ProgramFiles(x86)%\\Microsoft Visual Studio\\Installer\\vswhere.exe\" -all -property installationPath\n"
             "# in cmd.exe, where found nothing: in the same prompt, call \"<installationPath>\\VC\\Auxiliary\\Build\\vcvars64.bat\" "
             "of an installation vswhere listed, or open its \"x64 Native Tools Command Prompt\", and rebuild there; "
             "none listed: install Visual Studio's C++ build tools of a version this CUDA release accepts")
_FIX_JIT = ("\nexport CC=$(command -v gcc) CXX=$(command -v g++)   # torch.compile and Triton use these once a compiler is on PATH")


def _shell_compiler(s: dict) -> Optional[str]:
    """The compiler a shell's "command not found" names, or None for any other command."""
    name = shell_command(s)
    return name if _COMPILER.match(name) else None


@rule("SW076", SYMBOL, "error", "a C/C++/Fortran compiler a build or torch.compile needs is not on the node", impact=5,
      also={"warning": "a compiler's name given to gcc/g++ as a file that does not exist (\"g++: error: gfortran: No such "
                       "file or directory\"): consistent with that compiler not being installed, not proof of it"})
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
        find C compiler", nvcc's "Cannot find compiler 'cl.exe' in PATH" (its host compiler; on
        Windows Visual Studio's, answered with its developer prompt), and a shell's "gcc: command
        not found" (bash, dash, zsh, fish, tcsh).
        GCC's driver failing to start a language's compiler proper: "fatal error: cannot execute
        'cc1plus': execvp: No such file or directory" (GCC 4.8 and later), "error trying to exec
        'f951': execvp: ..." (GCC 4.x), "installation problem, cannot exec `cc1'" (GCC 2/3), for
        cc1, cc1plus, f951, cc1obj, cc1objplus, gnat1, go1, d21, jc1, cc1gm2, lto1, as and
        collect2, each named with its language and package (g++, gfortran, gobjc, gnat, gccgo,
        gdc; RHEL's gcc-c++, gcc-gfortran ...). A warning: a compiler's name taken by g++ for a
        missing input file ("g++: error: gfortran: No such file or directory").
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
        - https://github.com/gcc-mirror/gcc/blob/master/gcc/gcc.cc (execute: "cannot execute %qs: %s: %m")
        - https://gcc.gnu.org/onlinedocs/gcc/Overall-Options.html (the driver runs the compiler proper per language)
    """
    told = catalogued(f, SYMBOL)
    driver = next((s for s in told if str(s.get("id")).startswith("toolchain:gcc-")), None)
    if driver is not None:
        yield _driver_hit(driver)
        return
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
    if compiler.lower() == "cl.exe":   # Windows: Visual Studio's compiler, on PATH only in its developer prompts
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}, and {who} needs it: Visual Studio's C++ "
                          "compiler is on PATH only in its developer prompts (vcvars64.bat)",
                  fix=_FIX_MSVC, evidence=told_evidence(s))
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}, and {who} needs one: load the site's compiler "
                      "module or install one where the job runs",
              fix=_FIX + (_FIX_JIT if jit else ""), evidence=told_evidence(s))


def _driver_hit(s: dict) -> Hit:
    """GCC's driver missing a language's compiler proper: name the language and its package."""
    program = str(s.get("program") or s.get("compiler") or "").rsplit("/", 1)[-1]
    proper = _PROPER.get(program, {})
    language, deb, rpm = proper.get("language", ""), proper.get("debian", ""), proper.get("rhel", "")
    said_as_input = s.get("id") == "toolchain:gcc-driver-compiler-named-as-input"
    what = (f"the build handed the name of the {program} compiler to {s.get('driver') or 'the compiler'}, which found no such "
            f"file: consistent with {program} ({language}) not being installed where the build runs" if said_as_input else
            f"GCC's driver could not start {program}, its {language or program} compiler proper: that part of the toolchain "
            "is not installed beside this gcc")
    rpm = f" (RHEL/Fedora: sudo dnf install {rpm})" if rpm else ""
    install = f"sudo apt-get install {deb}   # administrators, Debian/Ubuntu{rpm}\n" if deb else ""
    fix = ((f"command -v {program} || echo 'no {program} on PATH'   # the compiler the build names\n" if said_as_input else
            f"gcc -print-prog-name={program}   # a bare '{program}' back: this gcc has no {program} installed\n")
           +
           f"module avail gcc 2>&1 | tail -5   # on a cluster: load a compiler module that includes {language or 'it'}, "
           "then rebuild in the same shell or job\n"
           + install +
           "conda install -c conda-forge compilers   # in a conda environment: C, C++ and Fortran compilers together")
    return Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}", fix=fix, evidence=told_evidence(s),
               severity="warning" if said_as_input else "error")
