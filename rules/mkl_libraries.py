"""Intel MKL's dispatcher failing to load its own libraries (knowledge/messages/mkl.toml): the
environment's MKL is incomplete, or libraries of two MKL copies are mixed."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "mkl-libraries-incomplete"

# The dispatcher's own failure first (what failed), then the loader's reason it printed before it.
_ORDER = ("mkl:cannot-load-cpu-library", "mkl:cannot-load-library", "mkl:error-on-loading-function", "mkl:loader-reason")

_FIX_LINUX = ("echo \"$LD_LIBRARY_PATH\" | tr ':' '\\n' | grep -i -E 'mkl|intel'   # another MKL (/opt/intel, a "
              "module's) listed here loads before the environment's: remove it, or unset LD_LIBRARY_PATH\n"
              "conda install mkl   # in the active conda environment: its MKL complete and of one release "
              "(where pip installed MKL: python3 -m pip install --force-reinstall mkl)")
_FIX_WINDOWS = ("where mkl_*.dll   # every MKL DLL on PATH: one from outside the environment (another Anaconda, "
                "oneAPI) loads first; take it off PATH\n"
                "conda install mkl   # in the active conda environment: its MKL complete and of one release "
                "(where pip installed MKL: python -m pip install --force-reinstall mkl)")


@rule("SW082", SYMBOL, "error", "Intel MKL cannot load its own libraries: the environment's MKL is incomplete or mixed",
      impact=7)
def mkl_libraries_incomplete(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Intel MKL's run-time dispatcher failing on its own libraries (format
        strings of libmkl_core/libmkl_rt, MKL 2019 to oneMKL 2024): "Intel MKL FATAL ERROR: Cannot
        load libmkl_avx2.so or libmkl_def.so." (the CPU-specific library it chose, mc, mc3, avx,
        avx2, avx512, avx512_mic, and the default one; mkl_avx2.dll / mkl_avx2.1.dll on
        Windows), "Cannot load mkl_intel_thread.dll.", "Error on loading function
        mkl_blas_avx_xdcopy", and the loader's reason it prints before them ("INTEL MKL ERROR:
        ...libmkl_avx2.so: undefined symbol: ...", "The specified module could not be found.").
        MKL's own argument checks ("Parameter 4 was incorrect on entry to DLASCL") are a program's
        and are only quoted.

    Why it matters:
        numpy, scipy, scikit-learn and torch built against MKL load these libraries on their
        first BLAS/LAPACK call, and the process exits there. The libraries are missing from the
        environment (a partial conda install, a package that brought libmkl_rt without the rest),
        or another MKL copy is loaded first (a system or oneAPI MKL on LD_LIBRARY_PATH or PATH, a
        pip and a conda MKL in one environment), whose libraries are of another release.

    How to fix:
        Look for another MKL on LD_LIBRARY_PATH (PATH on Windows) and take it off; reinstall MKL
        in the active environment (conda install mkl; python3 -m pip install --force-reinstall
        mkl where pip manages it).

    References:
        - https://pypi.org/project/mkl/2019.0/ and https://pypi.org/project/mkl/2024.2.2/ (libmkl_core.so, libmkl_rt.so: the messages' format strings)
        - https://github.com/TIGRLab/admin/issues/1102 (a site's anaconda module: conda install mkl fixed it)
        - https://github.com/ContinuumIO/anaconda-issues/issues/698 (conda install mkl / conda update mkl in the environment)
        - https://github.com/ContinuumIO/anaconda-issues/issues/1641 (libmkl_rt.so loaded from another MKL copy on LD_LIBRARY_PATH)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    by_id = {s.get("id"): s for s in told}
    s = next(by_id[k] for k in _ORDER if k in by_id)
    reason = by_id.get("mkl:loader-reason")
    windows = ".dll" in " ".join(str(t.get("text", "")) for t in told)
    if s.get("id") == "mkl:error-on-loading-function":
        what = f"an MKL library it loaded lacks the function {s.get('function')}: libraries of two MKL releases are mixed"
    elif s.get("id") == "mkl:loader-reason":
        what = f"the loader could not load {s.get('library')}"
    else:
        libs = " or ".join(x for x in (s.get("library"), s.get("fallback")) if x)
        what = f"MKL could not load {libs}"
    why = ""
    if reason is not None and reason is not s:
        why = f"; the loader's reason, line {reason.get('line')}: \"{told_text(reason)}\""
    if reason is not None and reason.get("symbol"):
        why += " (an undefined symbol: two MKL releases mixed)"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}{why}. The environment's MKL libraries are "
                      "incomplete, or another MKL copy (on " + ("PATH" if windows else "LD_LIBRARY_PATH")
                      + ", a system or oneAPI MKL, a pip and a conda MKL together) is loaded first",
              fix=_FIX_WINDOWS if windows else _FIX_LINUX,
              evidence={**told_evidence(s), "library": s.get("library"), "fallback": s.get("fallback"),
                        "function": s.get("function"), **({"loader_reason": told_text(reason)} if reason else {})})
