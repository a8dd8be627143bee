"""A batch system ending a job, not a fault of its GPU or its program: Slurm's time limit,
preemption and node failure (slurm_job_end.toml, slurm_reasons.toml), and the time-limit kills and
node failures of PBS (TORQUE, OpenPBS), LSF, Grid Engine, Flux and HTCondor (pbs_job_end.toml,
pbs_node_down.toml, lsf.toml, sge.toml, flux.toml, htcondor.toml), each read in a paste with the fix
of the scheduler that printed it."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_evidence, told_text


def _job_of(told) -> str:
    return next((str(s["job"]).split(".")[0] for s in told if s.get("job")), "")


def _sacct(job: str, fields: str, state: str) -> str:
    """sacct for the job the paste names, else the user's jobs of the last week that ended that way
    (sacct(1): -S accepts now-<count>days)."""
    if job:
        return f"sacct -j {job} -o {fields}"
    return f"sacct -u $USER -S now-7days -s {state} -o {fields}"


# The other batch systems' words for the same end (pbs_job_end.toml, lsf.toml, sge.toml): what each
# shows of the time used against the limit, and where the job asks for more (qsub(1B) -l walltime,
# bsub -W, qsub -l h_rt; the queue's ceiling in qstat -Qf resources_max.walltime, bqueues -l RUNLIMIT,
# qconf -sq h_rt).
_OTHER_SCHEDULERS = {
    "pbs_job_end": ("PBS", "qstat -x -f -u $USER | grep -E 'Job Id|resources_(used|List)\\.walltime'   # the time used against "
                           "the limit (TORQUE: finished jobs stay only for keep_completed; tracejob then)\n"
                           "qstat -Qf | grep -E 'Queue:|resources_(max|default)\\.walltime'   # the most a job may ask for, and "
                           "what it gets without asking\n"
                           "#PBS -l walltime=48:00:00   # in the job script (and in every job a workflow submits), up to resources_max"),
    "lsf": ("LSF", "bjobs -l -d -u $USER | grep -E 'Job <|RUNLIMIT|TERM_'   # the run limit of the jobs that ended lately\n"
                   "bqueues -l | grep -E '^QUEUE|RUNLIMIT' -A1   # each queue's limit\n"
                   "#BSUB -W 48:00   # in the job script, up to the queue's RUNLIMIT"),
    "sge": ("Grid Engine", "qacct -o $USER -d 7 -j | grep -E '^(jobnumber|ru_wallclock|failed|category)'   # the time used and the "
                           "h_rt each job had\n"
                           "qconf -sql | xargs -n1 qconf -sq | grep -E '^(qname|h_rt)'   # each queue's limit\n"
                           "#$ -l h_rt=48:00:00   # in the job script, up to the queue's h_rt"),
    # Moab/Maui over TORQUE (moab.toml): checkjob(1) shows the job's WallTime against its limit.
    "moab": ("Moab", "checkjob -v JOBID | grep -iE 'WallTime|Limit'   # the time it ran against its wallclock limit\n"
                     "qstat -Qf | grep -E 'Queue:|resources_(max|default)\\.walltime'   # each queue's limit, and what a job "
                     "gets without asking\n"
                     "#PBS -l walltime=48:00:00   # in the job script (and in every job a workflow submits), up to resources_max"),
    # HTCondor (htcondor.toml: hold codes 46/47): condor_q -hold shows the reason; the limits are submit commands.
    "htcondor": ("HTCondor", "condor_q -hold -af ClusterId ProcId HoldReasonCode HoldReason   # the held jobs and why\n"
                             "condor_q -l JOBID | grep -iE 'AllowedJobDuration|AllowedExecuteDuration'   # the limit it had\n"
                             "allowed_execute_duration = 172800   # in the submit file: seconds, longer where the pool allows it\n"
                             "condor_qedit JOBID AllowedExecuteDuration 172800 && condor_release JOBID   # or raise it and release the held job"),
    # flux-jobs(1): --filter takes a result (timeout); {duration} is the -t asked for, {runtime} the time run.
    # flux-queue(1) list: each queue's default and maximum duration.
    "flux": ("Flux", "flux jobs --filter=timeout --format='{id} {name} {duration} {runtime} {result}'   # the jobs that ran "
                     "out of time: the duration asked for against the time run\n"
                     "flux queue list   # each queue's default duration and its limit\n"
                     "flux batch -t 8h job.sh   # ask for more (-t, or \"#flux: -t 8h\" in the script), up to the queue's limit"),
}
# qstat -xf's "Exit_status = -29" (pbs_exit.toml: OpenPBS's JOB_EXEC_KILL_WALLTIME) is the same PBS end.
_OTHER_SCHEDULERS["pbs_exit"] = _OTHER_SCHEDULERS["pbs_job_end"]
_CHECKPOINT = "# longer than the queue allows: checkpoint, then resubmit with a dependency on this job"


@rule("ENV021", "slurm-time-limit", "error", "Slurm ended the job at its time limit", impact=7)
def slurm_time_limit(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, slurmstepd's "*** JOB n ON host CANCELLED AT t DUE TO TIME LIMIT ***" (and
        the STEP form, and Slurm 14's "... DUE TO TIME LIMIT on host"), salloc's "Job n has exceeded
        its time limit and its allocation has been revoked", a sacct row in state TIMEOUT, or
        scontrol's Reason=TimeLimit. The same end under the other batch systems: a PBS MOM's
        "=>> PBS: job killed: walltime N exceeded limit M" (TORQUE, OpenPBS, PBS Pro) and their
        mails' "Job exceeded its walltime limit", LSF's "TERM_RUNLIMIT: job killed after reaching
        LSF run time limit", Grid Engine's execd "job n.1 exceeded hard wallclock time", Moab's (and
        Maui's) cancel "MOAB_INFO:  job exceeded wallclock limit", HTCondor's hold "The job exceeded
        allowed job duration of T" (or execute duration; HoldReasonCode 46, 47), Flux's
        timeout exception "job.exception type=timeout severity=0 resource allocation expired" (as flux
        run prints it, or the job's eventlog records it).

    Why it matters:
        The program did not fail: the scheduler stopped it when the time the job asked for
        (--time, -l walltime, bsub -W, -l h_rt), or the queue's default when it asked for none,
        ran out. Work since the last checkpoint is lost, and a rerun with the same request ends
        the same way. Jobs that a workflow tool submits (sub-jobs) often carry no time request and
        get the default, however long the parent asked for.

    How to fix:
        The scheduler's accounting shows the time used against the limit; ask for more in the job
        script up to the partition's or queue's maximum; beyond it, checkpoint and resubmit.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/req.c
        - https://slurm.schedmd.com/sbatch.html#OPT_time
        - https://slurm.schedmd.com/sacct.html
        - https://github.com/marbl/canu/issues/1052 (sub-jobs without --time got the one-hour default)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/mom_main.c (job_over_limit)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/resmom/linux/mom_mach.c
        - https://www.ibm.com/docs/SSWRJV_10.1.0/lsf_admin/termination_reasons_lsf.html (TERM_RUNLIMIT)
        - https://github.com/gridengine/gridengine/blob/f47b0e0a22483847008777ef18a78c29b7001f66/source/daemons/execd/msg_execd.h
        - https://github.com/flux-framework/flux-core/blob/4a5e79f56b850a58cbbfc4b5af5a5b1fcd04c049/src/modules/job-exec/job-exec.c (the timeout exception)
    """
    told = catalogued(f, "slurm-time-limit")
    if not told:
        return
    s = told[0]
    other = _OTHER_SCHEDULERS.get(str(s.get("family")))
    if other:
        name, fix = other
        yield Hit(message=f"{name} stopped the job when its time limit ran out (line {s['line']}: \"{told_text(s)}\"): "
                          "not a failure of the program; the limit is the job's own walltime request, or the queue's "
                          "default when the job (or a sub-job a workflow submitted) asked for none",
                  fix=fix + "\n" + _CHECKPOINT, evidence=ticket_evidence(s))
        return
    job = _job_of(told)
    yield Hit(message=f"Slurm stopped the job when its time limit ran out (line {s['line']}: \"{told_text(s)}\"): "
                      "not a failure of the program; the limit is the job's --time, or the partition's DefaultTime "
                      "when the job (or a sub-job a workflow submitted) asked for none",
              fix=(_sacct(job, "JobID,State,Elapsed,Timelimit", "TIMEOUT") + "   # the time used against the limit it had\n"
                   "scontrol show partition   # MaxTime: the most a job may ask for; DefaultTime: what it gets without --time\n"
                   "#SBATCH --time=1-00:00:00   # in the job script (and in every job a workflow submits), up to MaxTime\n"
                   "# longer than MaxTime: checkpoint, then resubmit with sbatch --dependency=afterany:<jobid> job.sh"),
              evidence=ticket_evidence(s))


