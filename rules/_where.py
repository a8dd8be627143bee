"""Where a job runs, for fixes that differ by place: a larger /dev/shm is a pod volume on
Kubernetes, a run flag for docker or podman, and the site's own setting on a Slurm node or in an
Apptainer container (which shares the node's /dev/shm). Not a rule (the loader skips _modules)."""

from __future__ import annotations

from typing import Optional

from hpcdoctor.facts import FactView

# Kubernetes puts KUBERNETES_SERVICE_HOST (the API service's address) into every container's
# environment (https://kubernetes.io/docs/concepts/containers/container-environment/, "Cluster
# information", read 2026-11-25); Apptainer and Singularity set APPTAINER_CONTAINER /
# SINGULARITY_CONTAINER inside their containers; checks/scheduler.py reads /.dockerenv (docker) and
# /run/.containerenv (podman) into scheduler.in_container.
KUBERNETES_VAR = "KUBERNETES_SERVICE_HOST"
APPTAINER_VARS = ("APPTAINER_CONTAINER", "SINGULARITY_CONTAINER")
PLACES = ("kubernetes", "docker", "site")
# A pasted ticket showing the job ran under Slurm (knowledge/messages/prose.toml).
SLURM_SAID = ("prose:slurm-srun", "prose:slurm-sbatch", "prose:slurm-salloc", "prose:slurm-job-id")


def where(f: FactView) -> Optional[str]:
    """"kubernetes", "docker" (docker or podman), "site" (a Slurm, PBS or LSF job, or Apptainer:
    /dev/shm is the node's) or None when nothing says (a paste without an environment)."""
    env = f.get("env.vars") or {}
    if env.get(KUBERNETES_VAR):
        return "kubernetes"
    if any(env.get(v) for v in APPTAINER_VARS):
        return "site"
    if f.get("scheduler.in_container") is True:
        return "docker"
    if f.get("scheduler.kind") in ("slurm", "pbs", "lsf"):
        return "site"
    return None


# One command per place. Kubernetes: an emptyDir with medium Memory is a tmpfs, and sizeLimit caps
# it (https://kubernetes.io/docs/concepts/storage/volumes/#emptydir, read 2026-11-25); a pod's
# volumes cannot be changed in place, so the workload's pod template is edited.
SHM_BIGGER = {
    "kubernetes": "kubectl edit deployment NAME   # pod template: volumes: [{name: dshm, emptyDir: "
                  "{medium: Memory, sizeLimit: 16Gi}}]; container volumeMounts: [{name: dshm, mountPath: /dev/shm}]",
    "docker": "docker run --shm-size=16g IMAGE   # or --ipc=host; podman run takes the same flags",
    "site": "df -h /dev/shm   # on the compute node: /dev/shm is the node's, its size the site's setting; ask the administrators",
}


def shm_fix(f: FactView, fixes: dict = SHM_BIGGER) -> str:
    """The fix for the place the job runs; every place's line where nothing says which."""
    place = where(f)
    if place:
        return fixes[place]
    return "\n".join(fixes[p] for p in PLACES)
