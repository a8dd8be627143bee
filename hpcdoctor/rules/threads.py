"""Thread counts against the CPUs the job was given."""

from __future__ import annotations

from hpcdoctor.engine import Hit, rule
from hpcdoctor.rules._common import local_ranks, parse_threads


def _share(f):
    """CPUs each rank on this node may use: Slurm's cpus-per-task, else the allowed set split
    between local ranks. Returns (cpus, where it comes from)."""
    cpt = f.get("scheduler.cpus_per_task")
    if isinstance(cpt, int) and cpt > 0:
        return cpt, "SLURM_CPUS_PER_TASK"
    allowed = f["affinity.allowed_count"]
    ranks = local_ranks(f)
    if ranks > 1:
        return max(1, allowed // ranks), f"{allowed} allowed CPUs / {ranks} local ranks"
    return allowed, "the CPUs this process may run on"


@rule("THR001", "omp-threads-unset", "advice", "OMP_NUM_THREADS unset inside a job", impact=7)
def omp_threads_unset(f):
    """
    What it detects:
        A process inside a batch job, or one of several ranks launched on a node, with
        OMP_NUM_THREADS unset.

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
    env = f["env.vars"]
    in_job = f.get("scheduler.in_job")
    ranks = local_ranks(f)
    if env.get("OMP_NUM_THREADS") is not None or not (in_job or ranks > 1):
        return
    share, source = _share(f)
    value = "$SLURM_CPUS_PER_TASK" if source == "SLURM_CPUS_PER_TASK" else str(share)
    yield Hit(
        message=(f"OMP_NUM_THREADS is unset; each of the {ranks} rank(s) on this node should use "
                 f"{share} thread(s) ({source})"),
        fix=f"export OMP_NUM_THREADS={value}",
        evidence={"env.OMP_NUM_THREADS": None, "cpus_per_rank": share, "local_ranks": ranks},
        severity="warning" if ranks > 1 else None,
        env={"OMP_NUM_THREADS": str(share)},
    )


@rule("THR002", "omp-threads-mismatch", "warning", "OMP_NUM_THREADS does not match the CPUs given",
      impact=7)
def omp_threads_mismatch(f):
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
    value = "$SLURM_CPUS_PER_TASK" if source == "SLURM_CPUS_PER_TASK" else str(share)
    over = threads > share
    yield Hit(
        message=(f"OMP_NUM_THREADS={threads} but each rank has {share} CPU(s) ({source}): "
                 + ("threads oversubscribe the cores" if over else f"{share - threads} CPU(s) per rank sit idle")),
        fix=f"export OMP_NUM_THREADS={value}",
        evidence={"env.OMP_NUM_THREADS": raw, "cpus_per_rank": share},
        severity=None if over else "advice",
        env={"OMP_NUM_THREADS": str(share)},
    )