@rule("ENV022", "slurm-job-preempted", "warning", "Slurm preempted the job for one of higher priority", impact=6)
def slurm_job_preempted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, slurmstepd's "*** JOB n ON host CANCELLED AT t DUE TO PREEMPTION ***", or
        the job's record in state PREEMPTED (a sacct row, scontrol's JobState=, seff's State:;
        slurm_job_state.toml). LSF's termination reason "TERM_PREEMPT: job killed after preemption"
        is the same end, answered with LSF's commands.

    Why it matters:
        The job ran in a partition or QOS whose jobs may be cancelled (or requeued) to make room for
        jobs of higher priority (PreemptMode). Nothing is wrong with the job or the node; it will end
        the same way whenever the higher-priority work arrives.

    How to fix:
        Run where jobs are not preempted (another partition or QOS), or accept it: checkpoint and
        submit with --requeue so that Slurm restarts the job.

    References:
        - https://slurm.schedmd.com/preempt.html
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/req.c
        - https://github.com/SystemsGenetics/GEMmaker/pull/242 (a preempted job; retries)
        - https://www.ibm.com/docs/SSWRJV_10.1.0/lsf_admin/termination_reasons_lsf.html (TERM_PREEMPT)
    """
    told = catalogued(f, "slurm-job-preempted")
    if not told:
        return
    s = told[0]
    if s.get("family") == "lsf":
        # LSF's own termination reason (lsf.toml): its commands, its queue's preemption settings.
        yield Hit(message=f"LSF preempted the job for one of higher priority (line {s['line']}: \"{told_text(s)}\"): "
                          "neither the program nor the node failed",
                  fix=("bjobs -l -d -u $USER | grep -E 'Job <|Queue <|TERM_PREEMPT'   # the jobs preempted lately and their queue\n"
                       "bqueues -l | grep -E '^QUEUE|PREEMPTION'   # which queues preempt which: choose one whose jobs are not preempted\n"
                       "#BSUB -r   # or stay, checkpoint, and let LSF rerun the job after a preemption"),
                  evidence=ticket_evidence(s))
        return
    job = _job_of(told)
    yield Hit(message=f"Slurm preempted the job for one of higher priority (line {s['line']}: \"{told_text(s)}\"): "
                      "neither the program nor the node failed",
              fix=(_sacct(job, "JobID,State,Partition,QOS,Elapsed", "PREEMPTED") + "   # where it ran\n"
                   "scontrol show partition   # PreemptMode and PriorityTier of each partition: choose one whose jobs are not preempted\n"
                   "#SBATCH --requeue   # or stay, checkpoint, and let Slurm restart the job after a preemption"),
              evidence=ticket_evidence(s))


# The other batch systems' words for a node of the job lost (pbs_node_down.toml, pbs_exit.toml -14/-20,
# lsf.toml, flux.toml, htcondor.toml, sge.toml): where each shows the job's hosts and the host's state,
# how a job asks to be run again after such a loss, and how it keeps off the host. NODE is the host the
# paste names, where it names one.
_NODE_FAIL_FIXES = {
    # qstat -x -f (OpenPBS; TORQUE keeps finished jobs only for keep_completed), tracejob, pbsnodes(8B)
    "pbs": ("PBS", "tracejob JOBID   # the server's and MOMs' lines for the job: which execution node went down, and when\n"
                   "pbsnodes {node}   # its state (down, offline) and the comment PBS recorded\n"
                   "pbsnodes -l   # every node PBS holds down or offline\n"
                   "#PBS -r y   # in the job script: rerunnable, so PBS requeues it when a node is lost (and tell the administrators)"),
    "lsf": ("LSF", "bjobs -l -d JOBID   # the job's execution hosts and its termination reason\n"
                   "bhosts -l {node}   # the host's status (unavail: host down; unreach: sbatchd down)\n"
                   "bsub -R \"select[hname!='{node}']\" < job.sh   # resubmit away from it (#BSUB -r makes a job rerunnable), and tell the administrators"),
    "flux": ("Flux", "flux jobs -a -f failed -o '{{id.f58}} {{exception.type}} {{exception.note}}'   # the jobs a node failure ended\n"
                     "flux resource drain   # the nodes Flux holds drained, with the reason\n"
                     "flux batch --requires=-host:{node} job.sh   # resubmit away from it, and tell the administrators"),
    "htcondor": ("HTCondor", "condor_history -l JOBID | grep -iE 'LastRemoteHost|NumJobReconnects|JobDisconnectedDate|LastVacateTime'   # where it ran, and how often the shadow lost it\n"
                             "condor_status -l {node} | grep -iE '^(Name|State|Activity|LastHeardFrom)'   # whether the execute slot is back\n"
                             "condor_submit -append 'requirements = Machine != \"{machine}\"' job.sub   # resubmit away from that machine (HTCondor already reruns this job), and tell the administrators"),
    "sge": ("Grid Engine", "qacct -j JOBID | grep -E '^(hostname|failed|exit_status|end_time)'   # where it ran and how it ended\n"
                           "qhost -h {node}   # the host's load: \"-\" throughout means its execd does not answer\n"
                           "qstat -f -explain a | grep -B1 -E 'au|alarm'   # the queue instances in unknown or alarm state\n"
                           "qsub -r y -l h='!{node}' job.sh   # resubmit rerunnable, away from it, and tell the administrators"),
}
_FAMILY_SCHEDULER = {"pbs_node_down": "pbs", "pbs_exit": "pbs", "lsf": "lsf", "flux": "flux", "htcondor": "htcondor",
                     "sge": "sge"}
# The words that are a host's loss or an administrator's act alike (sge.toml: the qmaster's "Pushed"
# rescheduling is both reschedule_unknown and qmod -rj): read at info.
_EITHER = frozenset(("sge:qmaster-pushed-rescheduling", "sge:qmaster-reaping-not-restartable"))


@rule("SYS007", "slurm-node-failure", "error", "the batch system ended the job because a node of its allocation failed",
      impact=7, also={"info": "only Grid Engine's \"Pushed rescheduling\" or \"Reaping not restartable\", which an administrator's qmod -rj prints too"})
def slurm_node_failure(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, slurmstepd's "*** JOB n ON host CANCELLED AT t DUE TO NODE FAILURE, SEE
        SLURMCTLD LOG FOR DETAILS ***" (Slurm 14: "DUE TO NODE host FAILURE"), a sacct row in state
        NODE_FAIL, or scontrol's Reason=NodeDown. The same end under the other batch systems:
        OpenPBS's server "Job requeued, execution node h down" and "Job deleted, execution node h
        down", its MOMs' "node EOF n (h)", "lost communication with h for > n secs, killing job now"
        and "lost connection to MS on h", qstat -xf's Exit_status -14 (a sister MOM lost) and -20
        (the mother superior's node lost); TORQUE's "=>> PBS: job killed: node n (h) requested job
        terminate, 'EOF' (code 1099) - received SISTER_EOF"; LSF's TERM_REMOVE_HUNG_JOB (the host
        unreachable past REMOVE_HUNG_JOBS_FOR) and TERM_SLURM; Flux's "node failure on h (rank n)"
        (before v0.63 "lost contact with job shell on broker h (rank n)"); HTCondor's event 024 "Job
        reconnection failed"; Grid Engine's "Pushed rescheduling of job n on host h" and "Reaping not
        restartable job n" (at info: qmod -rj prints them too). The neighbours that say no host was lost (a job kept running, one that
        never started, an eviction, a disconnect that may reconnect, a program that crashed on one
        node) are read and stay silent.

    Why it matters:
        A node of the allocation stopped answering the batch system (it rebooted, lost its network,
        or its daemon died), and the job ended on every node, or was requeued to start again. The
        program is not at fault; the same node may fail the next job too.

    How to fix:
        The batch system's records name the host and the state it holds it in. Resubmit away from
        that node (or ask for the job to be rerun after such a loss), and tell the administrators.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/req.c
        - https://slurm.schedmd.com/sbatch.html#OPT_requeue
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/server/node_manager.c (post_discard_job)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/mom_comm.c (im_eof)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/resmom/mom_main.c
        - https://www.ibm.com/docs/SSWRJV_10.1.0/lsf_admin/job_kill_hung.html
        - https://github.com/flux-framework/flux-core/blob/4a5e79f56b850a58cbbfc4b5af5a5b1fcd04c049/src/modules/job-exec/bulkexec.c
        - https://github.com/htcondor/htcondor/blob/7491a145f64a1c2393ed0933375874344fa44f9f/src/condor_utils/condor_event.cpp (JobReconnectFailedEvent)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/daemons/qmaster/reschedule.c
    """
    told = catalogued(f, "slurm-node-failure")
    if not told:
        return
    s = told[0]
    node = next((t.get("failed") or t.get("node") or t.get("mailnode") for t in told
                 if t.get("failed") or t.get("node") or t.get("mailnode")), None)
    if node == "...":
        node = None  # elided by the reporter
    scheduler = _FAMILY_SCHEDULER.get(str(s.get("family")))
    if scheduler:
        name, fix = _NODE_FAIL_FIXES[scheduler]
        # an HTCondor slot is "slot1@host": its Machine is the host
        fix = fix.format(node=node or "NODE", machine=(node or "MACHINE").rpartition("@")[2])
        job = _job_of(told)  # a MOM log line's job id, an HTCondor event's cluster
        if job:
            fix = fix.replace("JOBID", job)
        if s.get("id") in _EITHER:
            yield Hit(message=f"{name} rescheduled or ended the job off its host (line {s['line']}: \"{told_text(s)}\"): its qmaster "
                              "does this when the host's execd stops answering past reschedule_unknown (the node failed), "
                              "and an administrator's qmod -rj prints the same words",
                      fix=fix, evidence=ticket_evidence(s), severity="info")
            return
        yield Hit(message=f"{name} ended (or requeued) the job because a node of its allocation failed (line {s['line']}: \"{told_text(s)}\"): "
                          f"not the program's fault; {name} names the host and holds its state",
                  fix=fix, evidence=ticket_evidence(s))
        return
    job = _job_of(told)
    yield Hit(message=f"Slurm ended the job because a node of its allocation failed (line {s['line']}: \"{told_text(s)}\"): "
                      "not the program's fault; the node's reason is in slurmctld's records",
              fix=(_sacct(job, "JobID,State,NodeList,Elapsed", "NODE_FAIL") + "   # the nodes it ran on\n"
                   + (f"scontrol show node {node}   # State and Reason Slurm recorded for the node\n"
                      f"sbatch --exclude={node} job.sh   # resubmit away from it (or #SBATCH --requeue), and tell the administrators"
                      if node else
                      "sinfo -R   # the nodes Slurm holds down or drained, with the reason it recorded\n"
                      "sbatch --exclude=NODE job.sh   # resubmit away from the failed node (or #SBATCH --requeue), and tell the administrators")),
              evidence=ticket_evidence(s))
