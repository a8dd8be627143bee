"""Why a batch system refused a job at submission, or keeps it waiting, read from the scheduler's own
words in a paste: a PBS/TORQUE queue's access lists (knowledge/messages/pbs_access.toml), a Grid
Engine parallel environment that does not exist (sge_submit.toml), a Slurm site's job_submit filter
(slurm_submit_filter.toml) and Slurm's pending reason Priority (slurm_reasons.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, site_words_just_above, told_evidence, told_text

QUEUE_ACL = "pbs-queue-group-acl-denied"
SGE_PE = "sge-parallel-environment-unknown"
SUBMIT_FILTER = "slurm-submit-filter-rejected"
PRIORITY = "slurm-fairshare-priority-low"

_OPENPBS_BARE = "pbs_access:pbs-unauthorized-request"
_QCONF_NOT_A_PE = "sge_submit:qconf-not-a-pe"
_SLURM_UNLISTED = "slurm:unlisted"


@rule("ENV066", QUEUE_ACL, "error", "the PBS queue's user or group access list does not admit the job's owner", impact=5,
      also={"warning": "OpenPBS's bare \"qsub: Unauthorized Request\": the queue's user or group ACL is its usual cause, "
                       "not named"})
def pbs_queue_group_acl_denied(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted qsub reply, a PBS server refusing the job because of the queue's access lists:
        TORQUE's "Unauthorized Request MSG=group ACL is not satisfied: user U, queue Q", "user ACL
        rejected the submitting user" and "both user and group ACL rejected the submitting user"
        (PBSE_PERM with the list named), errors; OpenPBS's bare "qsub: Unauthorized Request"
        (PBSE_PERM, which it returns for the user and the group ACL alike, and for a site ACL
        check), a warning.

    Why it matters:
        A queue with acl_group_enable (or acl_user_enable) admits only the listed groups (users):
        the job never queues, and resubmitting changes nothing until the user's groups or the
        queue's lists change. The user's own groups say which: `id -Gn`.

    How to fix:
        Compare the user's groups with the queue's acl_groups (qstat -Qf QUEUE); ask the site to
        add the user to the queue's group (a new group takes effect in a new login session), or
        submit to a queue the user may use (qstat -Q lists them).

    References:
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/server/svr_jobfunc.c (check_queue_group_ACL, check_queue_user_ACL)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/server/svr_jobfunc.c (svr_chkque: 5a user ACL, 5b group ACL)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/doc/man8/pbs_queue_attributes.7B (acl_groups, acl_group_enable, acl_users)
    """
    told = catalogued(f, QUEUE_ACL)
    if not told:
        return
    named = [s for s in told if s.get("id") != _OPENPBS_BARE]
    s = (named or told)[0]
    queue = s.get("queue")
    fix = (f"id -Gn   # the groups this user is in\n"
           f"qstat -Qf {queue or 'QUEUE'} | grep -i acl   # the queue's acl_groups / acl_users: a group of the user must be listed\n"
           "qstat -Q   # the queues there are: submit to one this user may use (qsub -q QUEUE)\n"
           "# to use this queue: ask the site to add the user to one of its acl_groups, then log in again so the new group applies")
    if named:
        yield Hit(message=f"the PBS server refused the job because the access list of queue {queue or '?'} does not admit "
                          f"{s.get('owner') or 'its owner'} (line {s.get('line')}: \"{told_text(s)}\"): the user is in none "
                          "of the queue's allowed groups (or users)", fix=fix, evidence=told_evidence(s))
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": OpenPBS refused the job with PBSE_PERM, which it returns "
                      "when the queue's user or group access list does not admit the job's owner (or a site ACL check refuses it)",
              fix=fix, evidence=told_evidence(s), severity="warning")


@rule("ENV067", SGE_PE, "error", "the job asks Grid Engine for a parallel environment this cluster does not define", impact=5,
      also={"warning": "qconf -sp answered that the named parallel environment does not exist (no job refusal pasted)"})
