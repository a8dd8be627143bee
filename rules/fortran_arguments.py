"""gfortran refusing calls whose arguments do not agree (knowledge/messages/gfortran_args.toml): since
GCC 10 a mismatch between two calls of one external procedure in one file is an error, which old MPI
(mpif.h), BLAS and netCDF-3 callers meet on their first build with a new gfortran (SW073). An MPI
library's `mpi` module that lacks the TYPE(C_PTR) baseptr interfaces the MPI standard requires, as
gfortran's and ifort's mismatch errors show it (SW112)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "gfortran-argument-mismatch"
# The two forms gfortran prints only for a procedure without an explicit interface, the interface
# inferred from another call in the same file (formal->attr.artificial in compare_parameter): exactly
# the case -fallow-argument-mismatch downgrades.
_BETWEEN_CALLS = ("gfortran_args:type-mismatch-between-actual-arguments", "gfortran_args:rank-mismatch-between-actual-arguments")

_FIX = ("gfortran --version | head -1   # 10 or later: argument mismatches between calls are errors\n"
        "make FFLAGS=\"$FFLAGS -fallow-argument-mismatch\"   # or add it to the Makefile's Fortran flags "
        "(CMake: -DCMAKE_Fortran_FLAGS=-fallow-argument-mismatch); the errors become warnings\n"
        "# lasting fix for MPI calls: use mpi_f08 (or use mpi where the MPI library gives it generic interfaces) "
        "instead of include 'mpif.h'")


@rule("SW073", SYMBOL, "error", "gfortran 10 or later refuses calls whose argument types or ranks disagree", impact=5,
      also={"warning": "a mismatch against one call's dummy argument: the GCC 10 check, or a real type error in the call"})
def gfortran_argument_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, gfortran's argument-association errors: "Type mismatch between
        actual argument at (1) and actual argument at (2) (INTEGER(1)/INTEGER(4))" and "Rank
        mismatch between actual argument at (1) and actual argument at (2) (scalar and rank-1)",
        errors (two calls of one external procedure without an explicit interface disagree:
        exactly the check GCC 10 made an error); "Type mismatch in argument 'x' at (1); passed
        INTEGER(4) to REAL(8)" and "Rank mismatch in argument 'x' at (1) (rank-1 and scalar)",
        warnings (the same check against a procedure defined in the file, or a real type error in
        a call with an explicit interface, which the flag does not excuse).

    Why it matters:
        Code that passes buffers of several types to one routine (MPI_Bcast through mpif.h, BLAS,
        netCDF-3) compiled with a warning before GCC 10 and stops compiling with GCC 10 and later,
        so a site's new default gfortran breaks builds that worked.

    How to fix:
        Add -fallow-argument-mismatch to the Fortran flags (the errors become warnings), or move
        the MPI calls to the mpi_f08 module, whose interfaces accept any buffer type.

    References:
        - https://gcc.gnu.org/gcc-10/changes.html#fortran (mismatches rejected with an error; -fallow-argument-mismatch)
        - https://gcc.gnu.org/onlinedocs/gfortran/Fortran-Dialect-Options.html (-fallow-argument-mismatch)
        - https://github.com/gcc-mirror/gcc/blob/6441eb6dc020faae0672ea724dfdb38c6a9bf6a1/gcc/fortran/interface.cc (argument_rank_mismatch, compare_parameter)
        - https://github.com/lanl/MF-LBM/issues/15
    """
    # "Warning: " before the text: -fallow-argument-mismatch is already given and the build went on
    # a TYPE(c_ptr) baseptr refused by an MPI module: mpi-fortran-interface-missing answers it (the flag is no fix)
    told = [t for t in catalogued(f, SYMBOL) if t.get("level") != "Warning" and not _c_ptr_baseptr(t)]
    if not told:
        return
    s = next((t for t in told if t.get("id") in _BETWEEN_CALLS), told[0])
    between = s.get("id") in _BETWEEN_CALLS
    what = (s.get("types") or s.get("ranks") or "").strip()
    if between:
        said = ("two calls of one external procedure pass different argument "
                + ("types" if "type" in str(s.get("id")) else "ranks") + (f" ({what})" if what else "")
                + ": gfortran 10 and later reject this unless -fallow-argument-mismatch is given")
        severity = None
    else:
        said = ("a call passes an argument of another type or rank than the procedure's dummy argument: the GCC 10 "
                "check where the procedure has no explicit interface (-fallow-argument-mismatch excuses it), otherwise "
                "an error in the call itself")
        severity = "warning"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {said}", fix=_FIX, evidence=told_evidence(s),
              severity=severity)


MPI_SYMBOL = "mpi-fortran-interface-missing"
# The MPI routines that return memory through a baseptr argument: the MPI standard (MPI-3.0 to 4.1:
# MPI_ALLOC_MEM in "Memory Allocation", MPI_WIN_ALLOCATE, MPI_WIN_ALLOCATE_SHARED and
# MPI_WIN_SHARED_QUERY in "Window That Allocates Memory" / "Window That Allocates Shared Memory")
# says: if the Fortran compiler provides TYPE(C_PTR), the mpi module must provide (and mpif.h should)
# an overloaded interface with TYPE(C_PTR) :: BASEPTR beside the INTEGER(KIND=MPI_ADDRESS_KIND) one.
_BASEPTR_ROUTINES = frozenset(("mpi_alloc_mem", "mpi_win_allocate", "mpi_win_allocate_shared", "mpi_win_shared_query"))
_GENERIC_CALLS = frozenset(("gfortran_args:no-specific-subroutine-for-generic", "ifort_args:ifort-6285"))


