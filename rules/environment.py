"""The job's environment: launch settings, communication library variables, where it runs."""

from __future__ import annotations

import shlex

from hpcdoctor.engine import Hit, rule
from hpcdoctor.rules._common import version_of


def _torch_at_least(f, version: str) -> bool:
    v = version_of(str(f.get("torch.version")).split("+")[0]) if f.get("torch.version") is not None else None
    return v is not None and v >= version_of(version)


@rule("ENV001", "nccl-async-error-handling", "advice", "the old NCCL_ASYNC_ERROR_HANDLING name", impact=4)
def nccl_async_error_handling(f):
    """
    What it detects:
        NCCL_ASYNC_ERROR_HANDLING set while TORCH_NCCL_ASYNC_ERROR_HANDLING is not, with a torch
        (2.2 or newer) that reads only the new name.

    Why it matters:
        The setting the user relies on to turn a hung collective into an error is ignored (torch
        only warns once that the name is deprecated): a failed rank leaves the others hanging until
        the job's time limit.

    How to fix:
        export TORCH_NCCL_ASYNC_ERROR_HANDLING=1 (and drop the old name).

    References:
        - https://pytorch.org/docs/stable/torch_nccl_environment_variables.html
    """
    env = f["env.vars"]
    if env.get("NCCL_ASYNC_ERROR_HANDLING") is not None and env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING") is None \
            and _torch_at_least(f, "2.2"):
        value = env["NCCL_ASYNC_ERROR_HANDLING"]
        yield Hit(message=f"NCCL_ASYNC_ERROR_HANDLING={value} is the old name; torch {f.get('torch.version')} reads "
                          "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                  fix=f"export TORCH_NCCL_ASYNC_ERROR_HANDLING={shlex.quote(str(value))}",
                  evidence={"env.NCCL_ASYNC_ERROR_HANDLING": value}, env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": value})


@rule("ENV002", "nccl-debug-left-on", "advice", "NCCL debug logging left on", impact=2)
def nccl_debug_left_on(f):
    """
    What it detects:
        NCCL_DEBUG set to INFO or TRACE outside a debugging session.

    Why it matters:
        Every rank prints its topology, channels and every communicator init; on hundreds of ranks
        the logs grow by megabytes per step of initialisation and hide the lines that matter, and
        TRACE slows the collectives themselves.

    How to fix:
        export NCCL_DEBUG=WARN (or unset it); turn INFO on only to debug a hang or a slow ring.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug
    """
    level = (f["env.vars"].get("NCCL_DEBUG") or "").upper()
    if level in ("INFO", "TRACE"):
        yield Hit(message=f"NCCL_DEBUG={level}: every rank logs topology and communicator setup",
                  fix="export NCCL_DEBUG=WARN", evidence={"env.NCCL_DEBUG": level})


@rule("ENV003", "python-env-on-parallel-fs", "advice", "the Python environment lives on a parallel filesystem", impact=5)
def python_env_on_parallel_fs(f):
    """
    What it detects:
        torch imported from a network or parallel filesystem (Lustre, GPFS, NFS, BeeGFS, CephFS)
        outside a container.

    Why it matters:
        Importing torch opens thousands of small files; on a parallel filesystem every rank of every
        node does that against the metadata servers at the same moment. Start-up takes minutes at
        scale and slows the filesystem for everyone.

    How to fix:
        Pack the environment into a container image (Apptainer/Singularity) or a squashfs, or copy
        it to node-local storage ($TMPDIR) at job start.

    References:
        - 003_ff12095d05d26000.txt (containers for Python environments on EuroHPC systems)
    """
    t = f["torch"]
    fs = t.get("site_fs") or {}
    if fs.get("network") and not f.get("scheduler.in_container"):
        yield Hit(message=f"torch loads from {fs.get('fstype')} ({fs.get('mount_point')}): every rank's import hits the "
                          "filesystem's metadata servers",
                  fix="apptainer build env.sif ...; or copy the venv to $TMPDIR at job start",
                  evidence={"torch.site_fs": fs})


@rule("ENV004", "login-node", "advice", "running on a login node", impact=5)
def login_node(f):
    """
    What it detects:
        No batch job and no GPU: hpcdoctor (and presumably the user's work) runs on a login or
        front-end node.

    Why it matters:
        Login nodes are shared, have no GPUs and often a different CPU; what is checked here says
        little about the compute nodes, and heavy work there disturbs every user.

    How to fix:
        Run the check where the job runs: srun --pty -p <partition> --gpus=1 hpcdoctor check, or as
        a step of the batch script.

    References:
        - 000_6e25303b50457a54.txt (run work on compute nodes through the scheduler)
    """
    in_job = f["scheduler.in_job"]
    gpus = f["gpus"]
    if not in_job and not gpus and f.get("scheduler.launcher_local_rank") is None:
        yield Hit(message="no batch job and no GPU here: this looks like a login or front-end node",
                  fix="srun --pty -p <gpu-partition> --gpus=1 hpcdoctor check",
                  evidence={"scheduler.in_job": False, "gpus": 0})
