"""The scheduler allocation this process runs in (Slurm, PBS, LSF) and its launcher ranks."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import ReplaySysRoot, SysRoot

NAME = "scheduler"
TIMEOUT = 1.0


def _int(value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    m = re.match(r"^\s*(\d+)", value)
    return int(m.group(1)) if m else None


def gres_count(value: Optional[str]) -> Optional[int]:
    """GPUs in a Slurm GPU spec: ``4``, ``gpu:4``, ``a100:4``, ``gpu:a100:2,gpu:v100:1``."""
    if not value:
        return None
    total, seen = 0, False
    for part in value.split(","):
        m = re.search(r"(?:^|:)(\d+)(?:\(|$)", part.strip())
        if m:
            total += int(m.group(1))
            seen = True
    return total if seen else None


def tasks_on_first_node(value: Optional[str]) -> Optional[int]:
    """SLURM_TASKS_PER_NODE is ``2(x3),1``: the first group's count is this node's on
    homogeneous jobs, which is what SLURM_NTASKS_PER_NODE would say when it is set."""
    return _int(value)


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    if isinstance(root, ReplaySysRoot) and not root.has_environ():
        return {"scheduler": {"kind": Unknown("the snapshot holds no environment")}}
    env = root.environ()
    sched: Dict[str, Any] = {"kind": None, "in_job": False}
    if env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID"):
        job_gpus = env.get("SLURM_JOB_GPUS") or env.get("SLURM_STEP_GPUS")
        sched.update({
            "kind": "slurm",
            "in_job": True,
            "in_step": env.get("SLURM_STEP_ID") is not None,
            "job_id": env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID"),
            "cpus_per_task": _int(env.get("SLURM_CPUS_PER_TASK")),
            "ntasks": _int(env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS")),
            "tasks_per_node": _int(env.get("SLURM_NTASKS_PER_NODE")) or tasks_on_first_node(env.get("SLURM_TASKS_PER_NODE")),
            "nodes": _int(env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES")),
            "nodelist": env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST"),
            "partition": env.get("SLURM_JOB_PARTITION"),
            "gpus_on_node": _int(env.get("SLURM_GPUS_ON_NODE"))
            if env.get("SLURM_GPUS_ON_NODE") else (len(job_gpus.split(",")) if job_gpus else
                                                    gres_count(env.get("SLURM_GPUS_PER_NODE"))),
            "gpus_per_task": gres_count(env.get("SLURM_GPUS_PER_TASK")),
            "cpu_bind": env.get("SLURM_CPU_BIND_TYPE") or env.get("SLURM_CPU_BIND"),
            "local_rank": _int(env.get("SLURM_LOCALID")),
            "rank": _int(env.get("SLURM_PROCID")),
        })
    elif env.get("PBS_JOBID"):
        sched.update({"kind": "pbs", "in_job": True, "job_id": env["PBS_JOBID"],
                      "cpus_per_task": _int(env.get("NCPUS")),
                      "ntasks": _int(env.get("PBS_NP"))})
    elif env.get("LSB_JOBID"):
        sched.update({"kind": "lsf", "in_job": True, "job_id": env["LSB_JOBID"]})
    # Launchers (torchrun, mpirun) set their own ranks, inside or outside a batch job.
    sched["launcher_local_rank"] = _int(env.get("LOCAL_RANK") or env.get("OMPI_COMM_WORLD_LOCAL_RANK"))
    sched["launcher_local_world_size"] = _int(env.get("LOCAL_WORLD_SIZE") or env.get("OMPI_COMM_WORLD_LOCAL_SIZE"))
    sched["in_container"] = bool(env.get("SINGULARITY_CONTAINER") or env.get("APPTAINER_CONTAINER")) or (
        root.exists("/.dockerenv") or root.exists("/run/.containerenv"))
    return {"scheduler": sched}
