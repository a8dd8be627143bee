"""The stack size limit (RLIMIT_STACK) too small for a program that keeps large arrays on its stack:
Fortran codes above all (ifort's automatic and temporary arrays), read from the node's own limit and
from a pasted segmentation fault (knowledge/messages/fortran.toml, shell.toml, ulimit.toml, prose.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "stack-limit-too-low"
# Linux's default soft stack limit: _STK_LIM, 8 MiB (include/uapi/linux/resource.h, linux-libc-dev 6.1.187).
DEFAULT_KIB = 8192
_LISTED = ("ulimit:stack-bash", "ulimit:stack-zsh", "ulimit:stack-dash", "ulimit:stack-tcsh")
_SEGFAULTS = ("shell:segmentation-fault", "fortran:forrtl-sigsegv", "fortran:gfortran-sigsegv")


def _fix(soft_kib: Optional[int] = None, hard_kib: Optional[int] = None, hard_shown: bool = True) -> str:
    # A pasted shell listing shows the soft limit alone: raise it to whatever the hard one is.
    raise_to = "$(ulimit -Hs)" if not hard_shown else "unlimited" if hard_kib is None else str(hard_kib)
    now = f" (now {soft_kib})" if soft_kib is not None else ""
    return (f"ulimit -Ss; ulimit -Hs   # the soft{now} and hard stack limits (kB) this shell gives the program\n"
            f"ulimit -s {raise_to}   # in the job script or shell, before the program starts: the soft limit up to the hard one\n"
            f"srun --propagate=STACK ./program   # under Slurm: the submitting shell's stack limit to the tasks "
            "(the default propagates all limits unless the site's PropagateResourceLimitsExcept names STACK)\n"
            "export OMP_STACKSIZE=512M   # an OpenMP program's other threads: their stacks are OMP_STACKSIZE, not ulimit -s\n"
            "# or rebuild so the arrays are not on the stack: ifort/ifx -heap-arrays; gfortran -fno-automatic "
            "(not with recursion or OpenMP), or ALLOCATABLE arrays")


def _listed_kib(f: FactView) -> Optional[dict]:
    """The first pasted ulimit listing's stack line with a finite limit (its kB as "kib"), or None."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") in _LISTED and str(s.get("kbytes") or "").isdigit():
            return {**s, "kib": int(s["kbytes"])}
    return None


def _first(f: FactView, *ids: str) -> Optional[dict]:
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in ids), None)


@rule("ENV040", SYMBOL, "warning", "the stack size limit (ulimit -s) is too small for the program's arrays", impact=6,
      also={"info": "a bare segmentation fault of a program a Fortran compiler built: the usual cause, not a fact seen"})
def stack_limit_too_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a segmentation fault of a program whose arrays live on the stack: Intel
        Fortran's "forrtl: severe (174): SIGSEGV, segmentation fault occurred" (warning: Intel names
        stack exhaustion first), a shell's "Segmentation fault (core dumped)" or libgfortran's
        "Program received signal SIGSEGV" beside a ulimit -a listing with a finite stack size
        (warning), or beside the user naming ifort, ifx or gfortran as the compiler (info: the usual
        cause). On a live node, a soft stack limit below Linux's 8192 kB default (warning).

    Why it matters:
        ifort and ifx put automatic and temporary arrays on the stack, gfortran its automatic arrays
        (and, with -frecursive or -fopenmp, local arrays above -fmax-stack-var-size): an array of a
        few tens of MB overflows the usual 8 MB stack and the program dies of SIGSEGV, on a machine
        with plenty of memory. An OpenMP program's other threads have stacks of OMP_STACKSIZE,
        which ulimit -s does not change.

    How to fix:
        Raise the soft stack limit before the program starts (ulimit -s unlimited, or the hard
        limit), in the batch script under Slurm (srun --propagate=STACK carries the submitting
        shell's limit to the tasks); set OMP_STACKSIZE for OpenMP threads; or build so the arrays
        are on the heap (ifort -heap-arrays, ALLOCATABLE arrays).

    References:
        - https://software.intel.com/en-us/articles/determining-root-cause-of-sigsegv-or-sigbus-errors
        - https://intel.com/content/www/us/en/docs/fortran-compiler/developer-guide-reference/2023-0/heap-arrays.html
        - https://gcc.gnu.org/onlinedocs/gfortran/Code-Gen-Options.html (-fmax-stack-var-size, -frecursive)
        - https://gcc.gnu.org/onlinedocs/libgomp/OMP_005fSTACKSIZE.html
        - https://slurm.schedmd.com/srun.html#OPT_propagate
        - https://www.man7.org/linux/man-pages/man2/getrlimit.2.html (RLIMIT_STACK)
        - https://github.com/gher-uliege/DIVA/issues/10
    """
    told = catalogued(f, SYMBOL)
    listed = _listed_kib(f)
    forrtl = _first(f, "fortran:forrtl-sigsegv")
    segv = forrtl or _first(f, *_SEGFAULTS)
    if segv is not None:
        quoted = f"line {segv.get('line')}: \"{told_text(segv)}\""
        said = _first(f, "prose:fortran-compiler-said")
        fortran = forrtl is not None or said is not None or segv.get("id") == "fortran:gfortran-sigsegv"
        if listed is not None:
            yield Hit(message=f"the program died of SIGSEGV ({quoted}) under a stack size limit of {listed['kib']} kB "
                              f"(line {listed.get('line')}): arrays larger than that on the stack overflow it"
                              + ("" if fortran else "; run it once with ulimit -s unlimited to confirm"),
                      fix=_fix(listed["kib"]), severity=None if fortran else "info",
                      evidence={**told_evidence(segv), "stack_kib": listed["kib"]})
            return
        if forrtl is not None:
            yield Hit(message=f"an Intel Fortran program died of SIGSEGV ({quoted}): the first cause Intel names is the "
                              "stack size limit, too small for its automatic and temporary arrays; a bad index reads the same",
                      fix=_fix(), evidence=told_evidence(forrtl))
            return
        if fortran:
            who = f"built with {said.get('compiler')}" if said is not None else "built with gfortran"
            yield Hit(message=f"a program {who} died of SIGSEGV ({quoted}): the usual cause (Intel's SIGSEGV article, "
                              "gfortran's -fmax-stack-var-size) is the stack size limit, too small for arrays the compiler "
                              "puts on the stack; run it once with ulimit -s unlimited to confirm",
                      fix=_fix(), severity="info", evidence=told_evidence(segv))
            return
    if told:
        return
    stack = f.get("limits.stack")
    if not isinstance(stack, dict) or stack.get("soft") is None:
        return   # unknown or unlimited: nothing the node shows
    soft_kib, hard = stack["soft"] // 1024, stack.get("hard")
    hard_kib = hard // 1024 if isinstance(hard, int) else None
    if soft_kib < DEFAULT_KIB:
        yield Hit(message=f"the soft stack size limit is {soft_kib} kB, below Linux's default of {DEFAULT_KIB} kB: "
                          "a program with large arrays on its stack dies of SIGSEGV",
                  fix=_fix(soft_kib, hard_kib, "hard" in stack), evidence={"limits.stack": stack})
