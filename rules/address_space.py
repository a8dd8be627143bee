"""A process that cannot reserve the address space it needs because of a virtual-memory limit
(RLIMIT_AS, ulimit -v), as a login node's shell limits or Grid Engine's h_vmem set it: the HotSpot
JVM's "Could not allocate metaspace" and "Could not reserve enough space for ... object heap"
(knowledge/messages/jvm.toml), read beside the limit where the paste shows it (ulimit.toml); a
program's refused allocation (std::bad_alloc, MemoryError) in a Grid Engine job whose memory
requests the paste names."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, told_evidence, told_text

SYMBOL = "virtual-memory-ulimit-too-low"
_LIMIT_LINES = ("ulimit:vmem-set", "ulimit:vmem-bash")
SGE_MEMORY = "prose:sge-memory-request-said"
# A runtime's own words that an allocation failed, with no size: under Grid Engine's h_vmem the
# address-space limit refuses it (runtime_memory.toml).
SIZELESS_REFUSALS = ("runtime_memory:cxx-bad-alloc", "runtime_memory:python-memoryerror")

# Grid Engine's shepherd sets h_vmem (per slot, times the slots on the host) as RLIMIT_AS: the job's
# programs see allocations refused; mem_free and virtual_free only choose the host.
_SGE_FIX = ("qstat -j \"$JOB_ID\" | grep -E 'resource_list|usage'   # the limits the job runs under and its vmem "
            "(inside the job; else its number), h_vmem the address-space one\n"
            "qconf -sc | grep -E 'h_vmem|s_vmem|mem_free|virtual_free'   # how this site defines them: a consumable h_vmem "
            "with a default limits every job that does not ask\n"
            "ulimit -v   # inside the job: the address-space limit in kB the shepherd set\n"
            "# resubmit asking for address space as well: qsub -l h_vmem=20G (per slot; mem_free only chooses a host)")

_FIX = ("ulimit -v; ulimit -Hv   # the address-space limit (kB) of this shell, soft and hard: a number, not unlimited, is what the JVM ran under\n"
        "ulimit -Sv unlimited   # raise the soft limit for this shell, up to the hard one (ulimit -Hv), then run java again\n"
        "java -XX:CompressedClassSpaceSize=256m -Xmx2g -version   # or make the JVM reserve less: a smaller class space and heap\n"
        "# on a login node whose limit is the site's policy, run the work in a job instead: "
        "srun --pty bash, qsub -I or bsub -Is bash (an interactive job on a compute node)")


def _limit(f: FactView) -> Optional[dict]:
    """A finite address-space limit the paste shows: a ulimit -v command or ulimit -a's line."""
    for s in f.get("ticket.symptoms") or []:
        if isinstance(s, dict) and s.get("id") in _LIMIT_LINES and str(s.get("kbytes", "")).isdigit():
            return s
    return None


def sge_memory_shown(f: FactView) -> Optional[tuple]:
    """A size-less refused allocation beside Grid Engine's memory requests: (the refusal, the request)."""
    said, refused = first_symptom(f, SGE_MEMORY), first_symptom(f, *SIZELESS_REFUSALS)
    return (refused, said) if said is not None and refused is not None else None


def _reserved(s: dict) -> str:
    """What the JVM tried to reserve, in MiB, where the line gives it."""
    try:
        if s.get("bytes") is not None:
            return f" ({int(s['bytes']) / 1024 ** 2:.0f} MiB)"
        if s.get("kbytes") is not None:
            return f" ({int(s['kbytes']) / 1024:.0f} MiB)"
    except (TypeError, ValueError):
        pass
    return ""


@rule("ENV088", SYMBOL, "warning",
      "a program could not reserve its memory at start: consistent with a virtual-memory limit (ulimit -v) below what it reserves",
      impact=5, also={"error": "the paste also shows a finite ulimit -v (a command or ulimit -a's line)"})
