"""An extension module compiled against one NumPy ABI imported under another, read from NumPy's,
Cython's and torch's own messages (knowledge/messages/numpy.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._builds import from_conda
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

# The catalogue entries that say which way round the mismatch is.
_MODULE_TOO_OLD = ("numpy:numpy1-module-on-numpy2", "numpy:array-api-not-found")
_MODULE_TOO_NEW = ("numpy:module-needs-newer-c-api", "numpy:module-needs-newer-c-api-old", "numpy:numpy2-module-on-numpy1")
# NPY_ABI_VERSION of NumPy 1.x and 2.x (the wheels' _numpyconfig.h), as the ABI message prints them.
_ABI_MAJOR = {"0x1000009": 1, "0x2000000": 2}
# sizeof(PyArray_Descr) on 64-bit CPython under NumPy 1.x and 2.x: what Cython's size check prints for numpy.dtype.
_DTYPE_SIZE = {"88": 1, "96": 2}
_FIRST_RELEASE = knowledge.load("numpy_c_api")["c_api"]["first_release"]


def _hex(v: object) -> str:
    """A version as NumPy 1.11+ prints it: NumPy 1.5-1.10 printed "8" where later ones print "0x8"."""
    v = str(v or "").lower()
    return v if not v or v.startswith("0x") else "0x" + v


def _direction(s: dict) -> Optional[str]:
    """'old' when the module was built for an older NumPy than the one installed, 'new' when for a
    newer one, None when the message does not say."""
    sid = s.get("id")
    if sid in _MODULE_TOO_OLD:
        return "old"
    if sid in _MODULE_TOO_NEW:
        return "new"
    if sid == "numpy:abi-version":
        built, running = _ABI_MAJOR.get(_hex(s.get("built_abi"))), _ABI_MAJOR.get(_hex(s.get("running_abi")))
    elif sid == "numpy:cython-numpy-size-changed" and s.get("type") == "numpy.dtype":
        built, running = _DTYPE_SIZE.get(str(s.get("expected"))), _DTYPE_SIZE.get(str(s.get("got")))
    else:
        return None
    if built and running and built != running:
        return "old" if built < running else "new"
    return None


# import_array's and import_umath's closing ImportError: every cause of it but a NumPy that cannot be
# imported at all is a module built against another NumPy (numpy.toml, multiarray-failed-to-import).
_GENERIC = ("numpy:multiarray-failed-to-import", "numpy:umath-failed-to-import")


@rule("SW039", "numpy-abi-mismatch", "error", "an extension module compiled against another NumPy than the one installed",
      impact=7, also={"warning": "only NumPy's closing ImportError (\"numpy.core.multiarray failed to import\"), which says no more"})
def numpy_abi_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the checks NumPy compiles into every extension module, and Cython's, failing
        at import: NumPy 2's "A module that was compiled using NumPy 1.x cannot be run in NumPy 2.x
        as it may crash", the older header's "_ARRAY_API not found" (alone or inside torch's "Failed to
        initialize NumPy: ..."), "module was compiled against NumPy C-API version 0x.. (NumPy 1.23) but the
        running NumPy has C-API version 0x..", "module compiled against ABI version 0x2000000 but
        this version of numpy is 0x1000009", and Cython's "numpy.dtype size changed, may indicate
        binary incompatibility. Expected 96 from C header, got 88 from PyObject". NumPy's closing
        "numpy.core.multiarray failed to import" (or "...umath failed to import") alone is a warning:
        every cause of it but a NumPy that cannot be imported at all is such a mismatch. On a live
        node it judges nothing: the failure shows only in the program's own output.

    Why it matters:
        NumPy 2.0 changed the C ABI. A module built against NumPy 1.x (a torch, opencv,
        scipy or pandas release built before NumPy 2.0, any locally compiled extension) cannot use NumPy 2.x:
        it fails to import, or imports and cannot exchange arrays (torch.from_numpy, Tensor.numpy()
        fail). The usual cause is an unpinned `pip install` that upgraded NumPy under an
        environment built for 1.x. The other way round, a module built for a newer NumPy than the
        one installed refuses to load.

    How to fix:
        Built for an older NumPy: pip install "numpy<2" in the same environment (or upgrade the
        module named in the traceback to a release built for NumPy 2). Built for a newer one:
        upgrade NumPy to at least the version the message names. In a conda environment use conda
        for NumPy, as for the rest of the environment.

    References:
        - https://numpy.org/devdocs/numpy_2_0_migration_guide.html (the ABI break; "numpy<2" for users)
        - https://numpy.org/devdocs/user/troubleshooting-importerror.html#c-api-incompatibility
        - https://pypi.org/project/numpy/2.3.5/ (numpy/core/_multiarray_umath.py and __multiarray_api.h in its wheels: the messages)
        - https://github.com/cython/cython/blob/3.0.11/Cython/Utility/ImportExport.c (__Pyx_ImportType's size check)
        - https://github.com/numpy/numpy/blob/v1.26.4/numpy/core/code_generators/generate_numpy_api.py (_import_array's checks, import_array's ImportError)
    """
    told = catalogued(f, "numpy-abi-mismatch")
    if not told:
        return
    if all(t.get("id") in _GENERIC for t in told):
        s = told[0]
        yield Hit(message=f"an extension module could not load NumPy's C API (line {s.get('line')}: \"{told_text(s)}\"): "
                          "the usual cause is a module compiled against another NumPy than the one installed, or two NumPy "
                          "copies left in one environment; the error printed just before this line says which (NumPy's "
                          "own import failing ends the same way)",
                  severity="warning",
                  fix=('python -c "import numpy, sys; print(numpy.__version__, numpy.__file__, sys.executable)"   '
                       "# the NumPy this interpreter imports\n"
                       "python -m pip list 2>/dev/null | grep -i numpy; python -m pip check   # more than one copy, or a "
                       "package built for another NumPy\n"
                       "python -m venv fresh && fresh/bin/python -m pip install -r requirements.txt   # a fresh environment "
                       "installs builds that match its NumPy"),
                  evidence=told_evidence(s))
        return
    # the first message that says which way round, preferring one that names a version
    s = min(told, key=lambda t: (not _direction(t), not (t.get("numpy") or t.get("built") or t.get("built_api"))))
    way = _direction(s)
    numpy = s.get("numpy")
    # pip over a conda NumPy leaves two copies, the next fault
    t = f.get("torch") if isinstance(f.get("torch"), dict) else {}
    install = "conda install -y" if from_conda(t, "numpy") else "python -m pip install"
    if way == "old":
        what = (f"a module compiled against NumPy 1.x was imported under NumPy {numpy or '2.x'}, whose C ABI it "
                "cannot use")
        fix = (f'{install} "numpy<2"   # in the environment the job runs; or upgrade the module the '
               "traceback names to a release built for NumPy 2")
    elif way == "new":
        # the ABI and size checks name only majors: a module built for 2.x needs NumPy 2.0 or later
        built = s.get("built") or _FIRST_RELEASE.get(_hex(s.get("built_api"))) or ("2.0" if s.get("id") in ("numpy:abi-version", "numpy:cython-numpy-size-changed") else None)
        what = (f"a module compiled against NumPy {built} was imported under an older NumPy" if built
                else "a module compiled against a newer NumPy than the one installed was imported")
        bound = ",<2" if built and built.startswith("1.") else ""   # NumPy 2 would break it the other way
        fix = (f'{install} "numpy>={built}{bound}"' if built else f'{install} "numpy>=2"') + \
            "   # in the environment the job runs"
    else:
        what = "a module compiled against another NumPy than the one installed failed NumPy's C-API check"
        fix = 'python -c "import numpy; print(numpy.__version__, numpy.__file__)"   # then match it to the module\'s build'
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\")",
              fix=fix, evidence=told_evidence(s))
