"""A BLAS library's own thread pool meeting the program's OpenMP threads: OpenBLAS built with
pthreads, called from inside an OpenMP parallel region, warns that the program may hang. Read
from OpenBLAS's own warning (knowledge/messages/threads.toml); the fix is one BLAS thread per
OpenMP thread or an OpenMP build of OpenBLAS."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "openblas-openmp-conflict"
# exec_blas prints it only when it would run more than one thread, so one thread ends both the
# warning and the two pools' contention; the OpenMP build shares the program's own pool.
_FIX = ("export OPENBLAS_NUM_THREADS=1   # in the job script, before the program starts: the program's OpenMP threads "
        "each call OpenBLAS single-threaded (OpenBLAS warns only when it would start more than one thread)\n"
        "# or an OpenBLAS built for OpenMP, which joins the program's threads: from source, make USE_OPENMP=1; "
        "Debian/Ubuntu's system OpenBLAS, the package libopenblas0-openmp in place of libopenblas0-pthread\n"
        "python -c 'import numpy; numpy.show_config()' | grep -i -A3 openblas   # which OpenBLAS numpy loads, and "
        "its USE_OPENMP (empty: the pthreads build)")


@rule("THR009", SYMBOL, "warning",
      "a pthreads build of OpenBLAS is called from inside OpenMP threads: the program may hang", impact=6)
def openblas_openmp_conflict(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, OpenBLAS's own warning "OpenBLAS Warning : Detect OpenMP Loop and this
        application may hang. Please rebuild the library with USE_OPENMP=1 option.", which its
        thread server prints when a build without USE_OPENMP is asked to run more than one
        thread while the caller is inside an OpenMP parallel region (omp_in_parallel() > 0).

    Why it matters:
        A pthreads OpenBLAS keeps its own pool of threads, one per core. Called from each of the
        program's OpenMP threads (a parallel loop in the application, a library built with OpenMP
        around numpy or scipy), the two pools oversubscribe every core, and OpenBLAS's server,
        which is not built for concurrent callers from OpenMP, can deadlock: the warning floods
        the log, then the job slows down or hangs.

    How to fix:
        OPENBLAS_NUM_THREADS=1 in the job's environment, so OpenBLAS runs on the calling thread
        (the warning is printed only for more than one thread); or use an OpenBLAS built with
        USE_OPENMP=1 (Debian's libopenblas0-openmp), which runs inside the program's OpenMP
        threads.

    References:
        - https://github.com/OpenMathLib/OpenBLAS/blob/v0.3.28/driver/others/blas_server.c (exec_blas: the warning)
        - https://github.com/OpenMathLib/OpenBLAS/blob/v0.3.28/USAGE.md (OPENBLAS_NUM_THREADS, USE_OPENMP)
        - https://packages.debian.org/bookworm/libopenblas0-openmp
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    yield Hit(message=f"OpenBLAS, built with its own pthreads pool, was called from inside OpenMP threads and "
                      f"warns that the program may hang (line {s.get('line')}: \"{told_text(s)}\")",
              fix=_FIX, evidence=told_evidence(s))
