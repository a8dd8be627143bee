"""Jobs Slurm refuses or holds for what they ask: an account, partition or QOS the user may not use,
and a request no node of the partition can hold. Both come from slurmctld's own answers
(knowledge/messages/slurm.toml: slurm_strerror and its err_msg lines; slurm_reasons.toml: the reasons
squeue and scontrol print), never from a guess about the site. A PBS/TORQUE server's refusal of a
request over its queue's maximum (pbs.toml) is the same fact under another scheduler."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_catalogued, qstat_unfolded, site_words_just_above, told_evidence, told_text


def _quoted(s: dict) -> str:
    """The line, cut to end at the message where it sits late in a user's long sentence."""
    text, said = str(s.get("text", "")).strip(), str(s.get("matched") or s.get("message") or "")
    at = text.find(said) if said else -1
    if at < 0 or at + len(said) <= 120:
        return told_text(s)
    return "..." + text[max(0, at - 40):at + len(said)]


# The #SBATCH options that name what slurm-invalid-account is about (sbatch(1)).
_ACCESS_OPTIONS = ("-A", "--account", "-p", "--partition", "--reservation")
_ACCESS_FIX = ("sacctmgr -n show assoc user=\"$USER\" format=cluster,account,partition,qos%40   "
               "# the accounts, partitions and QOS this user may submit with\n"
               "scontrol show partition | grep -E 'PartitionName|AllowAccounts|DenyAccounts|AllowGroups|AllowQos'   "
               "# what each partition admits\n"
               "sinfo -s   # the partitions that exist")


# slurmctld's answer to a job that names no partition where slurm.conf marks none Default=YES
# (job_mgr.c _get_job_parts @ 284c3b95): the user's request is complete once it names one.
_NO_DEFAULT_PARTITION = "slurm:ESLURM_DEFAULT_PARTITION_NOT_SET"
_NO_DEFAULT_FIX = ("sinfo -s   # the partitions this cluster has (none is marked with * as the default)\n"
                   "sbatch --partition=NAME job.sh   # or #SBATCH --partition=NAME in the script, and in the submit "
                   "options of any tool that submits for you\n"
                   "sacctmgr -n show assoc user=\"$USER\" format=cluster,account,partition,qos%40   "
                   "# the partitions this user may submit to, where the site limits them")


def _literal_option(found: list, options: tuple) -> Optional[dict]:
    """A #SBATCH line of the paste that sets one of ``options`` from a shell variable."""
    return next((s for s in found if s.get("id") == "jobscript:sbatch-directive-variable"
                 and s.get("option") in options), None)


# Lines that name the refused partition: Slurm's own (job_mgr.c "invalid partition specified: %s") and a
# site job_submit filter's, which also lists the partitions the account may use (slurm_submit_filter.toml).
_PARTITION_NAMED = ("slurm:invalid-partition-specified", "slurm_submit_filter:site-partition-not-valid")

# The client lines of a job refused at submission (slurm.toml's forms srun-allocate, sbatch-submit,
# salloc-submit). "Access/permission denied" and "Invalid user id" are slurmctld's answer to many
# requests (scontrol, scancel, sacctmgr, a step's credential on a node); only after these words are
# they the partition's refusal of the job (job_mgr.c _part_access_check @ 284c3b95).
_SUBMIT_WORDS = ("Batch job submission failed: ", "Unable to allocate resources: ", "Job submit/allocate failed: ")
# What the partition refused, by the code slurmctld returned (job_mgr.c @ 284c3b95: _part_access_check
# returns ESLURM_ACCESS_DENIED for ReqResv=YES without --reservation, RootOnly=YES, and a submit host
# outside AllocNodes=, ESLURM_USER_ID_MISSING for root where DisableRootJobs=YES; _check_for_part_assocs
# returns ESLURM_PARTITION_ASSOC for several partitions under a partition-bound association).
_PARTITION_REFUSED = {
    "slurm:ESLURM_ACCESS_DENIED": (
        "the partition refuses this submission: it requires a reservation (ReqResv=YES) and the job names none, "
        "it admits only root (RootOnly=YES), or it admits submissions only from the hosts in its AllocNodes= list "
        "and this host (a compute node, inside another job) is not one of them"),
    "slurm:ESLURM_USER_ID_MISSING": (
        "the job is submitted as root, and the partition (or slurm.conf's DisableRootJobs=YES) refuses root's jobs"),
    "slurm:ESLURM_PARTITION_ASSOC": (
        "it lists several partitions (-p a,b), but this user's association is bound to one partition: "
        "slurmctld cannot check the others"),
}
_PARTITION_REFUSED_FIX = (
    "scontrol show partition | grep -E 'PartitionName|AllocNodes|RootOnly|ReqResv|DisableRootJobs'   "
    "# what the partition asks of a submission\n"
    "hostname; echo \"${SLURM_JOB_ID:-not inside a job}\"   # the submit host: a compute node is often outside AllocNodes\n"
    "sacctmgr -n show assoc user=\"$USER\" format=cluster,account,partition,qos%40   "
    "# a partition named here binds the association: submit to that one partition (-p NAME)\n"
    "sbatch --reservation=NAME job.sh   # where ReqResv=YES: a reservation that admits this user (scontrol show reservation)")


@rule("ENV030", "slurm-invalid-account", "error",
      "Slurm refused the job's account or partition for this user", impact=7)
