"""What the batch scheduler gave the job: a Slurm job that asked for no GPUs on a GPU node."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import qstat_unfolded, stated, told_evidence, told_text
from hpcdoctor.rules._where import SLURM_SAID

# CUDA's and torch's words for "no GPU visible" (knowledge/messages/), and nvidia-smi's.
_NO_GPU_SEEN = ("torch:no-cuda-gpus", "cuda:cudaErrorNoDevice", "cuda_driver:CUDA_ERROR_NO_DEVICE",
                "nvidia_smi:no-devices-found",
                # the user saying so, or showing CUDA_VISIBLE_DEVICES empty (knowledge/messages/faq_slurm.toml)
                "faq_slurm:slurm-job-no-gpu-said", "faq_slurm:cuda-visible-devices-empty-said")

_FIX = ("scontrol show job \"$SLURM_JOB_ID\" | grep -iE 'tres|gres'   # gres/gpu absent: the job asked for no GPU\n"
        "srun --gpus=1 nvidia-smi -L   # or: #SBATCH --gres=gpu:1 in the batch script; the count your job needs")


@rule("ENV010", "slurm-job-without-gpus", "error", "a Slurm job that asked for no GPUs sees none", impact=9)
def slurm_job_without_gpus(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A Slurm job on a node with NVIDIA GPUs on its PCI bus that sees none of them, and whose
        environment shows no GPU allocation (no SLURM_GPUS_ON_NODE, SLURM_JOB_GPUS or
        SLURM_STEP_GPUS). In a pasted ticket: CUDA's or torch's "no GPU" ("No CUDA GPUs are
        available", cudaErrorNoDevice, CUDA_ERROR_NO_DEVICE, nvidia-smi's "No devices were
        found", the user saying the job sees no GPU, CUDA_VISIBLE_DEVICES shown empty) where the
        paste shows the job ran under Slurm (an srun, sbatch or salloc line, SLURM_JOB_ID) and
        nothing in it asks for GPUs (--gres=gpu, --gpus, --gpus-per-*, -G).

    Why it matters:
        Slurm gives a job only the GPUs it requests; on clusters that constrain devices with
        cgroups (ConstrainDevices=yes) the others are not even visible, and CUDA reports no device.
        The node is healthy: reinstalling drivers or CUDA changes nothing.

    How to fix:
        Request GPUs in the job: srun --gpus=N (or --gres=gpu:N), or #SBATCH --gres=gpu:N in the
        batch script, as the site's documentation names its GPU type; check the allocation with
        scontrol show job.

    References:
        - https://slurm.schedmd.com/gres.html
        - https://slurm.schedmd.com/cgroup.conf.html (ConstrainDevices)
        - https://github.com/GoogleCloudPlatform/cluster-toolkit/issues/2634 (srun --gpus made the A100s visible)
    """
    if f.get("scheduler.kind") == "slurm" and f.get("scheduler.in_job"):
        on_bus, gpus = f.get("nvidia.pci_devices"), f.get("gpus")
        if (isinstance(on_bus, int) and on_bus > 0 and isinstance(gpus, list) and not gpus
                and not f.get("scheduler.gpus_on_node")):
            yield Hit(message=f"Slurm job {f.get('scheduler.job_id')} asked for no GPUs: the node has {on_bus} NVIDIA GPU(s) "
                              "on its PCI bus and the job sees none of them",
                      fix=_FIX, evidence={"scheduler.job_id": f.get("scheduler.job_id"), "nvidia.pci_devices": on_bus,
                                          "scheduler.gpus_on_node": f.get("scheduler.gpus_on_node")})
            return
    found = f.get("ticket.symptoms") or []
    none_seen = next((s for s in found if s.get("id") in _NO_GPU_SEEN
                      and (not s["id"].startswith("faq_") or stated(s))), None)
    slurm = next((s for s in found if s.get("id") in SLURM_SAID), None)
    if none_seen is None or slurm is None or any(s.get("id") == "prose:slurm-gpus-requested" for s in found):
        return
    yield Hit(message=f"the job ran under Slurm (line {slurm.get('line')}: \"{str(slurm.get('text', '')).strip()[:80]}\") "
                      f"and asked it for no GPUs, and CUDA saw none (line {none_seen.get('line')}: "
                      f"\"{str(none_seen.get('text', '')).strip()[:100]}\"): Slurm gives a job only the GPUs it requests",
              fix=_FIX, evidence={**told_evidence(none_seen), "slurm.line": slurm.get("line")})


