"""Thread counts against the CPUs the job was given."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, local_ranks, parse_threads, ticket_evidence, told_text


def _share(f: FactView):
    """CPUs each rank on this node may use, and where that comes from. The CPUs this process may
    run on (sched_getaffinity, the cgroup) are the truth; Slurm's cpus-per-task is a claim that
    only lowers the share, never raises it past what the kernel allows."""
    cpt = f.get("scheduler.cpus_per_task")
    cpt = cpt if isinstance(cpt, int) and cpt > 0 else None
    allowed = f.get("affinity.allowed_count")
    if not isinstance(allowed, int) or allowed < 1:
        if cpt:
            return cpt, "SLURM_CPUS_PER_TASK"
        allowed = f["affinity.allowed_count"]  # raises MissingFact with the reason
    ranks = local_ranks(f)
    # Ranks bound one by one each see their own set; ranks sharing one set split it.
    truth = allowed if ranks < 2 or (cpt and allowed <= cpt) else max(1, allowed // ranks)
    if cpt and cpt <= truth:
        return cpt, "SLURM_CPUS_PER_TASK"
    if cpt:
        return truth, f"{allowed} CPUs allowed, though SLURM_CPUS_PER_TASK={cpt}"
    if ranks > 1 and truth != allowed:
        return truth, f"{allowed} allowed CPUs / {ranks} local ranks"
    return truth, "the CPUs this process may run on"


BINDING = {"OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}


def _binding_missing(f: FactView, threads):
    """A multi-threaded process in a job with no OpenMP or srun binding (THR004's case)."""
    env = f["env.vars"]
    if not f.get("scheduler.in_job") or threads < 2:
        return False
    if env.get("OMP_PROC_BIND") or env.get("OMP_PLACES") or env.get("KMP_AFFINITY") or env.get("GOMP_CPU_AFFINITY"):
        return False
    bind = (f.get("scheduler.cpu_bind") or "").lower()
    return not bind or "none" in bind


def _threads_fix(share, source):
    return "export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK" if source == "SLURM_CPUS_PER_TASK" else \
        f"export OMP_NUM_THREADS={share}"


@rule("THR001", "omp-threads-unset", "advice", "OMP_NUM_THREADS unset inside a job", impact=7,
      also={"warning": "several ranks share this node"})
def omp_threads_unset(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A process inside a batch job, or one of several ranks launched on a node, with
        OMP_NUM_THREADS unset. In a pasted ticket without the environment, a user who sees every
        core of the machine busy ("high CPU usage ... on all 36 available cores").

    Why it matters:
        Without it each OpenMP runtime, and PyTorch's intra-op pool, sizes itself from the node
        rather than the allocation. With several ranks per node every rank starts one thread per
        core and they fight for the same cores; a job given a few CPUs on a shared node may start
        as many threads as the node has. Either way compute slows and timings turn erratic.

    How to fix:
        export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK in the job script (or the CPUs per rank, as
        the message says), and bind ranks with srun --cpu-bind=cores.

    References:
        - 004_3c12714629749d50.txt ("export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK and use srun --cpu-bind=cores")
        - 000_6e25303b50457a54.txt (section 3.3: export OMP_NUM_THREADS)
    """
    try:
        env = f["env.vars"]
    except MissingFact:
        told = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "prose:all-cores-busy" and t.get("cores")), None)
        if told is None:  # a title's "High CPU usage" alone does not say every core is busy
            raise
        yield _all_cores_told(told)
        return
    in_job = f.get("scheduler.in_job")
    ranks = local_ranks(f)
    if env.get("OMP_NUM_THREADS") is not None or not (in_job or ranks > 1):
        return
    share, source = _share(f)
    # Setting the count alone would leave the new threads unbound (THR004): fix both at once.
    bind = dict(BINDING) if _binding_missing(f, share) else {}
    fix = _threads_fix(share, source)
    if bind:
        fix += "".join(f" {k}={v}" for k, v in bind.items())
    yield Hit(
        message=(f"OMP_NUM_THREADS is unset; each of the {ranks} rank(s) on this node should use "
                 f"{share} thread(s) ({source})"),
        fix=fix,
        evidence={"env.OMP_NUM_THREADS": None, "cpus_per_rank": share, "local_ranks": ranks},
        severity="warning" if ranks > 1 else None,
        env={"OMP_NUM_THREADS": str(share), **bind},
    )


def _all_cores_told(s) -> Hit:
    """A pasted ticket with no environment, whose user sees every core of the machine busy: what
    OpenMP's and torch's intra-op pools do when OMP_NUM_THREADS is unset (one thread per core)."""
    return Hit(message=f"the user sees all {s['cores']} cores busy (line {s['line']}): with OMP_NUM_THREADS unset, "
                       "each OpenMP runtime and torch's intra-op pool start one thread per core of the machine",
               fix="export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-4}   # the CPUs this job should use "
                   "(inside Slurm its cpus-per-task; 4 where unsure); in code: torch.set_num_threads(4)",
               evidence=ticket_evidence(s), severity="warning")


@rule("THR002", "omp-threads-mismatch", "warning", "OMP_NUM_THREADS does not match the CPUs given",
      impact=7, also={"advice": "fewer threads than CPUs (cores idle, nothing slowed)"})
def omp_threads_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        OMP_NUM_THREADS set to a value that is not a number, or that differs from the CPUs each
        rank was given (Slurm's cpus-per-task, or the allowed CPU set shared by the local ranks).

    Why it matters:
        More threads than CPUs oversubscribes the cores: threads preempt each other, barriers
        wait on descheduled threads and throughput can fall several-fold. Fewer threads than
        CPUs leaves cores the job is paying for idle.

    How to fix:
        Set OMP_NUM_THREADS to the CPUs per rank: export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK.

    References:
        - 004_3c12714629749d50.txt ("export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK")
        - 001_dd2fe1913b91ca0a.txt (threads and cpus-per-task)
    """
    raw = f["env.vars"].get("OMP_NUM_THREADS")
    if raw is None:
        return
    threads = parse_threads(raw)
    if threads is None or threads < 1:
        yield Hit(
            message=f"OMP_NUM_THREADS={raw!r} is not a positive thread count; runtimes ignore it or fail",
            fix="export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK",
            evidence={"env.OMP_NUM_THREADS": raw},
        )
        return
    share, source = _share(f)
    if threads == share:
        return
    over = threads > share
    yield Hit(
        message=(f"OMP_NUM_THREADS={threads} but each rank has {share} CPU(s) ({source}): "
                 + ("threads oversubscribe the cores" if over else f"{share - threads} CPU(s) per rank sit idle")),
        fix=_threads_fix(share, source),
        evidence={"env.OMP_NUM_THREADS": raw, "cpus_per_rank": share},
        severity=None if over else "advice",
        env={"OMP_NUM_THREADS": str(share)},
    )


# A line that says to avoid the problem is not a report of it (a comment in pasted code).
_AVOIDED = ("avoid", "prevent", "避免", "防止")


def _told_oversubscribed(f: FactView):
    """A pasted thread pool's failure to start threads, or the user's own words for threads that
    outnumber the CPUs, as the finding; None when the paste holds neither."""
    told = [s for s in catalogued(f, "cpu-oversubscribed")
            if not any(w in str(s.get("text", "")).lower() for w in _AVOIDED)]
    if not told:
        return None
    r_full = next((s for s in told if s.get("id") == _R_CONNECTIONS), None)
    if r_full is not None:
        return _r_connections_full(f, r_full)
    s = next((t for t in told if t.get("family") != "prose"), told[0])
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    what = ("a thread pool could not start its threads" if s.get("family") != "prose"
            else "the paste says the job runs far more threads than CPUs")
    return Hit(message=f"{what} ({said}): each process (rank, DataLoader worker, compile worker) starts a thread "
                       "pool sized to the whole machine unless told otherwise, and together they oversubscribe the CPUs",
               fix="export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1   # before the job starts: every "
                   "process and DataLoader worker inherits it; raise it to CPUs / processes where a process computes "
                   "on the CPU",
               evidence=ticket_evidence(s))


_R_CONNECTIONS = "r_parallel:all-connections-in-use"
_R_FIX = ("echo \"allocated: ${SLURM_CPUS_PER_TASK:-${SLURM_CPUS_ON_NODE:-?}}  node: $(nproc --all)\"   # what the job may "
          "use against what detectCores() counts\n"
          "Rscript -e 'parallelly::availableCores()'   # the count to size workers by: it reads Slurm, PBS, SGE and LSF "
          "allocations and the CPU affinity (install.packages(\"parallelly\"))\n"
          "# in the R code: cl <- parallel::makeCluster(parallelly::availableCores()) instead of detectCores(); "
          "R 4.4 and later also take --max-connections=N for more than 125 workers")


def _r_connections_full(f: FactView, s: dict) -> Hit:
    """R's "all connections are in use": its connection table is full. Oversubscription only where
    the paste names detectCores() as what sized the workers (R's help: it counts the machine, not the
    allocation); otherwise the line is quoted at info, since unclosed file connections say the same."""
    named = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "prose:r-detectcores-said"), None)
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    if named is None:
        return Hit(message=f"R's table of connections is full ({said}): 128 slots before R 4.4, so a socket cluster of "
                           "about 125 workers or more (one sized to a large node's cores) cannot start; connections "
                           "opened and never closed fill it too",
                   fix=_R_FIX, evidence=ticket_evidence(s), severity="info")
    return Hit(message=f"R's table of connections is full ({said}) and the paste names detectCores() (line "
                       f"{named.get('line')}): detectCores() counts the node's cores, not the job's allocation, so the "
                       "workers started outnumber the CPUs the job may use (and, past about 125, R's 128 connections)",
               fix=_R_FIX, evidence=ticket_evidence(s))