def slurm_invalid_account(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Slurm refusing or holding a job for the account or partition it
        names: "Invalid account or account/partition combination specified", "Invalid partition
        name specified" (with "invalid partition specified: NAME"), "User's group not permitted to
        use this partition", "Invalid or unknown association", "Access denied to requested
        reservation", and the job reasons InvalidAccount and AccountNotAllowed (a QOS refused is
        slurm-invalid-qos). Where the paste shows a #SBATCH line holding a shell
        variable ($proj), it says that sbatch passes it on unexpanded. "No partition specified or
        system default partition": the job names no partition on a cluster that has no default.
        A site's job_submit filter that says the same in its own words ("The 'batch' is not a
        valid partition. (Available partitions for 'default' account: [...])") is read too, and
        its list of partitions is quoted. After sbatch's, srun's or salloc's submission words
        only: "Access/permission denied" (the partition's ReqResv=YES, RootOnly=YES, or an
        AllocNodes= list without the submit host), "Invalid user id" (root where the partition
        refuses root), and "Multiple partition job request not supported when a partition is set
        in the association".

    Why it matters:
        The job never runs, and nothing on any node is wrong. Slurm admits a job only under an
        association (user, account, partition) the site has created; an account or partition
        misspelt, one the user has no access to, or a #SBATCH variable Slurm sees as
        the literal text "$proj" all end here.

    How to fix:
        List the associations the user has (sacctmgr show assoc user=$USER) and what each
        partition admits (scontrol show partition), and submit with an account and partition
        from that list; in a batch script write the values themselves, or pass them on
        sbatch's command line (sbatch --account="$proj" job.sh), where the shell expands them.

    References:
        - https://slurm.schedmd.com/sacctmgr.html (show association)
        - https://slurm.schedmd.com/slurm.conf.html (AllowAccounts, AllowGroups, AllowQos)
        - https://slurm.schedmd.com/sbatch.html (options in #SBATCH lines)
        - https://github.com/SchedMD/slurm/blob/master/src/common/slurm_errno.c (the messages)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/job_mgr.c (_part_access_check, _check_for_part_assocs)
    """
    refused = next((s for s in catalogued(f, "slurm-invalid-account") if s.get("id") not in _PARTITION_REFUSED
                    or any(w in str(s.get("text", "")) for w in _SUBMIT_WORDS)), None)
    if refused is None:
        return
    if refused.get("id") in _PARTITION_REFUSED:
        yield Hit(message=f"Slurm refused the job at submission (line {refused.get('line')}: \"{_quoted(refused)}\"): "
                          f"{_PARTITION_REFUSED[refused['id']]}",
                  fix=_PARTITION_REFUSED_FIX, evidence=told_evidence(refused))
        return
    if refused.get("id") == _NO_DEFAULT_PARTITION:
        yield Hit(message=f"Slurm refused the job (line {refused.get('line')}: \"{_quoted(refused)}\"): it names no "
                          "partition and the cluster has no default one (no partition with Default=YES), so every job "
                          "must name its partition",
                  fix=_NO_DEFAULT_FIX, evidence=told_evidence(refused))
        return
    found = f.get("ticket.symptoms") or []
    literal = _literal_option(found, _ACCESS_OPTIONS)
    named = next((s for s in found if s.get("id") in _PARTITION_NAMED), None)
    what = f" (partition \"{named.get('partition')}\")" if named and named.get("partition") else ""
    if named and named.get("available"):
        what += f"; the site lists those account '{named.get('account')}' may use: {named.get('available')}"
    message = (f"Slurm refused the job's account or partition{what} "
               f"(line {refused.get('line')}: \"{_quoted(refused)}\"): it names one that does not exist "
               "or that this user may not use")
    fix = _ACCESS_FIX
    evidence = told_evidence(refused)
    if literal is not None:
        option, variable = literal.get("option") or "an option", literal.get("variable") or "a variable"
        message += (f"; line {literal.get('line')} sets {option} from ${variable} in a #SBATCH line, which sbatch "
                    f"does not expand: Slurm receives the text \"${variable}\"")
        fix = (f"sbatch {option}=\"${variable}\" job.sh   # on the command line the shell expands it; "
               "or write the value itself in the #SBATCH line\n") + fix
        evidence["directive.line"] = literal.get("line")
    yield Hit(message=message, fix=fix, evidence=evidence)


_QOS_OPTIONS = ("-q", "--qos")
_QOS_FIX = ("sacctmgr -n show assoc user=\"$USER\" format=account%20,partition%20,qos%60,defaultqos%20   "
            "# the QOS this user may name, per account and partition, and the one a job gets by default\n"
            "sacctmgr -n show qos format=name%20,flags%40   # the QOS that exist; RequiresReservation needs --reservation\n"
            "scontrol show partition | grep -E 'PartitionName|AllowQos|DenyQos|QoS='   # the QOS each partition admits\n"
            "env | grep -E '^(SBATCH|SALLOC|SLURM)_QOS='   # a QOS set in the environment applies to every job submitted\n"
            "sbatch --qos=normal job.sh   # a QOS from the first listing ('normal' is made with each cluster), or none for the default")
# slurmctld's log lines say which of its refusals it was; the client's line only that it refused.
_QOS_WHY = {
    "slurm:slurmctld-invalid-qos": "no QOS of that name exists",
    "slurm:slurmctld-assoc-no-qos-access": "the user's association may not use it",
    "slurm:slurmctld-qos-reservation-only": "it may only be used inside a reservation",
    "slurm:slurmctld-relative-qos-as-job-qos": "it is a relative partition QOS, which no job may name",
}


@rule("ENV050", "slurm-invalid-qos", "error",
      "Slurm refused the job's QOS: it does not exist or this user may not use it", impact=7)
def slurm_invalid_qos(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Slurm refusing a job for its quality of service (QOS): "Invalid qos
        specification" from sbatch, salloc or srun, "Invalid QOS specification, relative QOS can
        only be used in a single partition per cluster.", the job reasons InvalidQOS and
        QOSNotAllowed, and slurmctld's own log lines that say which refusal it was ("Invalid qos
        (NAME)", "This association ... does not have access to qos NAME", "qos NAME can only be
        used in a reservation", "QOS NAME is relative and used as a Partition QOS").

    Why it matters:
        The job never runs and nothing on any node is wrong. With AccountingStorageEnforce
        including qos, slurmctld admits a job only with a QOS its association (user, account,
        partition) lists; a QOS misspelt, one from another site or account, a default left in a
        workflow tool's configuration or in SBATCH_QOS, or a partition's AllowQos without it all
        end here.

    How to fix:
        List the QOS the user's associations may use (sacctmgr show assoc) and what each
        partition admits (AllowQos), then submit with one of them, or with no --qos to get the
        association's default; where a workflow tool writes the QOS, change it in its
        configuration.

    References:
        - https://slurm.schedmd.com/qos.html
        - https://slurm.schedmd.com/sacctmgr.html (show association: QOS, DefaultQOS)
        - https://slurm.schedmd.com/slurm.conf.html (AccountingStorageEnforce, AllowQos, DenyQos)
        - https://slurm.schedmd.com/sbatch.html (--qos, SBATCH_QOS)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/job_mgr.c (_determine_and_validate_qos)
    """
    refused = first_catalogued(f, "slurm-invalid-qos")
    if refused is None:
        return
    found = f.get("ticket.symptoms") or []
    why = next((s for s in found if s.get("id") in _QOS_WHY), None)
    said = ""
    if why is not None:
        named = f" \"{why['qos']}\"" if why.get("qos") else ""
        said = f"; slurmctld says why (line {why.get('line')}): the QOS{named}: {_QOS_WHY[why['id']]}"
    message = (f"Slurm refused the job's QOS (line {refused.get('line')}: \"{_quoted(refused)}\"): it names one that "
               f"does not exist or that this user's account and partition may not use{said}")
    fix, evidence = _QOS_FIX, told_evidence(refused)
    literal = _literal_option(found, _QOS_OPTIONS)
    if literal is not None:
        option, variable = literal.get("option") or "--qos", literal.get("variable") or "a variable"
        message += (f"; line {literal.get('line')} sets {option} from ${variable} in a #SBATCH line, which sbatch "
                    f"does not expand: Slurm receives the text \"${variable}\"")
        fix = f"sbatch {option}=\"${variable}\" job.sh   # on the command line the shell expands it\n" + fix
        evidence["directive.line"] = literal.get("line")
    yield Hit(message=message, fix=fix, evidence=evidence)


