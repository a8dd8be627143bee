"""Node metrics judge the node, not the job that happens to be starting on it.

A Slurm Prolog or Epilog runs with the job's variables (SLURM_JOB_ID, SLURM_JOB_NTASKS, ...), a
systemd timer with none; judged as they come, the same node would show job findings (THR001
omp-threads-unset) after one and not after the other, and its metrics would flip from job to job.
``check --format prometheus`` on a live node therefore sets aside what a scheduler or a launcher
sets for a job, and the device visibility it narrows the node to, for the whole run (the target
interpreter's payload inherits the same environment).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Iterator, List, MutableMapping

JOB_PREFIXES = ("SLURM_", "SBATCH_", "SRUN_", "SALLOC_", "PBS_", "LSB_", "OMPI_", "PMI_", "PMIX_",
                "MPI_", "TORCHELASTIC_", "FLUX_")
JOB_NAMES = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "NODE_RANK",
                       "MASTER_ADDR", "MASTER_PORT", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES",
                       "HIP_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"})
# Where the scheduler is, not what the job is: kept, so a site's own Slurm tools still work.
KEEP = frozenset({"SLURM_CONF"})


def is_job_variable(name: str) -> bool:
    return name not in KEEP and (name in JOB_NAMES or name.startswith(JOB_PREFIXES))


@contextmanager
def node_environment(environ: MutableMapping[str, str] = os.environ) -> Iterator[List[str]]:
    """The job's variables out of ``environ`` while the block runs (their names are yielded), then
    put back as they were."""
    saved = {k: environ[k] for k in list(environ) if is_job_variable(k)}
    for k in saved:
        del environ[k]
    try:
        yield sorted(saved)
    finally:
        environ.update(saved)
