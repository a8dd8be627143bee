"""The MPI library a program, mpi4py or a framework was linked against: not on the loader's path
where it runs (the loader's "cannot open shared object file" for an MPI library, knowledge/
mpi_libraries.toml), or another MPI than the one it was built against loaded or launching it."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_all, told_evidence, told_text
from hpcdoctor.triage.messages import find_messages

_LIBRARIES = knowledge.load("mpi_libraries")["library"]


def mpi_library(stem: str, major: Optional[str]) -> Optional[dict]:
    """The implementation and series that install <stem>.so.<major>; None when the table has no such file."""
    return next((e for e in _LIBRARIES if e["stem"] == stem and e["major"] == str(major or "")), None)


def _import_error(f: FactView) -> list:
    """The messages in the exception the job's interpreter raised importing torch on this node (the
    torch probe's import_error, "OSError: libmpi_cxx.so.40: cannot open shared object file: ..."):
    a torch built with MPI fails there the way a pasted traceback does."""
    err = f.get("torch.import_error")
    if not isinstance(err, str) or not err.strip():
        return []
    return [{**s, "line": None, "source_fact": "torch.import_error"} for s in find_messages(err[:2000], families=("libraries", "loader"))]


def _live_evidence(s: dict) -> dict:
    return {"torch.import_error": str(s.get("text", ""))[:300], "message": s.get("id")}


def _check(so: str) -> str:
    return (f"ldconfig -p | grep -F '{so}'; ls \"${{CONDA_PREFIX:-/nonexistent}}\"/lib/{so}* 2>/dev/null   "
            "# where this machine has it, if anywhere")


def _install(conda: str) -> str:
    apt = "openmpi" if conda == "openmpi" else "mpich"
    return (f"module avail 2>&1 | grep -i -E 'mpi'   # on a cluster: module load the MPI the program was built with, then run again\n"
            f"conda install -c conda-forge {conda}   # in a conda environment (mpi4py, petsc4py from conda-forge): "
            f"the MPI its packages were built against\n"
            f"apt-cache search --names-only 'lib{apt}'   # a system install: the distribution's {conda} runtime package")


@rule("NET012", "mpi-library-missing", "error", "the MPI library a program was built against cannot be loaded", impact=8)
def mpi_library_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the dynamic loader's "<library>: cannot open shared object file" for a
        library of an MPI implementation: Open MPI's libmpi, libmpi_cxx, libmpi_mpifh,
        libmpi_usempif08, libopen-rte, libopen-pal; MPICH's and the MPICH-ABI MPIs' (Intel MPI,
        MVAPICH2, Cray MPICH) libmpi.so.12, libmpicxx, libmpifort; Debian's libmpich; the MPI-5
        ABI's libmpi_abi. Raised by a compiled program, mpi4py, petsc4py, or a framework built
        with MPI (a community torch wheel, Horovod).

    Why it matters:
        The program was linked against that MPI and cannot start without it. The number in the
        file name says which MPI and series it was built against (libmpi.so.40 is Open MPI 3.0 to
        5.0, libmpi.so.20 Open MPI 2.x, libmpi.so.12 MPICH 3.1+ or Intel MPI 5.0+ or Open MPI
        1.10): another MPI installed beside it does not help.

    How to fix:
        Load the site's module of that MPI (module load), install the implementation the
        environment's packages were built against (conda install -c conda-forge openmpi, or
        mpich), or put its lib directory on LD_LIBRARY_PATH.

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.8/VERSION (the libraries' libtool versions)
        - https://github.com/pmodels/mpich/blob/main/doc/wiki/testing/ABI_Compatibility_Initiative.md
        - https://github.com/mpi4py/mpi4py/blob/4.1.2/INSTALL.rst (LD_LIBRARY_PATH, modules, conda-forge packages)
        - https://github.com/sfepy/sfepy/issues/941 (libmpi.so.40; fixed by conda-forge's openmpi)
    """
    told = catalogued(f, "mpi-library-missing")
    live = [s for s in _import_error(f) if "mpi-library-missing" in (s.get("rules") or [])]
    if not told and not live:
        return
    s = told[0] if told else live[0]
    where = f"line {s.get('line')}" if told else "import torch on this node"
    stem, major = str(s.get("key") or ""), s.get("version")
    so = f"{stem}.so" + (f".{major}" if major else "")
    known = mpi_library(stem, major)
    if known is not None:
        what = f"{known['mpi']}: {known['series']}"
        conda = known["conda"]
    else:
        what = "an MPI library; its number does not say which series" if major else "an MPI library"
        conda = "mpich" if stem in ("libmpicxx", "libmpifort", "libmpich", "libmpi_abi") else "openmpi"
    yield Hit(message=f"{so} ({what}) cannot be loaded ({where}: \"{told_text(s)}\"): the MPI the program "
                      "was built against is not installed where it runs, or not on the loader's path",
              fix=f"{_check(so)}\n{_install(conda)}",
              evidence={**(told_evidence(s) if told else _live_evidence(s)), "library": so})


# Symbols only an MPI library defines. Open MPI's predefined handles are ompi_mpi_<name> objects
# (ompi/include/mpi.h.in @ v4.1.8: "extern struct ompi_predefined_communicator_t ompi_mpi_comm_world");
# MPICH's are macros but its MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are objects in libmpi
# (src/include/mpi.h.in @ v4.3.2), and its internals are MPIR_/MPII_/MPID_. The MPI functions
# are MPI_<Capitalised>, their profiling names PMPI_<...>.
_MPI_SYMBOL = re.compile(r"(?:P?MPI_[A-Z][A-Za-z0-9_]{1,60}|ompi_mpi_\w{1,60}|ompi_\w{1,60}|MPI[RID]{1,2}_\w{1,60}|MPIX_\w{1,60})$")
_MPI4PY_EXTENSION = re.compile(r"[/\\]mpi4py[/\\]MPI\.[\w.-]{0,60}\.so")
_UNDEFINED = ("loader:undefined-symbol", "prose:undefined-symbol-said")