_FIT_FIX = ("sinfo -N -o '%N %P %c %m %G %f'   # each node: partition, CPUs, memory (MB), GPUs (GRES), features\n"
            "scontrol show node | grep -E 'NodeName|CPUTot|RealMemory|CoreSpecCount|CPUSpecList|MemSpecLimit'   "
            "# cores and memory the site keeps for the system do not go to jobs\n"
            "scontrol show partition | grep -E 'PartitionName|TotalNodes|MaxNodes|MaxCPUsPerNode|MaxMemPer'   "
            "# the partition's own limits")
# The memory form: sinfo's %m is the node's configured RealMemory in MB (1 where slurm.conf sets none);
# --mem=0 asks for all of each node's memory (sbatch(1), --mem: "a special case").
_MEM_FIX = ("scontrol show config | grep -E 'SelectTypeParameters|DefMemPer|MaxMemPer'   # whether memory is a resource "
            "jobs ask for at this site (sinfo's %m column of 1 MB: node memory left unconfigured)\n"
            "sbatch --mem=0 job.sh   # all of each node's memory: accepted where per-job memory is not configured "
            "(or drop --mem and ask the site how it wants memory asked)")
# Refusals whose GPU form slurm-gpu-request-rejected answers when the paste shows GPUs asked for.
_GPU_FORM = ("slurm:ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE",)
# srun's words for a step refused inside an allocation (src/srun/launch.c, knowledge/messages/slurm.toml).
_STEP_REFUSED = "Unable to create step for job "
# slurmctld's err_msg lines: which part of the request no node holds.
_REASON_LINES = ("slurm:cpu-count-per-node-unsatisfiable", "slurm:memory-unsatisfiable", "slurm:tmp-disk-unsatisfiable",
                 "slurm:socket-core-thread-unsatisfiable", "slurm:node-features-unsatisfiable")


@rule("ENV031", "slurm-request-exceeds-node", "error",
      "the job asks for more than any node of its partition offers", impact=7)
