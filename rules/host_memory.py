"""The host, or the share of it the process may commit, is too small for what the program asks: a
new process or thread, a heap. Read from the messages whose emitter says memory was refused (fork's
ENOMEM, the Go runtime's clone errno 12, the JVM's failed commit: knowledge/messages/oslimits.toml,
jvm.toml), and on a live node from the commit accounting in /proc/meminfo with the overcommit mode
(checks/memory.py). A process killed by the OOM killer is host-memory-oom-killed's; a thread refused
with EAGAIN, which is this or the process limit, is nproc-limit-too-low's, at info."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.parse.sizes import gib
from hpcdoctor.rules._common import catalogued, ticket_evidence, told_text
from hpcdoctor.rules.address_space import SIZELESS_REFUSALS, sge_memory_shown

# The Go runtime prints clone's errno itself; 12 is ENOMEM (golang/go src/runtime/os_linux.go newosproc).
_GO_THREAD = "oslimits:go-failed-to-create-os-thread"
_JVM_COMMIT = "jvm:commit-memory-failed"
_MIB = 2 ** 20

_MEMORY = ("free -m; grep -E 'MemTotal|MemAvailable|SwapFree|CommitLimit|Committed_AS' /proc/meminfo; "
           "cat /proc/sys/vm/overcommit_memory   # what the node has, and how much more it will commit\n")
_SLURM = ("sacct -u $USER -S today -o JobID,ReqMem,MaxRSS,State   # on a Slurm cluster: what earlier runs asked for and used; "
          "then #SBATCH --mem with room above MaxRSS, or a node with more memory\n")


def _told(f: FactView) -> list:
    out = []
    for s in catalogued(f, "host-memory-insufficient"):
        if s.get("id") == _JVM_COMMIT and str(s.get("errno")) != "12":
            continue   # another errno (EINVAL, a mapping refused) is not memory short
        out.append(s)
    for s in f.get("ticket.symptoms") or []:
        if isinstance(s, dict) and s.get("id") == _GO_THREAD and str(s.get("errno")) == "12":
            out.append(s)
    return sorted(out, key=lambda s: int(s.get("line") or 0) if str(s.get("line") or "").isdigit() else 0)


def _jvm_bytes(f: FactView) -> Optional[int]:
    for s in f.get("ticket.symptoms") or []:
        if isinstance(s, dict) and s.get("id") in ("jvm:native-memory-allocation-failed", _JVM_COMMIT) and str(s.get("bytes") or "").isdigit():
            return int(s["bytes"])
    return None


# Nextflow's local executor (nextflow.toml): a task's memory directive above what the machine gives.
# process.resourceLimits caps every process's request (Nextflow 24.04 and later; nf-core pipelines
# before it take --max_memory); a grid executor sends the task to a node that has the memory.
_NEXTFLOW = "nextflow:requirement-exceeds-memory"


def _nextflow_fix(avail: str) -> str:
    """The commands for a task capped at what the host gives (its figure as Nextflow writes a
    MemoryUnit in config: "12 GB" is 12.GB)."""
    cap = avail.replace(" ", ".")
    return ("free -g   # the memory this machine has (Nextflow's local executor counts all of it, or executor.memory)\n"
            f"echo 'process.resourceLimits = [memory: {cap}]' >> nextflow.config   # cap every process at what the "
            f"host has (Nextflow 24.04 or later; older nf-core pipelines: --max_memory {cap}), then -resume\n"
            "nextflow run ... -profile slurm -resume   # or run the tasks on the cluster's nodes through its scheduler "
            "(the pipeline's profile for it), where a node with that memory can take the task")


_RUNTIME = "runtime_memory:"
# torch's own host allocator (torch.toml cpu-alloc-failed): posix_memalign's ENOMEM, the bytes asked in its words
_TORCH_CPU = "torch:cpu-alloc-failed"
# Other emitters' own words that an allocation failed, answered as a runtime's (the same refusal, no limit
# named): conda's CondaMemoryError (conda/exceptions.py, raised for Python's MemoryError) and GNU OpenMP's
# "Out of memory allocating N bytes" (libgomp's gomp_malloc, which then ends the program); OpenCL's
# CL_OUT_OF_HOST_MEMORY (-6), "memory could not be allocated on the host" (the API specification's
# Error Codes appendix), which the OpenCL implementation returns for its own host allocations.
_ALLOCATION_FAILED = frozenset({"conda:out-of-memory", "threads:libgomp-out-of-memory", "opencl:CL_OUT_OF_HOST_MEMORY"})
# Apple's libmalloc (macOS malloc, knowledge/messages/libmalloc.toml): a zone that could not map a region
# ("can't allocate region", mach_vm_map(size=N) failed) is the same refusal, its size in `bytes`.
_LIBMALLOC = "libmalloc:"
_WHICH = ("free -g   # RAM and swap the node has, against the size the message asked for\n"
          "ulimit -v   # an address-space limit in kB ('unlimited' rules it out): a scheduler may set it from the memory request\n"
          "cat /proc/sys/vm/overcommit_memory   # 2: strict accounting refuses what CommitLimit cannot cover\n" + _SLURM)


# Above this a single allocation is the program's own request gone wrong, not the host's memory
# (knowledge/thresholds.toml [runtime_allocation], hpcdoctor's own line, with its reason).
_PROGRAMS_OWN_GIB = knowledge.load("thresholds")["runtime_allocation"]["programs_own_gib"]


def _runtime(s: dict) -> bool:
    """A language runtime's (or torch's host allocator's) own words that an allocation failed."""
    return (str(s.get("id", "")).startswith((_RUNTIME, _LIBMALLOC)) or s.get("id") == _TORCH_CPU
            or s.get("id") in _ALLOCATION_FAILED)