def _c_ptr_baseptr(s: dict) -> bool:
    """A mismatch on an argument named baseptr where the code passes TYPE(c_ptr) to an INTEGER dummy
    (gfortran's "Type mismatch in argument 'baseptr' at (1); passed TYPE(c_ptr) to INTEGER(8)"), or
    ifort's error #6633 on an actual argument named BASEPTR."""
    sid = s.get("id")
    if sid == "gfortran_args:type-mismatch-in-argument":
        return (str(s.get("argument", "")).lower() == "baseptr" and "c_ptr" in str(s.get("passed", "")).lower()
                and str(s.get("to", "")).upper().startswith("INTEGER"))
    if sid == "ifort_args:ifort-6633":
        return str(s.get("argument", "")).strip().lower() == "baseptr"
    return False


def _baseptr_generic(s: dict) -> bool:
    return s.get("id") in _GENERIC_CALLS and str(s.get("generic", "")).lower() in _BASEPTR_ROUTINES


_MPI_FIX = ("mpichversion 2>/dev/null || ompi_info --version   # which MPI and release build this code? MPICH 4.1.x: "
            "its mpi module has no TYPE(C_PTR) baseptr\n"
            "# build with an MPI whose mpi module has the TYPE(C_PTR) overloads: MPICH 4.2.0 or later (CHANGES: "
            "MPI_Alloc_mem, MPI_Win_allocate, MPI_Win_allocate_shared), or Open MPI "
            "(4.1.3 builds it: pmodels/mpich#6691)\n"
            "# or use mpi_f08 (its baseptr is TYPE(C_PTR)), or declare the interface in the code: INTERFACE "
            "MPI_WIN_ALLOCATE_SHARED ... TYPE(C_PTR) :: BASEPTR ... END INTERFACE (the MPI standard's own text)")


@rule("SW112", MPI_SYMBOL, "error", "The MPI library's Fortran mpi module lacks the TYPE(C_PTR) interface the code needs",
      impact=5)
def mpi_fortran_interface_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, a Fortran compiler refusing a TYPE(c_ptr) baseptr passed to an MPI
        routine: gfortran's "Type mismatch in argument 'baseptr' at (1); passed TYPE(c_ptr) to
        INTEGER(8)" (quoted 'x' or, under a UTF-8 locale, with typographic quotes), gfortran's
        "There is no specific subroutine for the generic 'mpi_win_allocate_shared' at (1)", or
        ifort/ifx's error #6285 "There is no matching specific subroutine for this generic
        subroutine call. [MPI_WIN_ALLOCATE_SHARED]" or #6633 on an argument named BASEPTR, where
        the routine is MPI_ALLOC_MEM, MPI_WIN_ALLOCATE, MPI_WIN_ALLOCATE_SHARED or
        MPI_WIN_SHARED_QUERY.

    Why it matters:
        The MPI standard (3.0 to 4.1) requires the mpi module, where the compiler has TYPE(C_PTR),
        to overload these routines with a TYPE(C_PTR) BASEPTR interface; code written to the
        standard (c_f_pointer on the returned pointer) then fails to compile with an MPI whose
        module only has the INTEGER(KIND=MPI_ADDRESS_KIND) form. MPICH's generated mpi module has
        had explicit interfaces since 4.1 and gained the C_PTR ones in 4.2
        (pmodels/mpich#2659, #6691). The code is right; -fallow-argument-mismatch does not help
        with an explicit interface.

    How to fix:
        Build with an MPI whose mpi module has the overloads (MPICH 4.2.0 or later, or Open MPI),
        or use the mpi_f08 module, or add the standard's INTERFACE block for the routine to the
        code.

    References:
        - https://github.com/pmodels/mpich/issues/2659 (the MPI-3 text quoted: "If the Fortran compiler provides TYPE(C_PTR), then the following interface must be provided in the mpi module")
        - https://github.com/pmodels/mpich/blob/00112a7fdab71c7950d4778ac20b7e2aad156fd4/CHANGES (Changes in 4.2: "Fortran mpi.mod support Type(c_ptr) buffer output for MPI_Alloc_mem, MPI_Win_allocate, and MPI_Win_allocate_shared"; 4.1: mpi.mod interfaces generated)
        - https://github.com/pmodels/mpich/issues/6691 (MPICH 4.1.2 refuses, Open MPI 4.1.3 builds)
        - https://github.com/piclas-framework/piclas/issues/18
        - https://www.mpi-forum.org/docs/mpi-4.1/mpi41-report.pdf (MPI_ALLOC_MEM, MPI_WIN_ALLOCATE, MPI_WIN_ALLOCATE_SHARED, MPI_WIN_SHARED_QUERY)
    """
    told = [s for s in catalogued(f, MPI_SYMBOL) if s.get("level") != "Warning"
            and (_c_ptr_baseptr(s) or _baseptr_generic(s))]
    if not told:
        return
    s = told[0]
    what = (f"the generic {str(s.get('generic')).upper()} has no specific for the arguments passed"
            if _baseptr_generic(s) else "a TYPE(c_ptr) baseptr is refused where the interface wants an INTEGER address")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}: the MPI library's mpi module lacks the "
                      "TYPE(C_PTR) baseptr interface the MPI standard requires of it (MPI_ALLOC_MEM, MPI_WIN_ALLOCATE, "
                      "MPI_WIN_ALLOCATE_SHARED, MPI_WIN_SHARED_QUERY), which the code uses; MPICH before 4.2 is the "
                      "known case",
              fix=_MPI_FIX, evidence=told_evidence(s))