def slurm_request_exceeds_node(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Slurm refusing a job, or holding it for good, because no node (or
        not enough nodes) of the partitions it may use can hold what it asks: "Requested node
        configuration is not available" where the paste shows no GPU request (with a GPU
        request slurm-gpu-request-rejected answers), slurmctld's reason beside it ("CPU count per
        node can not be satisfied", "Memory specification can not be satisfied", temporary disk,
        sockets/cores/threads, node features), "More processors requested than permitted",
        "Node count specification invalid", "Memory required by task is not available" (but not
        where srun could not create a step inside a job: "Unable to create step for job N: ..."
        compares the step with the job's own allocation, not with the nodes), and the
        pending reasons PartitionConfig, PartitionNodeLimit and BadConstraints. OpenPBS and PBS
        Pro's scheduler comment "Can Never Run: Insufficient amount of resource: ncpus (R: A: T:)"
        (and the queue's, the server's, "Not enough total nodes available"); TORQUE's qsub
        refusal "Job exceeds queue resource limits MSG=cannot locate feasible nodes" (chk_resc_limits:
        no set of the server's nodes could hold the nodes= request). Flux's refusals of
        the same kind: its schedulers' alloc exception "unsatisfiable request" (flux-core) and
        "alloc denied due to type="unsatisfiable"" (Fluxion), and the limit-job-size plugin's
        "requested nnodes (N) exceeds policy limit of M".

    Why it matters:
        The job never starts, however long it waits, and nothing on a node is broken: the
        request is larger than the cluster's nodes as slurm.conf describes them. Cores and memory
        a site reserves for the system (CoreSpecCount, CPUSpecList, MemSpecLimit) are not offered
        to jobs, so asking for every core of a node can be refused.

    How to fix:
        Compare the request with the nodes (sinfo -N -o '%N %P %c %m %G %f', scontrol show node)
        and the partition's limits (scontrol show partition), then ask for what one node offers:
        fewer tasks or CPUs per node (spread over more nodes), --mem within RealMemory less
        MemSpecLimit, no more nodes than the partition holds. A memory request refused though the
        nodes have far more: the site configures no node memory (RealMemory) for jobs to request,
        so only --mem=0 (all of a node's) or no --mem passes.

    References:
        - https://slurm.schedmd.com/slurm.conf.html (CoreSpecCount, MemSpecLimit, MaxNodes, MaxCPUsPerNode)
        - https://slurm.schedmd.com/squeue.html (JOB REASON CODES: PartitionConfig, PartitionNodeLimit, BadConstraints)
        - https://github.com/SchedMD/slurm/blob/master/src/slurmctld/node_scheduler.c (the err_msg lines)
        - https://slurm.schedmd.com/sbatch.html (--mem: "--mem=0 ... all of the memory on each node")
        - https://github.com/NOAA-EMC/GDASApp/issues/1762 (a site where only --mem=0 passes)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/scheduler/job_info.cpp ("Can Never Run")
        - https://github.com/flux-framework/flux-core/blob/4a5e79f56b850a58cbbfc4b5af5a5b1fcd04c049/src/common/librlist/rlist.c ("unsatisfiable request")
        - https://github.com/flux-framework/flux-sched/blob/fd257f71466e86bbb66a6593b1ca45fc99197696/qmanager/modules/qmanager_callbacks.cpp
    """
    found = f.get("ticket.symptoms") or []
    gpus_asked = any(s.get("id") == "prose:slurm-gpus-requested" for s in found)
    refused = first_catalogued(f, "slurm-request-exceeds-node", skip=_GPU_FORM if gpus_asked else ())
    if refused is None:
        return
    # A step that srun could not create inside a job asks for more than the job's own allocation
    # holds (stepmgr.c returns the same codes): the user's srun line against their sbatch/salloc
    # request, which the catalogue's reading says; no node of the partition is too small.
    if _STEP_REFUSED in str(refused.get("text", "")):
        return
    if str(refused.get("id", "")).startswith("pbs_sched_comment:"):
        yield Hit(message=f"PBS will never run the job (line {refused.get('line')}: \"{qstat_unfolded(refused)}\"): its scheduler "
                          "found that no node (or the queue, or the server) has what the request asks for, counting "
                          "busy and free nodes alike: it stays queued for ever",
                  fix=_PBS_FIT_FIX, evidence=told_evidence(refused))
        return
    if refused.get("id") == "pbs:torque-no-feasible-nodes":
        yield Hit(message=f"TORQUE refuses the job at qsub (line {refused.get('line')}: \"cannot locate feasible nodes\"): "
                          "no set of the server's nodes could ever hold its nodes= request (more nodes than the server "
                          "has, more processors or GPUs on one node than any has, or a feature no node has)",
                  fix=_TORQUE_FIT_FIX, evidence=told_evidence(refused))
        return
    if str(refused.get("id", "")).startswith("flux:"):
        yield Hit(message=f"Flux refuses the job (line {refused.get('line')}: \"{_quoted(refused)}\"): it asks for more "
                          "nodes, cores or GPUs than this Flux instance (or its queue's policy) can ever give it; "
                          "an instance started on fewer nodes than the job asks for refuses it so",
                  fix=_FLUX_FIT_FIX, evidence=told_evidence(refused))
        return
    # A site's job_submit filter may return this code after its own words ("Number of nodes must be
    # specified"): a client error line no catalogue knows, just above the failure, is the reason, and
    # the request's size is not (slurm-submit-filter-rejected reads such lines).
    if site_words_just_above(f, refused):
        return
    # slurmctld's reason line says which part of the request no node holds: quote it first.
    reason = next((s for s in found if s.get("id") in _REASON_LINES), None)
    shown = reason or refused
    if shown.get("id") == "slurm:memory-unsatisfiable":
        yield Hit(message=f"Slurm cannot place the job on any node it may use (line {shown.get('line')}: "
                          f"\"{_quoted(shown)}\"): no node of the partition is configured with the memory the job asks "
                          "per node (slurm.conf RealMemory, less MemSpecLimit); where a request far below the nodes' real "
                          "memory is refused so, the site gives jobs no memory to ask for (node memory left unconfigured): "
                          "there only --mem=0, all of a node's memory, or no --mem at all passes",
                  fix=_FIT_FIX + "\n" + _MEM_FIX, evidence=told_evidence(shown))
        return
    yield Hit(message=f"Slurm cannot place the job on any node it may use (line {shown.get('line')}: "
                      f"\"{_quoted(shown)}\"): the request is larger than the partition's nodes offer to jobs",
              fix=_FIT_FIX, evidence=told_evidence(shown))


# pbsnodes(8B) -av: each vnode's resources_available; qstat -Qf: a queue's resources_available and _max.
_PBS_FIT_FIX = ("qstat -f JOBID | grep -E 'Resource_List|comment'   # what the job asks for, and the resource named\n"
                "pbsnodes -av | grep -E '^[^ ]|resources_available'   # what each node offers\n"
                "qsub -l select=2:ncpus=32:mem=100gb job.sh   # chunks no larger than one node (more chunks, not bigger ones)")
# TORQUE's pbsnodes -a lists each node's np and gpus; nodes=N:ppn=P:gpus=G asks for N nodes of that
# shape (nodes=N alone asks for N nodes, one processor each), procs=N for N processors anywhere.
_TORQUE_FIT_FIX = ("pbsnodes -a | grep -E '^[^ ]|np =|gpus =|properties ='   # the server's nodes: processors, GPUs, features\n"
                   "qsub -l nodes=4:ppn=8:gpus=4 job.sh   # no more nodes than it has, and per node no more than one node holds")
# flux-resource(1) list: the nodes, cores and GPUs the instance holds, up and down; flux-queue(1) list:
# each queue's limits; flux-run(1): -N nodes, -n tasks, -c cores and -g GPUs per task.
_FLUX_FIT_FIX = ("flux resource list   # the nodes, cores and GPUs this instance holds (a request must fit in them)\n"
                 "flux queue list   # each queue's job-size limits\n"
                 "flux run -N1 -n4 -c1 hostname   # a request within them: -N nodes, -n tasks, -c cores and -g GPUs per task")
_FLUX_TIME_FIX = ("flux queue list   # each queue's default duration and its limit\n"
                  "flux batch -t 1h job.sh   # a duration (-t) within the limit; longer work checkpoints and resubmits")
_TIME_FIX = ("sinfo -o '%P %l'   # each partition's MaxTime (the TIMELIMIT column)\n"
             "sacctmgr -n show qos format=name%20,maxwall   # the QOS's MaxWall, which caps --time below the partition's\n"
             "sbatch --time=1-00:00:00 job.sh   # a --time within both; longer work checkpoints and resubmits")
# PBS and TORQUE keep a queue's limits in its resources_max attributes (qstat -Q -f lists them).
_PBS_TIME_FIX = ("qstat -Q -f QUEUE | grep -E 'resources_(max|default)\\.walltime'   # the queue's longest walltime\n"
                 "qsub -l walltime=01:00:00 job.sh   # a walltime within it (or -q a queue whose maximum is longer); "
                 "longer work checkpoints and resubmits")


# The user's own sentence naming the request and the queue's maximum (knowledge/messages/prose.toml).
_TIME_PROSE = "prose:walltime-over-queue-max"


def _seconds(hms) -> int:
    h, m, sec = (int(x) for x in str(hms).split(":"))
    return h * 3600 + m * 60 + sec


@rule("ENV032", "slurm-time-request-exceeds-limit", "error",
      "the job asks for more time than its partition or QOS allows", impact=6)
def slurm_time_request_exceeds_limit(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Slurm refusing a job for its --time: "Requested time limit is invalid
        (missing or exceeds some limit)", "Invalid time-min specification (exceeds job's time or
        other limits)", or the job held with reason PartitionTimeLimit, QOSMaxWallDurationPerJobLimit
        or AssocMaxWallDurationPerJobLimit; a TORQUE server's "Job exceeds queue resource limits
        MSG=cannot satisfy queue max walltime requirement" (qsub's, for PBS jobs); Flux's
        limit-duration plugin: "requested duration (T) exceeds policy limit of L"; a user's
        sentence naming a walltime request above the queue's maximum ("walltime=239:00:00, but
        ... the maximum walltime is 23:59:59"), the two figures compared.

    Why it matters:
        The job is refused, or waits for ever: its --time (or a default the script or a workflow
        tool sets) is longer than the partition's MaxTime, or than the MaxWall of its QOS or
        association, which may be shorter than what sinfo shows for the partition.

    How to fix:
        Read the partition's MaxTime (sinfo -o '%P %l') and the QOS's MaxWall (sacctmgr show qos),
        and submit with a --time within both; work that needs longer must checkpoint and
        resubmit, or run in a partition or QOS the site provides for long jobs.

    References:
        - https://slurm.schedmd.com/sbatch.html (--time)
        - https://slurm.schedmd.com/resource_limits.html (MaxWall, MaxTime)
        - https://github.com/SchedMD/slurm/blob/master/src/common/slurm_errno.c (the messages)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/server/svr_jobfunc.c (chk_svr_resc_limit)
        - https://github.com/flux-framework/flux-core/blob/4a5e79f56b850a58cbbfc4b5af5a5b1fcd04c049/src/modules/job-manager/plugins/limit-duration.c
    """
    s = first_catalogued(f, "slurm-time-request-exceeds-limit", skip=(_TIME_PROSE,))
    if s is None:
        said = next((t for t in catalogued(f, "slurm-time-request-exceeds-limit") if t.get("id") == _TIME_PROSE), None)
        over = said and _seconds(said.get("asked")) > _seconds(said.get("limit"))
        if over:
            yield Hit(message=f"the job asks for a walltime of {said.get('asked')}, longer than the queue's maximum of "
                              f"{said.get('limit')}, as the user writes (line {said.get('line')}: \"{_quoted(said)}\"): "
                              "the batch server refuses or never starts such a job",
                      fix=_PBS_TIME_FIX, evidence=told_evidence(said))
        return
    if str(s.get("id", "")).startswith("flux:"):
        yield Hit(message=f"Flux refuses the job for its duration (line {s.get('line')}: \"{_quoted(s)}\"): the time asked "
                          "for (-t), or no time limit at all, is longer than the policy of the instance or queue allows",
                  fix=_FLUX_TIME_FIX, evidence=told_evidence(s))
        return
    if str(s.get("id", "")).startswith("pbs:"):
        yield Hit(message=f"the PBS server refuses the job for its walltime (line {s.get('line')}: \"{_quoted(s)}\"): "
                          f"the walltime asked for is longer than the {s.get('scope') or 'queue'}'s maximum (resources_max.walltime)",
                  fix=_PBS_TIME_FIX, evidence=told_evidence(s))
        return
    yield Hit(message=f"Slurm refuses or holds the job for its time limit (line {s.get('line')}: \"{_quoted(s)}\"): "
                      "the --time asked for is longer than the partition or its QOS allows",
              fix=_TIME_FIX, evidence=told_evidence(s))


_LIMIT_FIX = ("squeue -u \"$USER\" -t PD -o '%.12i %.12P %.30r'   # each waiting job's reason: which limit holds it\n"
              "sacctmgr -n show assoc user=\"$USER\" format=account,partition,qos%30,grpjobs,maxjobs,maxsubmit,maxwall   "
              "# this user's limits\n"
              "sacctmgr -n show qos format=name%20,maxjobspu,maxsubmitpu,maxtrespu%30,grptres%30   # the QOS's limits")
# Refused at submission (the job is not queued) rather than held: an error; a held job waits for usage to fall.
_REFUSED = ("slurm:ESLURM_ACCOUNTING_POLICY", "slurm:ESLURM_QOS_THRES")


@rule("ENV033", "slurm-qos-limit-reached", "warning",
      "a job refused or held by a limit of its QOS or association", impact=5,
      also={"error": "submission refused (the job is not queued): 'Job violates accounting/QOS policy'"})
def slurm_qos_limit_reached(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Slurm refusing a job with "Job violates accounting/QOS policy (job
        submit limit, user's size and/or time limits)" or "Requested account has breached
        requested QOS usage threshold", or holding it with one of the reasons that name a limit
        of its QOS or association (QOSMaxJobsPerUserLimit, QOSMaxSubmitJobPerUserLimit,
        AssocGrpCpuLimit, AssocGrpGRES, QOSGrpNodeLimit, MaxJobsPerAccount, AccountingPolicy and
        the rest of slurm.h's limit reasons).

    Why it matters:
        Nothing is broken: the site caps how many jobs, CPUs, GPUs or minutes a user, account or
        QOS may hold at once. A held job starts when usage falls below the limit; a refused one
        was over a submit limit (jobs queued or running), and retrying will not help until
        earlier jobs end. Limits change without notice when a site retunes its QOS.

    How to fix:
        See which limit holds each job (squeue's reason column), and the limits themselves
        (sacctmgr show assoc / show qos); wait for running jobs to end, submit fewer at once (a
        job array with a %N throttle), or ask the site for a QOS with higher limits.

    References:
        - https://slurm.schedmd.com/resource_limits.html
        - https://slurm.schedmd.com/squeue.html (JOB REASON CODES)
        - https://github.com/SchedMD/slurm/blob/master/src/common/job_state_reason.c (the reasons)
    """
    s = first_catalogued(f, "slurm-qos-limit-reached")
    if s is None:
        return
    # sbatch prints the limit's name on its own line before the refusal: refused, though read first
    refused = any(t.get("id") in _REFUSED for t in catalogued(f, "slurm-qos-limit-reached"))
    what = ("Slurm refused the job: a submit or size limit of its QOS or association is reached" if refused
            else "the job waits on a limit of its QOS or association (it starts when usage falls below it)")
    yield Hit(message=f"{what} (line {s.get('line')}: \"{_quoted(s)}\")", fix=_LIMIT_FIX,
              evidence=told_evidence(s), **({"severity": "error"} if refused else {}))


_PBS_MEM_FIX = ("qstat -Q -f QUEUE | grep -E 'resources_(max|default)\\.p?v?mem'   # the queue's largest memory request\n"
                "qsub -l mem=4gb job.sh   # a request within it, or -q a queue whose resources_max.mem is larger "
                "(ask the administrators which)")


@rule("SYS012", "batch-queue-mem-limit-exceeded", "error",
      "the job asks for more memory than its batch queue allows", impact=6)
def batch_queue_mem_limit_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a TORQUE server refusing a job at submission for its memory request:
        "Job exceeds queue resource limits MSG=cannot satisfy queue max mem requirement" (also
        pmem, vmem, pvmem, and "server max" where the server's limit applies), as qsub prints it.

    Why it matters:
        The job is never queued: the mem (or pmem, vmem) it asks for is larger than the queue's
        resources_max for that resource, a site's policy (a GPU or shared queue often has a low
        one). Nothing on a node is wrong; the request or the queue has to change.

    How to fix:
        Read the queue's limits (qstat -Q -f QUEUE, resources_max.mem) and ask for less memory,
        or submit to a queue whose maximum is larger; the administrators say which queue is
        meant for large-memory jobs.

    References:
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/server/svr_jobfunc.c (chk_svr_resc_limit)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/include/pbs_error_db.h (PBSE_EXCQRESC)
    """
    s = first_catalogued(f, "batch-queue-mem-limit-exceeded")
    if s is None:
        return
    yield Hit(message=f"the PBS server refuses the job for its memory request (line {s.get('line')}: \"{_quoted(s)}\"): "
                      f"the {s.get('resource') or 'mem'} asked for is larger than the {s.get('scope') or 'queue'}'s maximum "
                      f"(resources_max.{s.get('resource') or 'mem'})",
              fix=_PBS_MEM_FIX, evidence=told_evidence(s))


# sinfo's %f column: the features each node has (slurm.conf Features=, or AvailableFeatures); %b the active ones.
_FEATURE_FIX = ('sinfo -o "%20N %f"   # the node features this cluster defines (AVAIL_FEATURES), per group of nodes\n'
                "env | grep -E '^(SBATCH|SALLOC|SLURM)_CONSTRAINT='   # a constraint set in the environment applies to every job")
# slurmctld's log lines of the same refusal: they name the feature (23.02 on) or quote the constraint.
_FEATURE_LOG = ("slurm:slurmctld-feature-not-usable", "slurm:slurmctld-invalid-feature-list", "slurm:slurmctld-invalid-constraint")


@rule("ENV126", "slurm-constraint-feature-undefined", "error",
      "the job asks for a node feature this Slurm cluster does not define", impact=7)
def slurm_constraint_feature_undefined(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Slurm refusing a job at submission with "Invalid feature
        specification" (ESLURM_INVALID_FEATURE) or "Invalid preferred feature specification"
        (--prefer), from sbatch, srun or salloc, and slurmctld's own log lines of the same check
        ("Job specs has invalid feature list: ...", "feature X is not usable on any node",
        "invalid constraint: ..."). Where the paste shows the request (#SBATCH --constraint=avx2,
        -C knl, a workflow's clusterOptions), the feature is quoted.

    Why it matters:
        The job never runs and nothing on any node is wrong: --constraint asks for nodes whose
        Features= in slurm.conf list a name, and slurmctld refuses a name no node of this cluster
        has (or one not active, for a user who may not reboot nodes to change it), or an
        expression it cannot parse. Pipelines written at one site often carry that site's
        feature names (avx2, skylake, gpu) in their submit options, which another cluster does
        not define.

    How to fix:
        List the features this cluster defines (sinfo -o "%20N %f"), then change the
        --constraint to one of them, or drop it where every node qualifies; in a pipeline,
        change the line of its configuration that adds the option (Nextflow's clusterOptions,
        a Snakemake profile's constraint or slurm_extra), since the job script is generated.

    References:
        - https://slurm.schedmd.com/sbatch.html (-C, --constraint; --prefer)
        - https://slurm.schedmd.com/sinfo.html (%f: features available on the nodes)
        - https://github.com/SchedMD/slurm/blob/slurm-25-05-8-1/src/slurmctld/job_scheduler.c (build_feature_list, _valid_node_feature)
        - https://github.com/SchedMD/slurm/blob/slurm-25-05-8-1/src/common/slurm_errno.c (ESLURM_INVALID_FEATURE, ESLURM_INVALID_PREFER)
        - https://github.com/ToolsVanBox/PTATO/issues/4 (a pipeline's #SBATCH --constraint=avx2 on a cluster without it)
    """
    said = catalogued(f, "slurm-constraint-feature-undefined")
    if not said:
        return
    found = f.get("ticket.symptoms") or []
    refused = next((s for s in said if s.get("id") not in _FEATURE_LOG), said[0])
    log = next((s for s in said if s.get("id") in _FEATURE_LOG), None)
    asked = next((s for s in found if s.get("id") == "jobscript:constraint-requested"), None)
    prefer = refused.get("id") == "slurm:ESLURM_INVALID_PREFER"
    option = "--prefer" if prefer else "--constraint"
    named = (log or {}).get("feature") or (log or {}).get("features") or (asked or {}).get("feature")
    what = f" \"{named}\"" if named else ""
    how = f"its {option}" if asked is not None or prefer else \
        "its --constraint (on the command line, in a #SBATCH line, in SBATCH_CONSTRAINT, or added by the tool that submits it)"
    message = (f"Slurm refused the job (line {refused.get('line')}: \"{_quoted(refused)}\"): {how} asks for a node "
               f"feature{what} that no node of this cluster defines, or is an expression slurmctld cannot parse")
    if asked is not None:
        message += f"; line {asked.get('line')} asks for it: \"{told_text(asked)}\""
    if log is not None and log is not refused:
        message += f"; slurmctld's log (line {log.get('line')}) says the same"
    fix = _FEATURE_FIX
    if named:
        fix += (f"\n# then change {option}={named} to a feature the first command lists, or drop it where every node "
                "qualifies (in a pipeline: the config line that adds it, e.g. Nextflow's clusterOptions)")
    evidence = told_evidence(refused)
    if asked is not None:
        evidence["constraint.line"] = asked.get("line")
    yield Hit(message=message, fix=fix, evidence=evidence)


# ----------------------------------------------------------------------------------------------
# ENV130 slurm-request-names-unknown
NAMES_UNKNOWN = "slurm-request-names-unknown"
# slurm_strerror's refusal (knowledge/messages/slurm.toml) -> what the job named, the options that
# name it (the #SBATCH line jobscript:names-cluster-object quotes), and the commands that list what
# this cluster has of it. Each command is a user's: none needs an administrator's rights.
_NAMED_THINGS = {
    "ESLURM_INVALID_NODE_NAME": (
        "a node name that is not a node of this cluster (-w/--nodelist or -x/--exclude)", ("--nodelist", "-w"),
        "sinfo -N -o '%N %P %T'   # the nodes this cluster has, their partitions and states"),
    "ESLURM_REQUESTED_NODES_NOT_IN_PARTITION": (
        "a node (-w/--nodelist) that is not in the job's partition", ("--nodelist", "-w", "--partition", "-p"),
        "sinfo -N -o '%N %P %T'   # which partitions each node belongs to\n"
        "scontrol show partition PARTITION | grep -E 'PartitionName|Nodes='   # the nodes of the job's partition"),
    "ESLURM_NODE_NOT_AVAIL": (
        "a node (-w/--nodelist) that is down, drained or reserved now", ("--nodelist", "-w"),
        "sinfo -N -o '%N %P %T %E'   # each node's state and the reason it is down or drained\n"
        "scontrol show reservation   # reservations that hold nodes"),
    "ESLURM_INVALID_LICENSES": (
        "a licence (-L/--licenses) this cluster does not define, or more of it than exist", ("--licenses", "-L"),
        "scontrol show licenses   # the licences slurmctld knows, with their totals"),
    "ESLURM_INVALID_WCKEY": (
        "a wckey (--wckey) this user has none of, or none where the site requires one", ("--wckey",),
        "sacctmgr -n show wckeys users=\"$USER\" format=wckey,cluster,user   # the wckeys this user may use"),
    "ESLURM_RESERVATION_INVALID": (
        "a reservation (--reservation) that does not exist: ended, deleted, or misspelt", ("--reservation",),
        "scontrol show reservation   # the reservations that exist now, with their users, accounts and times"),
    "ESLURM_RESERVATION_NOT_USABLE": (
        "a reservation (--reservation) that cannot take the job now (not started yet, or its nodes unusable)", ("--reservation",),
        "scontrol show reservation   # its StartTime, State and nodes"),
    "ESLURM_INVALID_TRES": (
        "a trackable resource (TRES: --tres-per-task, --gres, --gpus) this cluster does not track", (),
        "sacctmgr -n show tres format=type,name%30   # the TRES this cluster tracks\n"
        "scontrol show config | grep -E 'AccountingStorageTRES|GresTypes'"),
    "ESLURM_INVALID_CLUSTER_NAME": (
        "a cluster (-M/--clusters) the accounting database does not know", ("--clusters", "-M"),
        "sacctmgr -n show clusters format=cluster   # the clusters slurmdbd knows"),
    "ESLURM_PARTITION_NOT_AVAIL": (
        "a partition that exists but is inactive or draining (it takes no new jobs)", ("--partition", "-p"),
        "sinfo -s   # each partition's AVAIL column: up, down, drain, inact\n"
        "scontrol show partition PARTITION | grep -E 'PartitionName|State='"),
    "ESLURM_PARTITION_DOWN": (
        "a partition whose state is DOWN", ("--partition", "-p"),
        "sinfo -s   # each partition's AVAIL column: up, down, drain, inact\n"
        "scontrol show partition PARTITION | grep -E 'PartitionName|State='"),
    "ESLURM_MISSING_TIME_LIMIT": (
        "no time limit, where this site requires every job to give one", (),
        "sinfo -o '%P %l %L'   # each partition's maximum (%l) and default (%L) time limits"),
    "ESLURM_X11_NOT_AVAIL": (
        "X11 forwarding (--x11), which this cluster's Slurm does not offer (slurm.conf without PrologFlags=X11) "
        "or which a batch job may not ask for", ("--x11",),
        "scontrol show config | grep -i '^PrologFlags'   # X11 must be among them for srun/salloc --x11"),
}
_NAMED_AFTER = {
    "ESLURM_INVALID_NODE_NAME": "submit with a node the first command lists, or without -w",
    "ESLURM_REQUESTED_NODES_NOT_IN_PARTITION": "name a partition that holds the node (-p), or a node of the job's partition",
    "ESLURM_NODE_NOT_AVAIL": "drop -w so that any free node of the partition is used, or name a node that is up",
    "ESLURM_INVALID_LICENSES": "change -L to a licence the command lists, with a count at most its Total",
    "ESLURM_INVALID_WCKEY": "submit with --wckey= one of those listed (the administrators add one with sacctmgr add user NAME wckey=KEY)",
    "ESLURM_RESERVATION_INVALID": "submit with a reservation the command lists and that names this user or account, or without --reservation",
    "ESLURM_RESERVATION_NOT_USABLE": "submit after its StartTime, or without --reservation",
    "ESLURM_INVALID_TRES": "name only TRES the first command lists (gres/gpu, license/NAME, cpu, mem, node ...)",
    "ESLURM_INVALID_CLUSTER_NAME": "submit with -M naming a cluster the command lists, or without -M",
    "ESLURM_PARTITION_NOT_AVAIL": "submit to a partition whose AVAIL is up; this one takes jobs again once the administrators set it UP",
    "ESLURM_PARTITION_DOWN": "submit to a partition whose AVAIL is up; this one runs jobs again once the administrators set it UP",
    "ESLURM_MISSING_TIME_LIMIT": "submit with a time limit: sbatch --time=HH:MM:SS job.sh, or #SBATCH --time=HH:MM:SS in the script",
    "ESLURM_X11_NOT_AVAIL": ("without PrologFlags=X11, run without --x11 (the administrators enable it; some sites allow "
                             "ssh -X to a node of a running job instead); sbatch jobs never forward X11: use salloc or "
                             "srun --x11 --pty"),
}
_OBJECT_LINE = "jobscript:names-cluster-object"


@rule("ENV130", NAMES_UNKNOWN, "error",
      "Slurm refused the job: it names a node, reservation, licence, wckey, TRES, cluster or partition "
      "this cluster lacks or cannot use now, asks for X11 it does not offer, or gives no time limit where one is "
      "required", impact=7)
def slurm_request_names_unknown(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, slurmctld refusing a job (from sbatch, srun or salloc) because the
        request names something this cluster does not have by that name, or cannot use now:
        "Invalid node name specified", "Requested nodes not in this partition", "Required node
        not available (down, drained or reserved)", "Invalid license specification", "Invalid
        wckey specification", "Requested reservation is invalid", "Requested reservation not
        usable now", "Invalid Trackable RESource (TRES) specification", "Invalid cluster name",
        "Required partition not available (inactive or drain)", "Partition in DOWN state", "X11
        forwarding not available" (no PrologFlags=X11, or --x11 on a batch job); and
        the site's require_timelimit plugin's "Time limit specification required, but not
        provided". Where the paste holds the #SBATCH line or option that names it, the name is
        quoted. An account, partition or QOS the user may not use is slurm-invalid-account's and
        slurm-invalid-qos's; an undefined --constraint feature slurm-constraint-feature-undefined's.

    Why it matters:
        The job never runs and nothing on any node is broken: the name is wrong for this cluster
        (a node or reservation from another site or from last month, a licence or wckey never
        defined, a partition an administrator closed). Resubmitting the same request fails the
        same way; scripts and workflow tools copied between clusters carry such names.

    How to fix:
        List what this cluster has of the thing named (sinfo, scontrol show reservation,
        scontrol show licenses, sacctmgr show wckeys, sacctmgr show tres, sacctmgr show
        clusters), then change the option to one that exists, or drop it; give a time limit
        (--time) where the site requires one.

    References:
        - https://slurm.schedmd.com/sbatch.html (-w, --reservation, -L, --wckey, -M, -p, --time)
        - https://slurm.schedmd.com/sinfo.html
        - https://slurm.schedmd.com/scontrol.html (show reservation, show licenses, show partition)
        - https://slurm.schedmd.com/sacctmgr.html (show wckeys, show tres, show clusters)
        - https://slurm.schedmd.com/job_submit_plugins.html (require_timelimit)
        - https://github.com/SchedMD/slurm/blob/slurm-25-05-8-1/src/common/slurm_errno.c
    """
    said = catalogued(f, NAMES_UNKNOWN)
    refused = next((s for s in said if s.get("key") in _NAMED_THINGS), None)
    if refused is None:
        return
    key = str(refused.get("key"))
    what, options, listing = _NAMED_THINGS[key]
    found = f.get("ticket.symptoms") or []
    named = next((s for s in found if s.get("id") == _OBJECT_LINE
                  and (s.get("option") or s.get("short")) in options and s.get("value")), None)
    message = f"Slurm refused the job (line {refused.get('line')}: \"{_quoted(refused)}\"): it names {what}"
    if key == "ESLURM_MISSING_TIME_LIMIT":
        message = (f"Slurm refused the job (line {refused.get('line')}: \"{_quoted(refused)}\"): it gives {what} "
                   "(the site's require_timelimit job_submit plugin)")
    evidence = told_evidence(refused)
    fix = listing + "\n# then: " + _NAMED_AFTER[key]
    if named is not None:
        option = named.get("option") or named.get("short")
        message += f"; line {named.get('line')} names it: \"{told_text(named)}\""
        fix += f" (line {named.get('line')} sets {option} {named.get('value')})"
        evidence["request.line"] = named.get("line")
    yield Hit(message=message, fix=fix, evidence=evidence)


# ----------------------------------------------------------------------------------------------
# SYS058 slurm-job-dependency-refused
DEPENDENCY = "slurm-job-dependency-refused"
_CIRCULAR = "slurm:ESLURM_CIRCULAR_DEPENDENCY"
# sbatch(1): --parsable prints the job id alone; without it sbatch prints "Submitted batch job N", which a
# script that keeps the whole line passes on as the dependency. afterany is not refused for a job
# slurmctld no longer knows (job_scheduler.c _update_job_dependency: only afterok and afternotok are).
_DEPENDENCY_FIX = (
    "sacct -X -j JOBID --format=JobID,State,End   # the job the dependency names: no line at all means it never existed on this cluster\n"
    "scontrol show config | grep -E 'MinJobAge'   # how long slurmctld keeps an ended job: afterok on one purged since is refused\n"
    "jid=$(sbatch --parsable first.sh) && sbatch --dependency=afterok:$jid second.sh   # --parsable prints the bare job id "
    "(plain sbatch prints 'Submitted batch job N', which is no job id)\n"
    "sbatch --dependency=afterany:JOBID job.sh   # where the first job may have ended long ago: afterany needs no exit state")


@rule("SYS058", DEPENDENCY, "error",
      "Slurm refused the job's dependency: it names a job slurmctld does not know, or is malformed or circular", impact=6)
def slurm_job_dependency_refused(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, slurmctld refusing a job for its -d/--dependency, as sbatch, srun or
        salloc print it: "Job dependency problem" (ESLURM_DEPENDENCY) and "Circular job
        dependency" (ESLURM_CIRCULAR_DEPENDENCY).

    Why it matters:
        The job is not queued, and a workflow that chains jobs stops there. slurmctld refuses a
        dependency it cannot parse (a job id that is not a number, such as the whole line
        "Submitted batch job 123" kept by a script, or an unknown type), an afterok or afternotok
        on a job it does not know (never submitted here, or ended and purged after MinJobAge, so
        its exit state is lost), a job that depends on itself, and a chain that loops back.

    How to fix:
        Keep only the job id when chaining (sbatch --parsable), check that the job named exists
        (sacct -j), and submit the dependent job while the first is still known to slurmctld;
        where the first may have ended long before, afterany is accepted without its exit state.

    References:
        - https://slurm.schedmd.com/sbatch.html (-d, --dependency; --parsable)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_MinJobAge
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/job_scheduler.c (update_job_dependency, _update_job_dependency)
        - https://github.com/aws/aws-parallelcluster/issues/288 (a script passing sbatch's whole output as the job id)
    """
    s = first_catalogued(f, DEPENDENCY)
    if s is None:
        return
    if s.get("id") == _CIRCULAR:
        what = "the dependencies form a loop (this job waits on a job that, through its own dependencies, waits on this one)"
    else:
        what = ("it cannot be parsed (a job id that is not a number, e.g. the whole 'Submitted batch job N' line kept by a "
                "script, or an unknown type), or it is afterok/afternotok on a job slurmctld does not know (never "
                "submitted here, or ended and purged after MinJobAge), or the job depends on itself")
    yield Hit(message=f"Slurm refused the job's --dependency (line {s.get('line')}: \"{_quoted(s)}\"): {what}",
              fix=_DEPENDENCY_FIX, evidence=told_evidence(s))