def _sized(s: dict) -> bool:
    return str(s.get("bytes") or "").isdigit() or bool(s.get("size"))


def _line(s: dict) -> int:
    return int(s["line"]) if str(s.get("line") or "").isdigit() else 0


def _same_failure_as_beyond(told: list) -> list:
    """The refusals left once those beyond any node are set aside. A size-less refusal (CPython's bare
    "MemoryError", C++'s std::bad_alloc) printed after an allocator's line that states a size beyond any
    node is that same failure reported again by the language above the allocator (libmalloc's
    mach_vm_map refusal of 200 TB, then the MemoryError numpy or pandas raises for the NULL it got): it
    says nothing of the host's memory either, so it is set aside with it. A size-less refusal before
    any such line, or a sized one that fits a node, still counts."""
    beyond = [_beyond_any_node(s) for s in told]
    if not any(beyond):
        return told
    first = min(_line(s) for s, out in zip(told, beyond) if out)
    return [s for s, out in zip(told, beyond) if not out
            and not (_runtime(s) and not _sized(s) and _line(s) > first)]


def _beyond_any_node(s: dict) -> bool:
    """Whether a runtime's refused allocation is larger than _PROGRAMS_OWN_GIB."""
    if not _runtime(s):
        return False
    if str(s.get("bytes") or "").isdigit():   # torch's "you tried to allocate N bytes", libgomp's "allocating N bytes"
        return int(s["bytes"]) / 2 ** 30 > _PROGRAMS_OWN_GIB
    try:
        size = float(str(s.get("size")).rstrip("."))
    except (TypeError, ValueError):
        return False
    size_gib = gib(size, str(s.get("unit") or ""))
    return size_gib is not None and size_gib > _PROGRAMS_OWN_GIB


def _runtime_hit(s: dict) -> Hit:
    """A language runtime's own words that an allocation failed (runtime_memory.toml): which limit
    refused it is not in the words, so a warning with the commands that tell (info for Octave, whose
    message also covers an array past its index type)."""
    octave = s.get("id") == "runtime_memory:octave-bad-alloc"
    size = (f" ({s['size']} {s['unit']} asked)" if s.get("size") and s.get("unit") else
            f" ({int(s['bytes']) / _MIB:.0f} MiB asked)" if str(s.get("bytes") or "").isdigit() else "")
    if s.get("id") == _TORCH_CPU and str(s.get("bytes") or "").isdigit():
        size = f" ({int(s['bytes']) / 2 ** 30:.2f} GiB asked of torch's host allocator)"
    return Hit(message=f"the program could not get memory for an allocation{size} (line {s['line']}: \"{told_text(s)}\"): the "
                       "message does not say which limit refused it: the node's RAM and swap (a request larger than "
                       "what is free), an address-space limit (ulimit -v), or strict overcommit; a job's cgroup "
                       "limit (--mem) usually ends in the OOM killer instead. MaxRSS against ReqMem (sacct), free -g "
                       "and ulimit -v tell which"
                       + ("; Octave says the same when an array passes its index type (2^31-1 elements on a "
                          "32-bit-index build)" if octave else ""),
               severity="info" if octave else "warning",
               fix=_WHICH.rstrip("\n"),
               evidence=ticket_evidence(s))