def _allowed(f: FactView):
    cpus = f["affinity.allowed_cpus"]
    return set(cpus) if isinstance(cpus, list) else set()


@rule("THR003", "cpu-oversubscribed", "warning", "more threads than CPUs across the ranks of this node", impact=8,
      also={"info": "R's connection table full and nothing in the paste names detectCores(): unclosed connections say the same"})
def cpu_oversubscribed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        More OpenMP threads than the CPUs this process may run on: OMP_NUM_THREADS alone for a
        single rank or ranks bound one by one, OMP_NUM_THREADS times the ranks where they share
        one CPU set (no per-rank binding). In a pasted log, a thread pool that could not start a
        thread ("OMP: Error #34: System unable to allocate necessary resources for OMP thread",
        "libgomp: Thread creation failed: Resource temporarily unavailable", "OpenBLAS
        blas_thread_init: pthread_create failed for thread ..."), or the user saying the number of
        threads explodes (or, in Chinese, 线程...超订阅). R's "all connections are in use" (its
        128-slot connection table full) where the paste names parallel::detectCores() as the count
        of workers: a warning (detectCores() counts the node, not the allocation); without that, info.

    Why it matters:
        When ranks share a CPU set, their thread teams add up: four ranks of 16 threads on 16 CPUs
        run 64 threads on 16 cores, and every OpenMP barrier waits on a descheduled thread.

    How to fix:
        Size the threads to the share (export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK) and bind each
        rank to its own cores: srun --cpu-bind=cores.

    References:
        - 004_3c12714629749d50.txt ("export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK and use srun --cpu-bind=cores")
        - https://github.com/llvm/llvm-project/blob/main/openmp/runtime/src/i18n/en_US.txt (NoResourcesForWorkerThread)
        - https://github.com/rasmushaugaard/surfemb/issues/33 (every DataLoader worker's thread pool; OMP_NUM_THREADS=1)
        - https://stat.ethz.ch/R-manual/R-devel/library/parallel/html/detectCores.html (not the number of allowed cores)
        - https://parallelly.futureverse.org/reference/availableCores.html (the scheduler's allocation)
    """
    told = _told_oversubscribed(f)
    if told is not None:
        yield told
        return
    threads = parse_threads(f["env.vars"].get("OMP_NUM_THREADS"))
    ranks = local_ranks(f)
    allowed = f["affinity.allowed_count"]
    if threads is None or threads < 1:
        return
    # With per-rank binding each rank's set is its own; sharing shows as a set larger than a share.
    cpt = f.get("scheduler.cpus_per_task")
    shared = ranks > 1 and (not isinstance(cpt, int) or allowed > cpt)
    team = threads * (ranks if shared else 1)
    if team > allowed:
        share, source = _share(f)
        who = f"{ranks} ranks × {threads} threads = {team} threads" if shared else f"{threads} threads"
        yield Hit(message=f"{who} on {allowed} allowed CPUs",
                  fix=_threads_fix(share, source) + "   # and launch ranks with: srun --cpu-bind=cores",
                  evidence={"env.OMP_NUM_THREADS": threads, "local_ranks": ranks, "affinity.allowed_count": allowed},
                  env={"OMP_NUM_THREADS": str(share)})


@rule("THR004", "omp-binding-unset", "advice", "OpenMP threads not bound to cores", impact=4)
def omp_binding_unset(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A multi-threaded process in a job (OMP_NUM_THREADS above 1) with neither OMP_PROC_BIND nor
        OMP_PLACES set and no CPU binding from srun.

    Why it matters:
        Unbound threads migrate between cores and sockets: caches go cold, memory allocated on one
        NUMA node is read from another, and run times vary from run to run.

    How to fix:
        export OMP_PLACES=cores OMP_PROC_BIND=close, and launch with srun --cpu-bind=cores.

    References:
        - 000_6e25303b50457a54.txt (section 3.3: export OMP_PLACES=cores to prevent thread migration)
        - 004_3c12714629749d50.txt (srun --cpu-bind=cores)
    """
    env = f["env.vars"]
    threads = parse_threads(env.get("OMP_NUM_THREADS"))
    if threads is None or not _binding_missing(f, threads):
        return
    bind = (f.get("scheduler.cpu_bind") or "").lower()
    yield Hit(message=f"{threads} OpenMP threads with no binding: threads migrate between cores and NUMA nodes",
              fix="export OMP_PLACES=cores OMP_PROC_BIND=close   # and srun --cpu-bind=cores",
              evidence={"env.OMP_PROC_BIND": None, "env.OMP_PLACES": None, "scheduler.cpu_bind": bind or None},
              env=dict(BINDING))