def sge_parallel_environment_unknown(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, Grid Engine's qmaster refusing a job whose qsub -pe names an undefined parallel
        environment: "job rejected: the requested parallel environment "NAME" does not exist"
        (after qsub's "Unable to run job: " or a DRMAA client's "code 17: "), an error; qconf's
        "NAME is not a parallel environment" alone, a warning.

    Why it matters:
        Parallel environment names are each site's choice (smp, openmp, orte, mpi, make ...):
        tools and scripts written for one cluster (a workflow's default "-pe smp") name a PE
        another cluster lacks, and every such job is refused.

    How to fix:
        List the cluster's PEs (qconf -spl), pick one whose allocation_rule is $pe_slots for a
        multi-threaded job on one node (qconf -sp NAME), and pass that name to qsub -pe or to the
        tool's own PE setting.

    References:
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/daemons/qmaster/msg_qmaster.h (MSG_JOB_PEUNKNOWN_S)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/daemons/qmaster/sge_job_verify.c
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/doc/man/man5/sge_pe.5 (allocation_rule, $pe_slots)
    """
    told = catalogued(f, SGE_PE)
    if not told:
        return
    rejected = [s for s in told if s.get("id") != _QCONF_NOT_A_PE]
    s = (rejected or told)[0]
    pe = s.get("pe") or "NAME"
    fix = ("qconf -spl   # the parallel environments this cluster defines\n"
           "qconf -sp PE   # one of them: allocation_rule $pe_slots keeps all slots on one node (threads); $fill_up or $round_robin spread them (MPI)\n"
           f"qsub -pe PE N job.sh   # a defined PE in place of \"{pe}\" (a workflow tool: set its PE option, or its submit template)")
    if rejected:
        yield Hit(message=f"Grid Engine refused the job: it asks for parallel environment \"{pe}\", which this cluster does not "
                          f"define (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": no parallel environment \"{pe}\" is defined here, so a job "
                      f"that asks for it (qsub -pe {pe}) is refused", fix=fix, evidence=told_evidence(s), severity="warning")


@rule("ENV064", SUBMIT_FILTER, "error", "the site's job_submit filter refused the job: its own lines above the failure say why",
      impact=5)
def slurm_submit_filter_rejected(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted sbatch or salloc reply, lines of the site's own words ("sbatch: error: All jobs
        must specify a walltime with -t", "...does not match any supported policy") directly above
        "Batch job submission failed: Unspecified error" (or salloc's "Job submit/allocate failed:
        Unspecified error"): the shape of a refusal by the site's job_submit plugin, whose
        slurm.log_user() lines reach the user and whose slurm.ERROR is Slurm's "Unspecified error".

    Why it matters:
        "Unspecified error" alone says nothing; the site's lines above it are the reason, a local
        policy (a node count, a walltime, an account or partition rule) that Slurm itself does not
        have, and a workflow tool that shows only the last line hides them.

    How to fix:
        Read the site's lines and add what they ask for to the job script (#SBATCH --nodes, --time,
        --account, --partition ...), as the site's documentation states its policy; submit by hand
        once to see every line when a tool hides them.

    References:
        - https://slurm.schedmd.com/job_submit_plugins.html (slurm.log_user, slurm.ERROR)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/plugins/job_submit/lua/job_submit_lua.c
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/job_mgr.c (_job_create: job_submit_g_submit)
    """
    told = catalogued(f, SUBMIT_FILTER)
    # A filter may return another code than "Unspecified error" after its own words ("Number of nodes
    # must be specified" above "Node count specification invalid"): slurm-request-exceeds-node stays
    # silent there, and the site's words are this rule's.
    coded = [r for r in catalogued(f, "slurm-request-exceeds-node")
             if str(r.get("id", "")).startswith("slurm:") and site_words_just_above(f, r)]
    refusals = sorted(told + coded, key=lambda r: r.get("line") if isinstance(r.get("line"), int) else 0)
    if not refusals:
        return
    s = refusals[0]
    generic = ("\"Unspecified error\" is the plugin's generic code" if s in told
               else f"\"{told_text(s)}\" follows the site's own words")
    # Every refused submission of the paste, each with the site's lines above it: a workflow that
    # resubmits shows a second reason after the first is fixed (set U's toga-9: a partition, then a node count).
    said: list = []
    for refused in refusals:
        line = refused.get("line") if isinstance(refused.get("line"), int) else 0
        words = [t for t in (_site_words(u) for u in f.get("ticket.symptoms") or [] if _site_line(u, line)) if t]
        words = words or ([str(refused.get("site")).strip()] if refused.get("site") else [])
        said += [t for t in words if t not in said]
    quoted = "; ".join(f"\"{t[:100]}\"" for t in said[:4]) if said else f"\"{told_text(s)}\""
    yield Hit(message=f"the site's job_submit filter refused the job (line {s.get('line')}: {generic}); its own words "
                      f"say why: {quoted}",
              fix=("# add what the site's lines ask for to the job script, e.g.:\n"
                   "#SBATCH --nodes=N   # a node count (-N)\n"
                   "#SBATCH --time=HH:MM:SS   # a walltime (-t)\n"
                   "sbatch job.sh   # submit by hand once: a workflow tool may show only the last line"),
              evidence=told_evidence(s))


def _site_line(u: object, line: int) -> bool:
    """A client error line the catalogue does not know, up to 12 lines above the failure: the site's words."""
    return (isinstance(u, dict) and u.get("id") == _SLURM_UNLISTED and isinstance(u.get("line"), int)
            and line - 12 <= u["line"] <= line)


def _site_words(u: dict) -> str:
    """The words after "<program>: error:" ("" for the blank separator lines some filters print)."""
    return str(u.get("text", "")).split("error:", 1)[-1].strip()


# slurm_strerror(ESLURM_NOT_TOP_PRIORITY): job_mgr.c job_allocate @ 284c3b95 returns it to a job that
# asked to start at once (immediate: srun/salloc/sbatch --immediate) while higher-priority jobs pend.
_NOT_TOP = "slurm:ESLURM_NOT_TOP_PRIORITY"


@rule("ENV065", PRIORITY, "info", "the job waits with reason Priority: jobs of higher priority (often by fair-share) go first",
      impact=2)
def slurm_fairshare_priority_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted squeue listing or scontrol show job, a pending job whose reason is Priority
        (WAIT_PRIORITY: "higher priority jobs exist"). Information: the job is queued normally.
        Also slurmctld's refusal of a job that asked to start at once (--immediate) for the same
        reason: "Immediate execution impossible, insufficient priority".

    Why it matters:
        Under priority/multifactor the job's priority adds up age, fair-share, job size, partition
        and QOS factors; a user or account that has used more than its share of the cluster
        recently gets a low fair-share factor, and its jobs wait behind others until that usage
        decays (PriorityDecayHalfLife). Nothing is wrong with the job or the node.

    How to fix:
        See the job's priority factors (sprio -j JOBID) and the account's share and usage (sshare
        -U -l: a FairShare near 0 means heavy recent use); squeue --start gives Slurm's estimate.
        Waiting is the remedy; a smaller or shorter request can start earlier in a backfill gap.

    References:
        - https://slurm.schedmd.com/priority_multifactor.html
        - https://slurm.schedmd.com/fair_tree.html
        - https://slurm.schedmd.com/squeue.html#SECTION_JOB-REASON-CODES
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/job_state_reason.c
    """
    told = catalogued(f, PRIORITY)
    if not told:
        return
    s = told[0]
    if s.get("id") == _NOT_TOP:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the job asked to start at once (--immediate) and "
                          "Slurm refused it: jobs of higher priority wait for the same resources and go first",
                  fix=("sprio -l | head -20   # the pending jobs' priorities and their factors\n"
                       "sshare -U -l   # this user's share, usage and FairShare (near 0: heavy recent use, which decays)\n"
                       "sbatch job.sh   # without --immediate the job waits its turn in the queue"),
                  evidence=told_evidence(s))
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the job is pending with reason Priority, queued behind jobs "
                      "of higher priority; under fair-share, an account's recent heavy use lowers its jobs' priority",
              fix=("sprio -j JOBID   # the job's priority factors: a low FAIRSHARE term is recent use\n"
                   "sshare -U -l   # this user's share, usage and FairShare (near 0: heavy recent use, which decays)\n"
                   "squeue --start -j JOBID   # Slurm's estimate of when it starts"),
              evidence=told_evidence(s))