# Slurm's refusals of a GRES (GPU) request (knowledge/messages/slurm.toml, slurm_strerror's table):
# what each says of the request, and what to look at.
_GRES_REFUSED = {
    "slurm:ESLURM_INVALID_GRES": "the cluster defines no GRES of the name or type the job asked for (GresTypes and "
                                 "the nodes' Gres= in slurm.conf), or the request's form is wrong",
    "slurm:ESLURM_UNSUPPORTED_GRES": "the cluster's SelectType plugin cannot honour the option: --gpus, --gpus-per-* "
                                     "and --cpus-per-gpu need select/cons_tres; --gres=gpu:N works with the others",
    "slurm:ESLURM_INVALID_GRES_TYPE": "the GRES request mixes a typed form (gpu:a100:1) and an untyped one (gpu:1)",
    "slurm:ESLURM_DUPLICATE_GRES": "the job asks for the same GRES twice",
    "slurm:ESLURM_INSUFFICIENT_GRES": "a job step asked for more GPUs than the job's allocation holds",
    "slurm:ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE": "no node in the partitions (and QOS, account) the job may use has "
                                                      "the GPUs it asked for together with its CPUs and memory: GPU nodes "
                                                      "are often in a partition of their own, named with --partition",
    "pbs_sched_comment:never-run-insufficient-ngpus": "PBS's scheduler found no node with as many GPUs (ngpus) as a "
                                                       "chunk of the job asks for: it can never run as asked",
    "flux:limit-job-size-ngpus-over": "Flux's job-size policy (of the instance, or of the queue named) allows fewer "
                                      "GPUs per job than the request asks for",
}
_REQUEST_FIX = ("sinfo -o '%20P %10a %.5D %30G'   # the partitions and the GRES their nodes offer (gpu:TYPE:COUNT)\n"
                "scontrol show partition | grep -E 'PartitionName|QoS|AllowAccounts|AllowQos'   # what a GPU partition asks of a job\n"
                "scontrol show config | grep -E 'SelectType|GresTypes'   # select/cons_tres is needed for --gpus and --gpus-per-*")

# pbsnodes(8B) -av: each vnode's resources_available; qstat -f: the job's Resource_List and comment.
_PBS_GPU_FIX = ("pbsnodes -av | grep -E '^[^ ]|resources_available\\.ngpus'   # the GPUs each node offers\n"
                "qstat -f JOBID | grep -E 'Resource_List|comment'   # what the job asks for\n"
                "qsub -l select=1:ncpus=8:ngpus=1 job.sh   # chunks no larger in ngpus than one node holds")
# flux-queue(1) list: each queue's limits; flux-resource(1) list: the GPUs the instance holds; flux-run(1) -g: GPUs per task.
_FLUX_GPU_FIX = ("flux queue list   # each queue's job-size limits, GPUs among them\n"
                 "flux resource list   # the GPUs this instance holds\n"
                 "flux run -N1 -n1 -g1 nvidia-smi -L   # a request within the limit (-g: GPUs per task; -q another queue)")


