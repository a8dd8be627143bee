"""Where an MPI launch puts its ranks, read from a pasted log (knowledge/messages/openmpi.toml,
mpich.toml, slurm.toml, prose.toml): more ranks than the slots the launch was given, spawned
processes the allocation has no room for, and a binding of more ranks than CPUs."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, ticket_evidence, told_evidence, told_text


@rule("ENV019", "mpi-not-enough-slots", "error", "mpirun asked for more ranks than the slots it was given", impact=8)
def mpi_not_enough_slots(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Open MPI's "There are not enough slots available in the system to satisfy
        the N slots that were requested by the application" (Open MPI 4's rmaps and the PRRTE of
        Open MPI 5, help-orte-rmaps-base.txt / help-prte-rmaps-base.txt [alloc-error]); and, for a
        launch mapped by ppr (--map-by ppr:N:node, N processes per node, often one per GPU), "Your
        job has requested more processes than the ppr for this topology can support" (-np above N
        times the nodes; help-orte-rmaps-ppr.txt / help-prte-rmaps-ppr.txt [ppr-too-many-procs]).

    Why it matters:
        mpirun starts no rank: -np asks for more processes than the slots it counts. A slot is one
        per core on a host without a scheduler (hardware threads are not counted), the "slots=N" of a
        hostfile, or one per task Slurm, PBS or LSF allocated (sbatch --ntasks), not per core of the
        node. A CI runner or laptop with two cores refuses -np 4; a Slurm job with --ntasks=1 and
        --cpus-per-task=32 refuses -np 32.

    How to fix:
        Ask for no more ranks than slots (mpirun --display-allocation shows them), ask the scheduler
        for more tasks, or count hardware threads with --use-hwthread-cpus. --oversubscribe runs more
        ranks than cores, each slower: the answer for tests on a small machine, not for a job.

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/rmaps/base/help-orte-rmaps-base.txt
        - https://github.com/openpmix/prrte/blob/v3.0.13/src/mca/rmaps/base/help-prte-rmaps-base.txt
        - https://docs.open-mpi.org/en/v5.0.x/launching-apps/scheduling.html
        - https://github.com/inducer/grudge/pull/227 (two ranks on a CI runner; --oversubscribe)
    """
    told = catalogued(f, "mpi-not-enough-slots")
    if not told or first_symptom(f, _SPAWN_SAID):
        return   # the slots MPI_Comm_spawn asked for: mpi-spawn-exceeds-allocation answers it
    s = told[0]
    if s.get("id") == _PPR:
        yield Hit(message=f"Open MPI refused to start: -np asks for more ranks than --map-by ppr places on the nodes "
                          f"(line {s['line']}: N per node times the nodes, often one rank per GPU): more ranks, or GPUs, "
                          "than the allocation has",
                  fix="mpirun --display-allocation -np 1 hostname   # the nodes the launch has\n"
                      "# -np no larger than N (of ppr:N:node) times those nodes: ask for as many ranks as GPUs the nodes "
                      "have, or for more nodes",
                  evidence=ticket_evidence(s))
        return
    if f.get("scheduler.kind") == "slurm":
        fix = ("mpirun --display-allocation -np 1 hostname   # the slots Open MPI counts: one per Slurm task\n"
               "# then ask for as many tasks as ranks (sbatch --ntasks=N, or --ntasks-per-node), or run fewer ranks")
    else:
        fix = ("mpirun --display-allocation -np 1 hostname   # the slots Open MPI counts on each host\n"
               "# then -np no larger than that, \"host slots=N\" in a hostfile, or --use-hwthread-cpus; --oversubscribe "
               "only for tests on a small machine (ranks share cores)")
    yield Hit(message=f"Open MPI refused to start: the launch asks for more ranks than the slots it has (line {s['line']}); "
                      "a slot is a core without a scheduler, a hostfile's slots=N, or one task of the allocation",
              fix=fix, evidence=ticket_evidence(s))


_SPAWN_SAID = "prose:mpi-spawn-said"
_PPR = "openmpi:orte-rmaps-ppr:ppr-too-many-procs"
_FILLED = "openmpi:orte-rmaps-base:all-available-resources-used"
_SPAWN_FIX = ("# an allocation must hold the spawned processes too: ask for the total and start only the parents\n"
              "sbatch --ntasks=11 job.sh   # e.g. 1 parent + 10 spawned; in the script: mpirun -np 1 ./parent "
              "(Open MPI counts the allocation's 11 slots, 10 left for MPI_Comm_spawn)\n"
              "# MPICH's mpiexec under Slurm starts the spawned processes with srun, which waits while the running "
              "step holds every CPU: leave CPUs free (fewer parents than --ntasks)\n"
              "mpirun -np 1 --oversubscribe ./parent   # tests on a small machine only (Open MPI 5: --map-by :oversubscribe)")


@rule("NET021", "mpi-spawn-exceeds-allocation", "error",
      "MPI_Comm_spawn asks for processes the allocation has no slots or CPUs left for", impact=6,
      also={"warning": "srun waits to start the spawned processes: the running step holds the allocation's CPUs",
            "info": "spawned processes time out only under sbatch: the usual cause is no room in the allocation"})
