"""MPI compiler wrappers (mpicc, mpicxx, mpifort, mpif90, mpiifort, mpiifx, mpiicc ...) that run
another compiler than the build was written for, or that belong to an MPI built without the
language's bindings (knowledge/messages/mpi_wrappers.toml, compiler_options.toml; whose option is
whose: knowledge/compiler_vendor_options.toml)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

BUILT_WITHOUT = "mpi-built-without-fortran"
OTHER_COMPILER = "mpi-wrapper-wraps-other-compiler"

_OPTS = knowledge.load("compiler_vendor_options")
_VENDORS = ("intel", "nvidia", "ibm_xl", "openmpi_wrapper", "gnu")
_NAMES = {v: frozenset(_OPTS[v]["names"]) for v in _VENDORS}
_PREFIXES = {v: tuple(_OPTS[v].get("prefixes", ())) + tuple(n for n in _OPTS[v]["names"] if n.endswith(("=", "-")))
             for v in _VENDORS}
_X_CODES = frozenset(c.lower() for c in _OPTS["intel"]["x_codes"])
_GCC_LANGUAGES = frozenset(_OPTS["gcc_x_languages"]["names"])

# The refusing program's vendor, from its name as the refusal prints it (a path, a target prefix as in
# x86_64-conda-linux-gnu-gfortran, a version suffix as in gfortran-12 or gfortran-mp-9, Homebrew's
# gfortran.exec).
_GCC = re.compile(r"^(?:[\w.]{0,60}-)?(?:gcc|g\+\+|gfortran|cc|c\+\+|f95|f77|cc1|cc1plus|f951)(?:-[\w.]{1,12}){0,2}(?:\.exec)?$")
_INTEL = re.compile(r"^(?:ifort|ifx|icc|icpc|icx|icpx|icl|mpiifort|mpiifx|mpiicc|mpiicx|mpiicpc|mpiicpx)$")
_FORTRAN = re.compile(r"(?:fortran|f77|f90|f95|f951|ifort|ifx|xlf|ftn|pgf\d\d)", re.I)


def owners(option: str) -> List[str]:
    """The vendors whose documentation defines OPTION (compiler_vendor_options.toml), in table order."""
    base = option.split("=", 1)[0]
    # GCC's -fno-<flag> and -Wno-<warning> are the negative forms of -f<flag> and -W<warning>
    plain = re.sub(r"^-(f|W)no-", r"-\1", option)
    out = []
    for v in _VENDORS:
        if (option in _NAMES[v] or base in _NAMES[v] or option.startswith(_PREFIXES[v])
                or (v == "gnu" and (plain in _NAMES[v] or plain.split("=", 1)[0] in _NAMES[v]))):
            out.append(v)
    if "ibm_xl" in out and "intel" in out:
        out.remove("ibm_xl")  # Intel's own -q options (-qopenmp, -qmkl, -qopt-*) are not IBM XL's
    return out


def _refuser(s: dict) -> Optional[str]:
    """The vendor of the program that refused an option, or None for a program that is no compiler
    the table knows (the linker's "unrecognized option '--whole-archive'")."""
    sid = str(s.get("id"))
    program = str(s.get("program") or "").rsplit("/", 1)[-1]
    if sid == "compiler_options:intel-ignoring-unknown-option":
        return "intel"
    if sid == "compiler_options:nvhpc-unknown-switch":
        return "nvidia"
    if sid == "compiler_options:clang-unknown-argument":
        return "intel" if _INTEL.match(program) else "llvm"
    if not program or _GCC.match(program):
        return "gnu"   # GCC's wording; a user's retyped line may drop the program's name
    return None


def _foreign(s: dict) -> Optional[Tuple[str, List[str]]]:
    """The refused option and the other vendors whose option it is, or None where it is the refusing
    compiler's own, nobody's in the table (a typo, a linker option), or no compiler refused it."""
    if s.get("id") == "compiler_options:gcc-language-not-recognized":
        language = str(s.get("language") or "")
        if language.lower() in _X_CODES or (language[:1].isupper() and language not in _GCC_LANGUAGES):
            return f"-x{language}", ["intel"]
        return None
    refuser, option = _refuser(s), str(s.get("option") or "")
    if refuser is None or not option:
        return None
    found = [v for v in owners(option) if v != refuser]
    if refuser == "llvm":
        found = [v for v in found if v != "gnu" or option.startswith(("-ffree-line", "-ffixed-line", "-fdefault-",
                                                                      "-fbacktrace", "-fcheck", "-fno-second"))]
    return (option, found) if found else None


def _names(vendors: List[str]) -> str:
    return " and ".join(_OPTS[v]["name"] for v in vendors)


def _fix(vendors: List[str], fortran: bool) -> str:
    """Check what the wrapper runs, then select the compiler the flags are for."""
    w = "mpif90" if fortran else "mpicc"
    lines = [f"{w} --showme:command 2>/dev/null || {w} -show   # the compiler the MPI wrapper runs "
             "(Open MPI: --showme; MPICH and Intel MPI: -show)",
             f"command -v {w}; module list 2>&1 | tail -5   # whose MPI is first on PATH, and the compiler modules loaded"]
    if "intel" in vendors:
        lines.append("export OMPI_FC=ifx OMPI_CC=icx OMPI_CXX=icpx   # Open MPI built with GCC: run Intel's compilers "
                     "under it (ifort/icc/icpc before oneAPI 2024/2025), or load the site's Intel MPI module")
        lines.append("export I_MPI_F90=ifx I_MPI_CC=icx I_MPI_CXX=icpx   # Intel MPI: its mpif90/mpicc run gfortran/gcc; "
                     "mpiifx/mpiicx run Intel's (MPICH: MPICH_FC, MPICH_CC)")
    elif "nvidia" in vendors:
        lines.append("export OMPI_FC=nvfortran OMPI_CC=nvc OMPI_CXX=nvc++   # or load the NVIDIA HPC SDK's own MPI "
                     "module (nvhpc-hpcx, nvhpc-openmpi)")
    elif "gnu" in vendors:
        lines.append("export OMPI_FC=gfortran OMPI_CC=gcc OMPI_CXX=g++   # Open MPI; Intel MPI: I_MPI_F90=gfortran "
                     "I_MPI_CC=gcc (or its mpif90/mpicc); MPICH: MPICH_FC, MPICH_CC")
    else:
        lines.append("# load the compiler (and the MPI built with it) that these flags are for, or set OMPI_FC / "
                     "I_MPI_F90 / MPICH_FC to it")
    lines.append("# or keep the wrapper's compiler and choose the build's flags for it (its Makefile.<compiler>, "
                 "toolchain or arch file), then make clean and rebuild")
    return "\n".join(lines)


def _impi_successor(wrapper: str, compiler: str) -> Optional[str]:
    """Intel MPI's LLVM-based wrapper for a classic compiler oneAPI no longer ships."""
    return {"ifort": "mpiifx", "icc": "mpiicx", "icpc": "mpiicpx"}.get(compiler) if wrapper.startswith("mpii") else None


@rule("SW097", OTHER_COMPILER, "error", "the MPI compiler wrapper runs another compiler than the build was written for",
      impact=5,
      also={"warning": "a compiler refused another vendor's option: the build's flags were written for another "
                       "compiler than the one the wrapper (or FC/CC) runs",
            "info": "another vendor's option ignored with a warning, or refused inside a configure/CMake probe that "
                    "goes on without it"})
def mpi_wrapper_wraps_other_compiler(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An MPI compiler wrapper that runs a compiler that is not there: Open MPI's "The Open MPI
        wrapper compiler was unable to find the specified compiler ifort in your PATH", and the
        shell's "command not found" from MPICH's and Intel MPI's wrapper scripts
        ("/opt/intel/oneapi/mpi/2021.14/bin/mpiifx: line 715: ifort: command not found": Intel
        MPI's mpiifort runs mpiifx -fc=ifort, and oneAPI 2025 has no ifort). And a compiler
        refusing an option that belongs to another vendor's compiler
        (knowledge/compiler_vendor_options.toml): GCC's "unrecognized command-line option
        '-module'" (or -qopenmp, -traceback, -ipo, -fp-model: Intel's; -Mfree, -mp: NVIDIA HPC's;
        -qsmp: IBM XL's; --showme:compile: Open MPI's wrapper), GCC's "language Host not
        recognized" for Intel's -xHost, Intel's "command line warning #10006: ignoring unknown
        option '-ffree-line-length-none'", NVIDIA HPC's "Unknown switch" and Clang/Flang's
        "unknown argument" for GCC's or Intel's options. An error for a wrapper whose compiler is
        missing; a warning for a refusal that stops the compile; info for an option ignored with a
        warning, or refused inside a configure or CMake probe. A refusal of the compiler's own
        option (a typo such as -ffree-line-lenght-none, an option newer than the compiler, a
        linker option) says nothing about the wrapper and is left alone.

    Why it matters:
        mpif90, mpicc and mpicxx run whichever compiler their MPI was built with: Open MPI and
        MPICH packages built with GCC run gfortran and gcc, and Intel MPI's mpif90/mpicc run
        gfortran/gcc too (its Intel wrappers are mpiifx, mpiicx, mpiicpx). A Makefile written
        for ifort then hands Intel's flags to gfortran, and a wrapper whose compiler is no longer
        installed (ifort after oneAPI 2025) fails before compiling anything.

    How to fix:
        Check what the wrapper runs (mpif90 --showme:command for Open MPI, mpif90 -show for MPICH
        and Intel MPI), then select the compiler the flags are for (OMPI_FC / OMPI_CC,
        I_MPI_F90 / I_MPI_CC, MPICH_FC / MPICH_CC, Intel MPI's mpiifx / mpiicx, or the site's
        MPI module built with that compiler), or use the build's flags for the wrapper's compiler.

    References:
        - https://docs.open-mpi.org/en/v5.0.x/building-apps/customizing-wrappers.html (OMPI_CC, OMPI_FC; --showme)
        - https://github.com/open-mpi/ompi/blob/v5.0.10/opal/tools/wrappers/help-opal-wrapper.txt
        - https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-14/compilation-environment-variables.html (I_MPI_F90, I_MPI_CC)
        - https://github.com/pmodels/mpich/blob/main/src/env/mpifort.bash.in (MPICH_FC, -show)
        - https://github.com/OP-DSL/OPS/issues/131 (mpif90 wraps gfortran, not ifort)
        - https://github.com/fortran-lang/fpm/issues/1090 (mpiifort and oneAPI 2025's missing ifort)
    """
    told = catalogued(f, OTHER_COMPILER)
    missing = next((s for s in told if str(s.get("id")).startswith("mpi_wrappers:")), None)
    if missing is not None:
        compiler = str(missing.get("compiler") or "")
        wrapper = str(missing.get("wrapper") or "")
        short = compiler.rsplit("/", 1)[-1]
        successor = _impi_successor(wrapper, short)
        fortran = bool(_FORTRAN.search(wrapper + " " + short))
        if successor:
            what = (f"Intel MPI's wrapper was asked for {short} (mpiifort, mpiicc and mpiicpc run mpiifx -fc=ifort, "
                    f"mpiicx -cc=icc, mpiicpx -cxx=icpc; I_MPI_F90/I_MPI_CC naming them does the same), and {short} is not "
                    f"on PATH (oneAPI 2024 dropped icc/icpc, 2025 ifort): call {successor} itself, which runs "
                    f"{ {'mpiifx': 'ifx', 'mpiicx': 'icx', 'mpiicpx': 'icpx'}[successor] }")
            fix = (f"command -v {short} ifx icx icpx   # which Intel compilers this shell has\n"
                   f"{successor} -v   # Intel MPI's wrapper for the LLVM-based compiler\n"
                   "export I_MPI_F90=ifx I_MPI_CC=icx I_MPI_CXX=icpx   # or keep the old wrapper names running the new compilers\n"
                   "# or load an older oneAPI compiler module that still has " + short)
        else:
            who = f"{wrapper} " if wrapper else "the MPI wrapper "
            what = (f"{who}runs {short or 'a compiler'}, which is not on PATH: the wrapper belongs to a compiler that is "
                    "not loaded here (its MPI was built with it, or OMPI_/I_MPI_/MPICH_ variables name it)")
            w = wrapper or ("mpif90" if fortran else "mpicc")
            fix = (f"{w} --showme:command 2>/dev/null || {w} -show   # the compiler it runs\n"
                   f"command -v {short or 'gcc'} || echo 'not on PATH'\n"
                   f"env | grep -E '^(OMPI|I_MPI|MPICH)_(CC|CXX|FC|F90|F77)='   # a variable naming a compiler that is not here\n"
                   "module avail 2>&1 | grep -i -E 'gcc|intel|oneapi|nvhpc' | head   # load the compiler this MPI was built "
                   "with, or the MPI module built with the compiler you have")
        yield Hit(message=f"line {missing.get('line')}: \"{told_text(missing)}\": {what}", fix=fix,
                  evidence=told_evidence(missing))
        return
    # every refusal line (the entries are listings; catalogued() keeps one line per entry)
    for s in (t for t in f.get("ticket.symptoms") or [] if OTHER_COMPILER in (t.get("rules") or [])):
        read = _foreign(s)
        if read is None:
            continue
        option, vendors = read
        program = str(s.get("program") or "").rsplit("/", 1)[-1]
        fortran = bool(_FORTRAN.search(program)) or not program
        compiler = program or "the compiler"
        quiet = (s.get("id") == "compiler_options:intel-ignoring-unknown-option"
                 or str(s.get("level")) == "Warning" or bool(s.get("probe")))
        if s.get("probe"):
            note = " (inside a configure/CMake probe, which tries the option and goes on without it)"
        elif quiet:
            note = " (ignored with a warning: the build goes on without it)"
        else:
            note = ""
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {option} is an option of {_names(vendors)}, "
                          f"and {compiler} refused it{note}: the build's flags were written for another compiler than "
                          "the one the MPI wrapper (or FC/CC) runs",
                  fix=_fix(vendors, fortran), evidence=told_evidence(s), severity="info" if quiet else "warning")
        return


@rule("SW098", BUILT_WITHOUT, "error", "the MPI library was built without the Fortran (or C++) bindings its wrapper needs",
      impact=5)
def mpi_built_without_fortran(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Open MPI's wrapper saying its installation has no compiler or no bindings for the
        language: "No underlying compiler was specified in the wrapper compiler data file" (the
        data file's compiler= is empty: no Fortran compiler was found when Open MPI was
        configured) and "Unfortunately, this installation of Open MPI was not compiled with
        Fortran support.  As such, the mpifort compiler is non-functional." (configured with
        --disable-mpi-fortran, or without a Fortran compiler; the same for C++).

    Why it matters:
        A distribution or a user's build of Open MPI configured on a machine without gfortran
        installs mpifort and mpif90 that cannot compile anything, and no Fortran MPI library
        (mpi.mod, libmpi_mpifh): installing gfortran afterwards does not help.

    How to fix:
        Confirm with ompi_info that the Fortran bindings are missing, then install an Open MPI
        built with them (the distribution's package built with gfortran, a site module), or
        rebuild Open MPI with a Fortran compiler present (./configure FC=gfortran).

    References:
        - https://github.com/open-mpi/ompi/blob/v5.0.10/opal/tools/wrappers/help-opal-wrapper.txt
        - https://docs.open-mpi.org/en/v5.0.x/installing-open-mpi/configure-cli-options/mpi.html (--disable-mpi-fortran)
        - https://github.com/voidlinux/void-packages/issues/13335 (openmpi packaged without Fortran)
    """
    told = catalogued(f, BUILT_WITHOUT)
    if not told:
        return
    s = told[0]
    language = str(s.get("language") or "").strip() or "Fortran (or C++)"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": this Open MPI was built without {language} support, so "
                      "its wrapper for that language cannot compile: installing the compiler now does not add the "
                      "bindings",
              fix=("ompi_info | grep -i -E 'Fort(ran)? (compiler|bindings)|C\\+\\+ (compiler|bindings)'   # 'none' or 'no': "
                   "built without them\n"
                   "grep -E '^(compiler|required_file)=' \"$(dirname \"$(command -v mpifort)\")/../share/openmpi/"
                   "mpifort-wrapper-data.txt\"   # an empty compiler= is this\n"
                   "module avail openmpi 2>&1 | tail -5   # a site build with Fortran, or the distribution's package "
                   "built with gfortran\n"
                   "# or rebuild Open MPI with the compiler installed first: ./configure FC=gfortran --prefix=$HOME/openmpi "
                   "&& make -j8 install"),
              evidence=told_evidence(s))
