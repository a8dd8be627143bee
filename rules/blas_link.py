"""A link that leaves BLAS routines undefined (knowledge/blas.toml, read from GNU ld's "undefined reference
to" lines in any language, knowledge/messages/ld_undefined.toml): no BLAS library on the link line, or
one named before the library that calls it."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import ticket_all, told_evidence, told_text

SYMBOL = "blas-library-not-linked"
_UNDEFINED = "ld_undefined:symbol-not-linked"
_TABLE = knowledge.load("blas")["reference_blas"]
_ROUTINES = frozenset(_TABLE["level1"] + _TABLE["level2"] + _TABLE["level3"])


def blas_routine(symbol: str) -> Optional[str]:
    """The reference BLAS routine a linker symbol names (dgemv_, cblas_dgemm), or None."""
    # only the linker's own spellings: a bare "dgemv" is a user retelling the error as often as a symbol
    name = symbol.strip()
    if name.startswith("cblas_"):
        name = name[len("cblas_"):]
    elif name.endswith("_"):
        name = name[:-1]
    else:
        return None
    return name if name in _ROUTINES else None


_FIX = ("ls /usr/lib*/libblas* /usr/lib*/*/libblas* /usr/lib*/libopenblas* /usr/lib*/*/libopenblas* 2>/dev/null   # "
        "the BLAS libraries installed (on a cluster: module avail openblas, or the site's BLAS module)\n"
        "# on the link line, the BLAS after what calls it (GNU ld resolves left to right): -llapack -lblas, or one "
        "library that holds both (-lopenblas, or MKL's link line)")


@rule("SW128", SYMBOL, "error", "a link needs BLAS routines and no BLAS library is linked after their caller", impact=5)
def blas_library_not_linked(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, GNU ld's "undefined reference to" (in the user's language) naming a
        routine of the reference BLAS: dgemv_, dgemm_, ddot_, cblas_dgemm... (the Level 1, 2 and 3
        routines of Reference-LAPACK's BLAS/SRC in the four precisions).

    Why it matters:
        The code, or a LAPACK it links (a static liblapack.a calls the BLAS), needs the BLAS and the
        link line has none, or has it before the library that calls it: GNU ld resolves undefined
        symbols only from libraries named after their user. The build stops at the link.

    How to fix:
        Add the BLAS after LAPACK on the link line (-llapack -lblas), or link one optimized library
        that holds both (OpenBLAS, MKL, the site's BLAS module).

    References:
        - https://github.com/Reference-LAPACK/lapack/blob/master/BLAS/SRC/Makefile (the BLAS routines)
        - https://sourceware.org/binutils/docs/ld/Options.html (-l: an archive is searched once, where it is named)
        - https://github.com/sharc-md/sharc/issues/33 (a static LAPACK without BLAS: undefined dgemv_, dtrmv_)
    """
    undefined = [(s, str(s.get("symbol") or s.get("symbol_first") or "").strip()) for s in ticket_all(f, _UNDEFINED)]
    missing = [(s, symbol) for s, symbol in undefined if blas_routine(symbol)]
    if not missing:
        return
    s = missing[0][0]
    names = sorted({symbol for _, symbol in missing})
    yield Hit(message=f"the link needs BLAS routines no library on its line provides ({', '.join(names[:6])}; line "
                      f"{s.get('line')}: \"{told_text(s)}\"): a BLAS library is missing from the link line, or named "
                      "before the library that calls it (a static LAPACK calls the BLAS)",
              fix=_FIX, evidence=told_evidence(s))