def mpi_spawn_exceeds_allocation(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log of a program that spawns MPI processes (MPI_Comm_spawn, mpi4py's
        Comm.Spawn, MPI_ERR_SPAWN, MPI's spawn tests): Open MPI's "There are not enough slots
        available in the system to satisfy the N slots" or "All nodes which are allocated for this
        job are already filled." (an error); srun's "step creation temporarily disabled, retrying
        (Requested nodes are busy)" (a warning: the new processes wait); MPICH's "APPLICATION TIMED
        OUT" under sbatch (info: the usual cause, per MPICH's maintainers).

    Why it matters:
        Spawned processes need slots or CPUs of their own in the job's allocation: Open MPI
        counts the allocation's slots and refuses when the parents hold them all; MPICH's Hydra
        launches them with srun, whose new step waits until the running step frees CPUs, so the
        job hangs until its timeout. Outside a scheduler the slots are the cores (or a hostfile's
        slots=N), so the same program runs on a workstation and fails in a batch job.

    How to fix:
        Ask the scheduler for as many tasks as parents plus spawned processes and start only the
        parents (mpirun -np 1 in an allocation of 11 for ten workers); on a test machine,
        oversubscribe.

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/rmaps/base/help-orte-rmaps-base.txt ([alloc-error], [orte-rmaps-base:all-available-resources-used])
        - https://github.com/SchedMD/slurm/blob/master/src/srun/launch.c (step creation temporarily disabled)
        - https://github.com/pmodels/mpich/issues/6804
        - https://github.com/open-mpi/ompi/issues/6130 (spawn and oversubscribe)
    """
    spawn = first_symptom(f, _SPAWN_SAID)
    if spawn is None:
        return
    slots = catalogued(f, "mpi-not-enough-slots") + [s for s in f.get("ticket.symptoms") or [] if s.get("id") == _FILLED]
    if slots:
        s = slots[0]
        yield Hit(message=f"the processes MPI_Comm_spawn asked for found no free slot (line {s.get('line')}: \"{told_text(s)}\"): "
                          "the parents hold every slot of the allocation (or of this machine's cores)",
                  fix=_SPAWN_FIX, evidence=told_evidence(s))
        return
    waiting = first_symptom(f, "slurm:srun-step-creation-disabled")
    if waiting:
        yield Hit(message=f"srun waits to start the spawned processes (line {waiting.get('line')}: \"{told_text(waiting)}\"): "
                          "the running step holds the allocation's CPUs, so the spawn hangs",
                  fix=_SPAWN_FIX, evidence=told_evidence(waiting), severity="warning")
        return
    timed_out = first_symptom(f, "mpich:application-timed-out")
    if timed_out and (first_symptom(f, "prose:slurm-sbatch") or f.get("scheduler.kind") == "slurm"):
        yield Hit(message=f"the spawning job timed out under sbatch (line {timed_out.get('line')}: \"{told_text(timed_out)}\"); "
                          "the usual cause (MPICH's maintainers): the allocation leaves no room for the spawned processes, "
                          "so srun never starts them; `mpiexec -n 1` in an allocation of more tasks confirms it",
                  fix=_SPAWN_FIX, evidence=told_evidence(timed_out), severity="info")




@rule("THR008", "mpi-binding-overload", "error", "mpirun would bind more ranks than CPUs to a core, socket or node", impact=7)
def mpi_binding_overload(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Open MPI's "A request was made to bind to that would result in binding more
        processes than cpus on a resource" with its "#processes: N  #cpus: M" (Open MPI 4's rmaps
        and rtc, PRRTE's rtc), or PRRTE's "A request was made to bind that would require binding
        processes to more cpus than are available in your allocation" (Open MPI 5).

    Why it matters:
        mpirun binds each rank to CPUs by default and counts cores, not hardware threads, as the
        CPUs ("PRRTE uses cores as a means of counting the number of CPUs", prterun's help for
        --bind-to, which --use-hwthread-cpus or :HWTCPUS changes). More ranks than cores on
        a node (-np 5 on a four-core laptop with hyper-threading), or than the CPUs a scheduler's
        cgroup leaves the job, is refused rather than silently sharing cores. A count of zero CPUs is
        not this: the launcher found no CPU of that kind in the allowed set, a mapping or cpuset
        problem, and the rule stays silent.

    How to fix:
        Run no more ranks per node than cores (lscpu shows cores and threads), count hardware
        threads with --use-hwthread-cpus, ask the scheduler for more CPUs, or let ranks share cores
        with --bind-to none (Open MPI's "overload-allowed" qualifier does the same for one binding).

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/rmaps/base/help-orte-rmaps-base.txt
        - https://github.com/openpmix/prrte/blob/v3.0.13/src/docs/show-help-files/help-prte-rmaps-base.txt
        - https://github.com/openpmix/prrte/blob/v3.0.13/src/docs/show-help-files/help-prterun.txt
        - https://github.com/openai/baselines/issues/325 (-np 5 on a four-core, eight-thread machine)
    """
    told = catalogued(f, "mpi-binding-overload")
    if not told:
        return
    s = told[0]
    counts = next((c for c in f.get("ticket.symptoms") or [] if c.get("id") == "openmpi:rmaps:binding-overload-counts"), None)
    said = ""
    if counts is not None:
        processes, cpus = int(counts["processes"]), int(counts["cpus"])
        if cpus == 0 or processes <= cpus:
            return  # no CPU of that kind in the allowed set: a mapping or cpuset problem, not too many ranks
        said = f": {processes} processes for {cpus} CPU(s)"
    yield Hit(message=f"mpirun refused to bind the ranks (line {s['line']}){said}: more ranks than the cores it counts "
                      "on a node or in the allocation (hardware threads are not counted by default)",
              fix="lscpu | grep -E '^(Socket|Core|Thread)'   # the cores per node Open MPI binds ranks to\n"
                  "# then no more ranks per node than cores, mpirun --use-hwthread-cpus to count hardware threads, "
                  "or --bind-to none to let ranks share cores (slower)",
              evidence=ticket_evidence(s))