@rule("MEM007", "host-memory-insufficient", "error", "the host has too little memory for what the program asks", impact=7,
      also={"warning": "memory was refused, but the message does not say by which limit (RAM and swap, ulimit -v, strict overcommit; the JVM names others)",
            "info": "Octave's bad_alloc: memory, or an array past its index type"})
def host_memory_insufficient(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a request for memory the kernel refused, in the emitter's words: bash's
        "fork: Cannot allocate memory" (fork's ENOMEM: no memory for the new process, or none left
        to commit under vm.overcommit_memory=2), the Go runtime's "failed to create new OS thread
        (... errno=12)", Go's "fork/exec <path>: cannot allocate memory" (docker, containerd), the JVM's "os::commit_memory(...) failed; error='Cannot allocate memory'
        (errno=12)" and "There is insufficient memory for the Java Runtime Environment to continue"
        (a warning: the JVM's own first reason is RAM and swap, it names others); a language runtime's
        own words that an allocation failed (knowledge/messages/runtime_memory.toml: R's "cannot
        allocate vector of size 4.5 Gb", NumPy's "Unable to allocate ... for an array with shape",
        Python's MemoryError, C++'s std::bad_alloc, Julia's OutOfMemoryError(), MATLAB's "Out of
        memory.", bash's xmalloc; torch's "DefaultCPUAllocator: can't allocate memory: you tried to
        allocate N bytes. Error code 12"; conda's "The conda process ran out of memory", GNU OpenMP's
        "libgomp: Out of memory allocating N bytes"; OpenCL's CL_OUT_OF_HOST_MEMORY (-6) as any
        OpenCL program prints it (Vina-GPU's "Err-6:CL_OUT_OF_HOST_MEMORY", pyopencl's
        "OUT_OF_HOST_MEMORY", knowledge/messages/opencl.toml); macOS libmalloc's "can't allocate region" with
        its mach_vm_map size, knowledge/messages/libmalloc.toml), at a warning (a request above knowledge/thresholds.toml's
        programs_own_gib is the program's own error, not the host's memory, and so is a bare
        MemoryError or std::bad_alloc printed after it): the words do not say whether RAM and swap, ulimit -v
        or strict overcommit refused it (Octave's, which also covers its index type, at info). A
        runtime's own ceiling (the JVM's -Xmx "Java heap space", R's R_MAX_VSIZE) is not this. On a live node, strict
        overcommit (vm.overcommit_memory=2) with Committed_AS so close to CommitLimit that a new
        thread's stack (ulimit -s) no longer fits: every fork, thread and allocation then fails.

    Why it matters:
        A program that cannot get memory stops at once: no new thread ("can't start new thread": glibc
        reports a stack it could not map as EAGAIN), no new process, no heap. A small virtual machine,
        a JVM asked for more heap (-Xmx/-Xms) than the node has, or a node whose memory other jobs
        hold, all end this way.

    How to fix:
        free -m and /proc/meminfo show what is left; run on a node with more memory (on a cluster,
        ask the scheduler for it: --mem), start fewer processes or threads, give the JVM a heap the
        node can hold (-Xmx), or stop what holds the memory.

    References:
        - https://docs.kernel.org/mm/overcommit-accounting.html (the overcommit modes, CommitLimit and Committed_AS)
        - https://github.com/bminor/glibc/blob/02189e8fb00c3c7f4e67476e21011a22c5dee707/nptl/pthread_create.c (a stack it could not map is EAGAIN)
        - https://github.com/openjdk/jdk/blob/016e8f108b96fa9ec391ba93b67f62e78df04283/src/hotspot/share/utilities/vmError.cpp (print_oom_reasons)
        - https://github.com/torproject/sbws/issues/195 (a thread that could not start on a host with little RAM)
        - https://github.com/wch/r-source/blob/c9a486995fe6cf54d9077a6046815d057bca371d/src/main/memory.c (R's allocation errors)
        - https://github.com/RausellLab/CelliD/issues/7 (R: cannot allocate vector of size 4.5 Gb)
    """
    told = _same_failure_as_beyond(_told(f))
    if told:
        s = told[0]
        if s.get("id") == _NEXTFLOW:
            yield Hit(message=f"Nextflow's local executor would not start a task that asks {s.get('req')} of memory where "
                              f"this machine gives {s.get('avail')} (line {s['line']}: \"{told_text(s)}\"): one process's "
                              "memory directive is more than the host has",
                      fix=_nextflow_fix(str(s["avail"])),
                      evidence=ticket_evidence(s))
            return
        if _runtime(s):
            if sge_memory_shown(f) is not None and s.get("id") in SIZELESS_REFUSALS:
                return   # Grid Engine's h_vmem refused it: virtual-memory-ulimit-too-low (ENV088) answers
            yield _runtime_hit(s)
            return
        jvm = str(s.get("id", "")).startswith("jvm:")
        if jvm:
            size = _jvm_bytes(f)
            asked = f" ({size / _MIB:.0f} MiB asked)" if size else ""
            yield Hit(message=f"the JVM could not get native memory{asked} (line {s['line']}: \"{told_text(s)}\"): its first "
                              "reason is a host out of RAM and swap (or past the commit limit under vm.overcommit_memory=2), "
                              "usually a heap (-Xmx/-Xms) larger than the node gives; it also names vm.max_map_count",
                      severity="warning",
                      fix=(_MEMORY + "export JAVA_TOOL_OPTIONS=-Xmx2g   # a heap the node can hold, below MemAvailable "
                           "(every java the tool starts reads it; or -Xmx on its own command line)\n" + _SLURM).rstrip("\n"),
                      evidence=ticket_evidence(s))
            return
        yield Hit(message=f"the kernel refused memory for a new process or thread (line {s['line']}: \"{told_text(s)}\"): "
                          "ENOMEM from fork or clone is memory, not the process limit: the host has too little free (or "
                          "too fragmented: /proc/buddyinfo) memory, or the commit limit under vm.overcommit_memory=2 "
                          "refuses a copy of a large parent",
                  fix=(_MEMORY + "ps -eo rss,user,comm --sort=-rss | head   # what holds the memory\n" + _SLURM).rstrip("\n"),
                  evidence=ticket_evidence(s))
        return
    mode = f["memory.overcommit_memory"]
    if mode != 2:
        return   # heuristic (0) and always (1) refuse only a single mapping beyond RAM and swap
    limit, committed = f["memory.commit_limit_bytes"], f["memory.committed_as_bytes"]
    stack = f.get("limits.stack")
    soft = stack.get("soft") if isinstance(stack, dict) else None
    need = soft if isinstance(soft, int) and soft > 0 else 0
    room = limit - committed
    if room < max(need, 1):
        said = f"a new thread's stack (ulimit -s: {need / _MIB:.0f} MiB)" if need else "any new mapping"
        yield Hit(message=f"strict overcommit (vm.overcommit_memory=2) and {room / _MIB:.0f} MiB left to commit "
                          f"(Committed_AS {committed / _MIB:.0f} MiB of CommitLimit {limit / _MIB:.0f} MiB): {said} no "
                          "longer fits; new threads, processes and allocations fail",
                  fix=(_MEMORY + "ps -eo vsz,rss,user,comm --sort=-vsz | head   # what has committed the most\n"
                       "ulimit -s 1024   # in the job script: smaller thread stacks commit less (if the program needs no deep stack)\n"
                       + _SLURM).rstrip("\n"),
                  evidence={"memory.overcommit_memory": mode, "memory.commit_limit_bytes": limit,
                            "memory.committed_as_bytes": committed, "limits.stack": stack})