def virtual_memory_ulimit_too_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, the HotSpot JVM's start-up failures to reserve address space, printed after
        "Error occurred during initialization of VM": "Could not allocate metaspace: N bytes" (its
        compressed class space, 1 GiB by default), "Could not reserve enough space for N KB object
        heap" and the older "Could not reserve enough space for object heap". A warning: each is
        what an address-space limit (ulimit -v, RLIMIT_AS) below the reservation causes, and also
        what a -Xmx beyond the machine or a 32-bit JVM prints. An error where the paste also shows
        a finite limit: a "ulimit -v N" command or ulimit -a's "virtual memory (kbytes, -v) N".
        Also a program's size-less refusal (C++'s std::bad_alloc, Python's MemoryError) where the
        paste names Grid Engine's memory requests (h_vmem, s_vmem, virtual_free, -l mem_free): Grid
        Engine's shepherd sets h_vmem as the job's RLIMIT_AS (the node's RAM is another rule's,
        host-memory-insufficient, which then steps aside).

    Why it matters:
        The JVM reserves its heap and class space whole when it starts, far more address space than
        it will use; RLIMIT_AS counts reservations, not use, so a shell limit of a few GB (common on
        login nodes, to keep heavy work off them) stops even "java -version". It is not a lack of
        memory on the node and no change to the program helps.

    How to fix:
        Read the limit (ulimit -v, ulimit -Hv) and raise the soft one (ulimit -Sv unlimited, up to
        the hard one); or make the JVM reserve less (-XX:CompressedClassSpaceSize, -Xmx); where the
        limit is a login node's policy, run the work in an interactive or batch job instead
        (srun --pty bash, qsub -I, bsub -Is). In a Grid Engine job, ask for the address space too
        (qsub -l h_vmem=..., per slot): mem_free only chooses the host.

    References:
        - https://bugs.openjdk.org/browse/JDK-8043516 (java cannot start under ulimit -v: the class space reservation)
        - https://github.com/openjdk/jdk/blob/master/src/hotspot/share/memory/universe.cpp (Could not reserve enough space for ... object heap)
        - https://man7.org/linux/man-pages/man2/getrlimit.2.html (RLIMIT_AS: the maximum size of the process's virtual memory)
        - https://github.com/cBio/cbio-cluster/issues/183 (a head node's 4 GB ulimit -v stops java; the admin: use an interactive job)
        - https://github.com/haikuports/haikuports/issues/3549 (ulimit -S -v 819400 reproduces it on Linux)
        - https://github.com/daimh/sge/blob/684f8df18695b503d10b3a953737c3eee7ca58c5/source/daemons/shepherd/setrlimits.c (h_vmem as RLIMIT_AS)
        - https://github.com/TIGRLab/admin/issues/303 (bad_alloc in a Grid Engine job asking only mem_free; h_vmem set fixed it)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        sge = sge_memory_shown(f)
        if sge is not None:
            refused, said = sge
            yield Hit(message=f"line {refused.get('line')}: \"{told_text(refused)}\": the program could not get memory in a "
                              f"Grid Engine job (line {said.get('line')}: \"{told_text(said)}\"): Grid Engine sets h_vmem, "
                              "per slot, as the job's address-space limit (RLIMIT_AS), which refuses allocations before RAM "
                              "runs out; mem_free and virtual_free only choose the host",
                      fix=_SGE_FIX, evidence=told_evidence(refused))
        return
    s, limit = told[0], _limit(f)
    shown = ""
    if limit is not None:
        shown = (f"; line {limit.get('line')} shows the limit: \"{told_text(limit)}\" "
                 f"({int(limit['kbytes']) / 1024:.0f} MiB of address space)")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the JVM could not reserve its memory{_reserved(s)} when it started. "
                      "An address-space limit (ulimit -v, RLIMIT_AS) below what the JVM reserves does this, as login nodes' shell "
                      f"limits do; so does a -Xmx larger than the machine allows{shown}",
              fix=_FIX, evidence=told_evidence(s), severity="error" if limit is not None else None)
