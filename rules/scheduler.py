"""What the batch scheduler gave the job: a Slurm job that asked for no GPUs on a GPU node."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence

# CUDA's and torch's words for "no GPU visible" (knowledge/messages/), and nvidia-smi's.
_NO_GPU_SEEN = ("torch:no-cuda-gpus", "cuda:cudaErrorNoDevice", "cuda_driver:CUDA_ERROR_NO_DEVICE",
                "nvidia_smi:no-devices-found")
# A ticket that shows the job ran under Slurm (knowledge/messages/prose.toml).
_SLURM_SAID = ("prose:slurm-srun", "prose:slurm-sbatch", "prose:slurm-salloc", "prose:slurm-job-id")

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
        found") where the paste shows the job ran under Slurm (an srun, sbatch or salloc line,
        SLURM_JOB_ID) and nothing in it asks for GPUs (--gres=gpu, --gpus, --gpus-per-*, -G).

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
    none_seen = next((s for s in found if s.get("id") in _NO_GPU_SEEN), None)
    slurm = next((s for s in found if s.get("id") in _SLURM_SAID), None)
    if none_seen is None or slurm is None or any(s.get("id") == "prose:slurm-gpus-requested" for s in found):
        return
    yield Hit(message=f"the job ran under Slurm (line {slurm.get('line')}: \"{str(slurm.get('text', '')).strip()[:80]}\") "
                      f"and asked it for no GPUs, and CUDA saw none (line {none_seen.get('line')}: "
                      f"\"{str(none_seen.get('text', '')).strip()[:100]}\"): Slurm gives a job only the GPUs it requests",
              fix=_FIX, evidence={**told_evidence(none_seen), "slurm.line": slurm.get("line")})