@rule("THR005", "stale-affinity-vars", "warning", "affinity variables that contradict the CPUs given", impact=7)
def stale_affinity_vars(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        GOMP_CPU_AFFINITY or KMP_AFFINITY set (often exported by a scheduler prologue or a module)
        naming CPUs outside the set this process may use, or any explicit KMP/GOMP proclist while
        the job's CPUs come from a cgroup.

    Why it matters:
        The OpenMP runtime pins its threads to CPUs the job does not own: threads pile onto the
        few allowed CPUs in the list or fail to bind, and a threaded program "gets upset", as the
        ARC4 guide puts it.

    How to fix:
        unset GOMP_CPU_AFFINITY KMP_AFFINITY in the job script, and bind with OMP_PLACES /
        srun --cpu-bind instead.

    References:
        - 002_4b90f9ad31dff33f.txt (unset GOMP_CPU_AFFINITY KMP_AFFINITY)
    """
    from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist

    env = f["env.vars"]
    allowed = _allowed(f)
    for name in ("GOMP_CPU_AFFINITY", "KMP_AFFINITY"):
        value = env.get(name)
        if not value:
            continue
        listed = set()
        m = re.search(r"proclist=\[([0-9,\-\s:]+)\]", value) if name == "KMP_AFFINITY" else None
        text = m.group(1) if m else (value if name == "GOMP_CPU_AFFINITY" else "")
        try:
            for part in re.split(r"[\s,]+", text.strip()):
                if part:
                    listed.update(parse_cpulist(part.split(":")[0]))
        except ListFormatError:
            listed = set()
        outside = sorted(listed - allowed) if allowed else []
        if outside:
            yield Hit(message=f"{name}={value} names CPUs this process may not use ({len(outside)} of {len(listed)})",
                      fix=f"unset {name}   # bind with OMP_PLACES=cores / srun --cpu-bind=cores instead",
                      evidence={f"env.{name}": value, "outside_allowed": outside[:16]})
