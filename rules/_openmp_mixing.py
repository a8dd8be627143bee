"""duplicate-libraries' reading of the libraries that refuse or warn about a second OpenMP runtime
(knowledge/messages/openmp_mixing.toml: mkl-service, threadpoolctl), kept apart from libraries.py so
that each emitter's own advice stays beside its reading."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

_MKL = "openmp_mixing:mkl-service-intel-layer-incompatible"
_THREADPOOLCTL = "openmp_mixing:threadpoolctl-intel-and-llvm-openmp"

# mkl-service's own advice (its message) and why INTEL was asked for: mkl-service sets
# MKL_THREADING_LAYER=INTEL in a process that imported numpy first, and a child started from it (a
# DataLoader worker, torch.distributed's launcher, a subprocess) inherits it and loads libgomp first.
_MKL_FIX = ("export MKL_THREADING_LAYER=GNU   # MKL then runs on GNU OpenMP, the runtime already loaded, instead of "
            "loading Intel's libiomp5 beside it (in Python: os.environ['MKL_THREADING_LAYER'] = 'GNU' before importing numpy)\n"
            "env | grep MKL_THREADING_LAYER   # INTEL inherited from a parent that imported numpy first (mkl-service sets it): "
            "unset it, or import numpy before torch as mkl-service's message says\n"
            "# MKL_SERVICE_FORCE_INTEL=1 only lets the process go on with both runtimes loaded")
_THREADPOOLCTL_FIX = ("python -c 'import threadpoolctl, pprint; pprint.pprint(threadpoolctl.threadpool_info())'   "
                      "# which packages brought libiomp5 and libomp (their filepath)\n"
                      "# keep one runtime: install numpy/scipy/scikit-learn and torch from one channel (conda-forge's "
                      "llvm-openmp, or pip wheels alone); threadpoolctl's multiple_openmp.md lists the workarounds")


def openmp_mixing_hits(f: FactView) -> Iterator[Hit]:
    told = {s.get("id"): s for s in catalogued(f, "duplicate-libraries")}
    mkl = told.get(_MKL)
    if mkl is not None:
        yield Hit(message=f"MKL was asked for its Intel OpenMP threading layer while another OpenMP runtime "
                          f"({mkl.get('library') or 'GNU libgomp'}) was already loaded in the process, and mkl-service "
                          f"stopped it (line {mkl.get('line')}: \"{told_text(mkl)}\"): two OpenMP runtimes in one process",
                  fix=_MKL_FIX, evidence=told_evidence(mkl))
    pool = told.get(_THREADPOOLCTL)
    if pool is not None:
        yield Hit(message=f"threadpoolctl found Intel's and LLVM's OpenMP runtimes loaded in one process (line "
                          f"{pool.get('line')}: \"{told_text(pool)}\"): they can crash or deadlock together",
                  fix=_THREADPOOLCTL_FIX, evidence=told_evidence(pool))
