"""An OpenMP environment variable whose value the program's reader refuses: GNU libgomp's "Invalid value
for environment variable", LLVM/Intel libomp's value messages (knowledge/messages/openmp.toml), and a
Python library that parses OMP_NUM_THREADS with int() (threads.toml) while the value is an OpenMP list."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "omp-env-invalid"
_PYTHON = "threads:python-int-of-thread-variable"

# A value each variable accepts, for the fix (what libgomp accepts is in knowledge/openmp_env.toml).
_EXAMPLE = {"OMP_DYNAMIC": "false", "OMP_NESTED": "false", "OMP_CANCELLATION": "false", "OMP_DISPLAY_AFFINITY": "false",
            "OMP_DISPLAY_ENV": "false", "OMP_NUM_THREADS": "${SLURM_CPUS_PER_TASK:-1}", "OMP_THREAD_LIMIT": "${SLURM_CPUS_PER_TASK:-1}",
            "OMP_PROC_BIND": "close", "OMP_PLACES": "cores", "OMP_STACKSIZE": "512M", "GOMP_STACKSIZE": "512M",
            "OMP_WAIT_POLICY": "passive", "OMP_SCHEDULE": "static", "OMP_MAX_ACTIVE_LEVELS": "1"}
_LIBGOMP_ACCEPTS = knowledge.load("openmp_env")["libgomp"]["accepts"]


def _python_hit(s: dict) -> Hit:
    variable, value = str(s.get("variable")), str(s.get("value"))
    first = value.split(",")[0].strip()
    is_list = "," in value and all(p.strip().isdigit() for p in value.split(","))
    why = (f"'{value}' is an OpenMP list (one thread count per nesting level), valid for the OpenMP runtimes, but the library "
           "converts the variable with int() and accepts a single integer only" if is_list else
           f"the library converts {variable} with int() and '{value}' is not an integer")
    count = first if first.isdigit() else "4"
    fix = (f"export NUMEXPR_NUM_THREADS={count}   # numexpr reads NUMEXPR_NUM_THREADS before OMP_NUM_THREADS: "
           f"the OpenMP list can stay for the OpenMP runtimes\n" if variable == "OMP_NUM_THREADS" else "")
    fix += f"export {variable}={count}   # or a single integer in {variable} itself (in the job script or the container's environment)"
    return Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {variable}={value}: {why}; the import fails", fix=fix,
               evidence=told_evidence(s))


@rule("SW080", SYMBOL, "error", "an OpenMP environment variable holds a value its reader refuses", impact=4,
      also={"warning": "libomp's \"too small\"/\"too large\" and \"ignored\" forms: the runtime clamps or drops the value and runs on"})
def omp_env_invalid(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, an OpenMP runtime refusing an environment variable's value: GNU
        libgomp's "libgomp: Invalid value for environment variable OMP_DYNAMIC" (any variable
        its env.c parses: OMP_NUM_THREADS, OMP_PROC_BIND, OMP_PLACES, OMP_STACKSIZE,
        OMP_WAIT_POLICY, OMP_SCHEDULE's "Unknown value" and chunk, GOMP_CPU_AFFINITY ...), named
        with the values libgomp accepts for it; LLVM/Intel libomp's catalogue messages about a
        value ("OMP_SCHEDULE value \"fastest\" is invalid.", "Wrong value, boolean expected",
        "is an invalid value; ignored", "Invalid symbols found", "too small"/"too large" and
        the other parse messages of en_US.txt); and a Python library that converts
        OMP_NUM_THREADS (or NUMEXPR_/MKL_/OPENBLAS_NUM_THREADS) with int() meeting an OpenMP
        list such as 4,3,2 (numexpr's "ValueError: invalid literal for int() with base 10").

    Why it matters:
        The runtime ignores the value and runs with its default (one thread per CPU, no
        binding), so a job script's setting silently does not apply; a Python library that
        cannot parse the variable fails at import. Site profiles and container images set
        these variables for every user, so the value may not be the user's.

    How to fix:
        echo the variable where the job runs, and set a value the reader accepts (the finding
        names it), or unset it; for numexpr and an OpenMP list, set NUMEXPR_NUM_THREADS to one
        integer, which numexpr reads first.

    References:
        - https://gcc.gnu.org/onlinedocs/libgomp/Environment-Variables.html
        - https://github.com/gcc-mirror/gcc/blob/master/libgomp/env.c (the parsers and their "Invalid value" message)
        - https://github.com/llvm/llvm-project/blob/main/openmp/runtime/src/i18n/en_US.txt (libomp's value messages)
        - https://www.openmp.org/spec-html/5.0/openmpse50.html (OMP_NUM_THREADS: a list of positive integers)
        - https://github.com/pydata/numexpr/issues/421 (numexpr accepts an integer only)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    if s.get("id") == _PYTHON:
        yield _python_hit(s)
        return
    variable = str(s.get("variable") or "")
    if not variable and str(s.get("id")).startswith("threads:libgomp-") and "OMP_SCHEDULE" in str(s.get("text")):
        variable = "OMP_SCHEDULE"
    value = s.get("value")
    shown = f"{variable}={value!s}" if value is not None else variable or "an OpenMP variable"
    accepts = _LIBGOMP_ACCEPTS.get(variable) if str(s.get("id")).startswith("threads:") else None
    runtime = "GNU libgomp" if str(s.get("id")).startswith("threads:") else "the LLVM/Intel OpenMP runtime (libomp, libiomp5)"
    clamped = any(w in str(s.get("text")) for w in ("too small", "too large", "ignored", "will be used", "using "))
    name = variable or "OMP_..."
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {runtime} refused {shown}"
                      + (f"; it accepts {accepts}" if accepts else "")
                      + ("; it runs on with its own value instead" if clamped else "; the setting does not apply (the default is used)"),
              fix=(f"env | grep -E '^(OMP|GOMP|KMP)_'   # what the job really has: a site profile, module or container image may set {name}\n"
                   + (f"export {name}={_EXAMPLE[name]}   # in the job script, before the program starts; it accepts {accepts or 'this form'}"
                      if name in _EXAMPLE else
                      f"unset {name}   # the runtime's default applies; to set it, use a value its documentation lists")),
              evidence=told_evidence(s), severity="warning" if clamped else "error")