def _undefined_mpi_symbol(f: FactView) -> Optional[dict]:
    live = [s for s in _import_error(f) if s.get("id") == "loader:undefined-symbol"]
    for sid in _UNDEFINED:
        for s in ticket_all(f, sid) + (live if sid == "loader:undefined-symbol" else []):
            symbol, file = str(s.get("symbol") or ""), str(s.get("file") or s.get("object") or "")
            if _MPI_SYMBOL.match(symbol) or (_MPI4PY_EXTENSION.search(file) and symbol):
                return s
    return None


_MISMATCH_CHECK = ("python -c 'import mpi4py; print(mpi4py.get_config())'   # the MPI mpi4py was built with (its mpicc)\n"
                   "ldd \"$(python -c 'import mpi4py, os; print(os.path.dirname(mpi4py.__file__))')\"/MPI.*.so | grep -i mpi   "
                   "# the libmpi the loader picks now\n"
                   "which mpiexec mpirun; mpiexec --version   # the launcher on PATH")
_MISMATCH_FIX = ("# make the MPI the binding was built with the one found first: load only its module (module purge; module load ...), "
                 "or in a conda environment put its lib/ first:\n"
                 "export LD_LIBRARY_PATH=\"$CONDA_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"\n"
                 "python -m pip install --no-cache-dir --force-reinstall --no-binary mpi4py mpi4py   "
                 "# or rebuild the binding against the MPI that is loaded (mpicc of that MPI on PATH)")


@rule("NET013", "mpi-library-mismatch", "error", "another MPI than the one a program or binding was built against is loaded or launching it",
      impact=8)
def mpi_library_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the loader's "undefined symbol" for a symbol only an MPI library defines
        (MPI_<Function>, PMPI_..., Open MPI's ompi_mpi_<handle>, MPICH's MPI_UNWEIGHTED and MPIR_
        internals) or any undefined symbol of mpi4py's MPI extension; mpi4py's "suspicious MPI
        execution environment ... You may be using `mpiexec` or `mpirun` from a different MPI
        implementation."; Open MPI's "Open MPI detected a mismatch in versions between two
        processes" (4.1's ORTE) and PRRTE's "PRTE detected a mismatch in versions between two
        processes" (Open MPI 5).

    Why it matters:
        MPI implementations do not share an ABI (Open MPI's and MPICH's handles differ), and an
        older release of one lacks the newer functions: a binding built against one MPI and
        loading another fails at import or misbehaves, and ranks started by another MPI's
        launcher each run alone as rank 0 of size 1. Two Open MPI releases in one job are
        refused by its runtime.

    How to fix:
        Make the MPI the binding was built with the one the loader and PATH find first (one MPI
        module loaded; a conda environment's lib first on LD_LIBRARY_PATH), launch with that
        MPI's own mpiexec, install the same Open MPI at the same path on every node, or rebuild
        the binding against the MPI that is loaded.

    References:
        - https://github.com/mpi4py/mpi4py/blob/4.1.2/src/mpi4py/MPI.src/atimport.pxi (check_mpiexec)
        - https://github.com/mpi4py/mpi4py/blob/4.1.2/INSTALL.rst
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/oob/tcp/help-oob-tcp.txt ([version mismatch])
        - https://github.com/openpmix/prrte/blob/v3.0.13/src/docs/show-help-files/help-oob-tcp.txt ([version mismatch])
        - https://github.com/choderalab/yank/issues/1070 (undefined symbol: MPI_UNWEIGHTED; conda's lib not on LD_LIBRARY_PATH)
    """
    told = catalogued(f, "mpi-library-mismatch")
    if told:
        s = told[0]
        if str(s.get("id", "")).startswith("mpi4py:"):
            message = (f"mpi4py ran as a single process under another MPI's launcher (line {s.get('line')}: \"{told_text(s)}\"): "
                       "mpiexec/mpirun of one MPI started a program built with another, so every rank is rank 0 of size 1")
            fix = ("which mpiexec mpirun; mpiexec --version   # the launcher on PATH\n"
                   "python -c 'import mpi4py.MPI as M; print(M.Get_library_version())'   # the MPI mpi4py loads\n"
                   "# launch with the mpiexec of that MPI (its module, or $CONDA_PREFIX/bin/mpiexec in a conda environment)")
        else:
            message = (f"two releases of the MPI runtime are in one job (line {s.get('line')}: \"{told_text(s)}\"): mpirun of one "
                       "version started daemons or ranks of another on some node, which the runtime refuses")
            fix = ("ssh OTHER_NODE 'command -v mpirun orted prted; mpirun --version'   # what a non-interactive shell there finds\n"
                   "mpirun --prefix \"$(dirname \"$(dirname \"$(command -v mpirun)\")\")\" ...   "
                   "# the same Open MPI, installed at the same path on every node")
        yield Hit(message=message, fix=fix, evidence=told_evidence(s))
        return
    s = _undefined_mpi_symbol(f)
    if s is None:
        return
    where = "import torch on this node" if s.get("source_fact") else f"line {s.get('line')}"
    evidence = _live_evidence(s) if s.get("source_fact") else told_evidence(s)
    yield Hit(message=f"an MPI library other than the one the program or binding was built against was loaded: it lacks "
                      f"{s.get('symbol')} ({where}: \"{told_text(s)}\")",
              fix=f"{_MISMATCH_CHECK}\n{_MISMATCH_FIX}", evidence={**evidence, "symbol": s.get("symbol")})
