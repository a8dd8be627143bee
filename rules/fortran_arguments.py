"""gfortran refusing calls whose arguments do not agree (knowledge/messages/gfortran_args.toml): since
GCC 10 a mismatch between two calls of one external procedure in one file is an error, which old MPI
(mpif.h), BLAS and netCDF-3 callers meet on their first build with a new gfortran."""

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
    told = [t for t in catalogued(f, SYMBOL) if t.get("level") != "Warning"]
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