@rule("ENV011", "slurm-gpu-request-rejected", "error", "Slurm refused the job's GPU (GRES) request", impact=8)
def slurm_gpu_request_rejected(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, srun, sbatch or salloc refusing a job for its GPU request: Slurm's own
        errors for GRES ("Invalid generic resource (gres) specification", "Requested GRES option
        unsupported by configured SelectType plugin", a typed and untyped GRES mixed, a GRES
        given twice, a step asking for more than its allocation) and "Requested node
        configuration is not available" where the paste shows the job asked for GPUs
        (--gres=gpu, --gpus, --gpus-per-node/task/socket, -G).
        PBS's scheduler comment "Can Never Run: Insufficient amount of resource: ngpus (R: A: T:)".
        Flux's limit-job-size plugin refusing a GPU request over its policy: "requested ngpus (N)
        exceeds policy limit of M".

    Why it matters:
        The job never starts; nothing on a node is broken. The request does not fit the cluster:
        the GPUs live in a partition (with its own QOS or account) the job did not name, the
        cluster calls its GPUs by a type the request does not use, or its scheduler plugin does
        not support the --gpus options.

    How to fix:
        Ask for GPUs as the site defines them: sinfo lists each partition's GRES (gpu:TYPE:COUNT),
        scontrol show partition the QOS and accounts a GPU partition requires; name them
        (--partition, --qos, --account) with --gres=gpu:N or --gpus=N. Where SelectType is not
        select/cons_tres, use --gres=gpu:N instead of --gpus.

    References:
        - https://slurm.schedmd.com/gres.html
        - https://slurm.schedmd.com/srun.html (--gpus, --gres, --gpus-per-node)
        - https://github.com/SchedMD/slurm/blob/master/src/common/slurm_errno.c (the messages)
    """
    found = f.get("ticket.symptoms") or []
    asked = next((s for s in found if s.get("id") == "prose:slurm-gpus-requested"), None)
    for s in found:
        sid = s.get("id")
        if sid not in _GRES_REFUSED:
            continue
        if sid == "slurm:ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE" and asked is None:
            continue  # also any request too large in CPUs, memory or nodes: the GPUs must be shown asked for
        if sid.startswith("pbs_sched_comment:"):
            yield Hit(message=f"PBS will never run the job (line {s.get('line')}: \"{qstat_unfolded(s)}\"): {_GRES_REFUSED[sid]}",
                      fix=_PBS_GPU_FIX, evidence=told_evidence(s))
            return
        if sid.startswith("flux:"):
            yield Hit(message=f"Flux refused the job (line {s.get('line')}: \"{told_text(s)}\"): {_GRES_REFUSED[sid]}",
                      fix=_FLUX_GPU_FIX, evidence=told_evidence(s))
            return
        why = f" (the GPU request, line {asked.get('line')})" if asked is not None else ""
        yield Hit(message=f"Slurm refused the job (line {s.get('line')}: \"{told_text(s)}\"): "
                          f"{_GRES_REFUSED[sid]}{why}",
                  fix=_REQUEST_FIX, evidence=told_evidence(s))
        return


@rule("ENV012", "slurm-gres-count-mismatch", "error", "Slurm drained a node that reported fewer GPUs than configured",
      impact=9)
def slurm_gres_count_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the reason slurmctld gives a node it drained because its slurmd found
        fewer GRES (GPUs) than slurm.conf configures for it: "gres/gpu count reported lower than
        configured (0 < 8)", or "gpu:TYPE count too low (N < M)" (scontrol show node, sinfo -R).

    Why it matters:
        The node takes no jobs until an administrator resumes it. slurmd counts the GPUs when it
        starts: a driver not yet loaded then (slurmd started before the NVIDIA module or
        persistence daemon), a GPU fallen off the bus, or gres.conf naming device files or
        AutoDetect that do not match the node gives fewer than slurm.conf says.

    How to fix:
        Compare what the driver sees (nvidia-smi -L) with what slurmd detects (slurmd -G); when
        the driver sees every GPU, restart slurmd and resume the node; when it does not, the
        node's GPUs or driver need attention first (gpu-driver-unusable, gpu-fallen-off-bus).

    References:
        - https://slurm.schedmd.com/gres.html
        - https://slurm.schedmd.com/scontrol.html (State=RESUME)
        - https://github.com/SchedMD/slurm/blob/master/src/interfaces/gres.c (the drain reasons)
    """
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") not in ("slurm:gres-count-reported-lower", "slurm:gres-count-too-low"):
            continue
        gres, found, configured = s.get("gres") or "gres/gpu", s.get("found"), s.get("configured")
        yield Hit(message=f"slurmd reported {found} {gres} where slurm.conf configures {configured}, so Slurm drained the node "
                          f"(line {s.get('line')}: \"{told_text(s)}\")",
                  fix="nvidia-smi -L   # the GPUs the driver sees now\n"
                      "sudo slurmd -G   # the GRES slurmd detects (gres.conf, AutoDetect); each must be there\n"
                      "sudo systemctl restart slurmd && sudo scontrol update nodename=\"$(hostname -s)\" state=resume"
                      "   # administrators, once the driver sees every GPU",
                  evidence=told_evidence(s))
        return
