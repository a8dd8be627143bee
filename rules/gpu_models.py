"""The GPUs one job runs on, when they are not all of one model: a synchronous step waits for the
slowest of them."""

from __future__ import annotations

import re
from typing import Dict, Iterator, List

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView

_SPACES = re.compile(r"\s{1,8}")
# Families whose messages show a job spread over several GPUs (collectives, a distributed launcher).
_MULTI_GPU_FAMILIES = ("nccl", "elastic", "faq_distributed")


def _visible(f: FactView, gpus: List[Dict]) -> List[Dict]:
    """The GPUs CUDA_VISIBLE_DEVICES leaves to the job (indexes or GPU- UUIDs); all of them when it
    is unset or names something else (MIG instances)."""
    env = f.get("env.vars") or {}
    value = env.get("CUDA_VISIBLE_DEVICES")
    if value is None or not value.strip():
        return gpus
    wanted = [v.strip() for v in value.split(",") if v.strip()]
    if all(v.isdigit() for v in wanted):
        keep = {int(v) for v in wanted}
        return [g for g in gpus if g.get("index") in keep]
    if all(v.startswith("GPU-") for v in wanted):
        return [g for g in gpus if any(str(g.get("uuid") or "").startswith(v) for v in wanted)]
    return gpus


def _multi_gpu_job(f: FactView) -> bool:
    sched = f.get("scheduler") or {}
    env = f.get("env.vars") or {}
    counts = [sched.get("tasks_per_node"), sched.get("launcher_local_world_size")]
    try:
        counts.append(int(env.get("WORLD_SIZE") or 0))
    except ValueError:
        pass
    if any(isinstance(n, int) and n > 1 for n in counts):
        return True
    return any(str(s.get("family")) in _MULTI_GPU_FAMILIES for s in f.get("ticket.symptoms") or [])


@rule("GPU035", "mixed-gpu-models-in-job", "warning",
      "the job's GPUs are of different models: collectives and synchronous steps run at the slowest one's pace",
      impact=5, also={"info": "GPUs of different models on the node, and nothing shows a job spread over them"})
def mixed_gpu_models_in_job(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The GPUs a job can use (the node's, or a pasted nvidia-smi listing, less those
        CUDA_VISIBLE_DEVICES hides) are of more than one model: an A100 beside a V100, an RTX
        4090 beside a 3090, a 40 GB card beside an 80 GB one. A warning where the job spans them
        (WORLD_SIZE, LOCAL_WORLD_SIZE, Slurm's tasks per node, NCCL or a distributed launcher in
        the paste); info where nothing shows that it does.

    Why it matters:
        Data-parallel training (DDP, DeepSpeed ZeRO, FSDP) runs each step in lock step: every
        rank waits in the gradient all-reduce, and ZeRO-3 in the parameter all-gather of every
        layer, for the slowest GPU, and memory is sharded evenly, so the smallest card sets the
        batch. The faster cards idle at full reported utilisation and low power.

    How to fix:
        Run the job on GPUs of one model: ask the scheduler for a GPU type (Slurm
        --gres=gpu:<type>:N, or a node feature with --constraint), or hide the odd one with
        CUDA_VISIBLE_DEVICES.

    References:
        - https://slurm.schedmd.com/gres.html
        - https://slurm.schedmd.com/sbatch.html#OPT_constraint
        - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars (CUDA_VISIBLE_DEVICES)
        - https://deepspeed.readthedocs.io/en/latest/zero3.html
    """
    gpus = _visible(f, f.gpus())
    models: Dict[str, List] = {}
    for g in gpus:
        name = _SPACES.sub(" ", str(g.get("name") or "")).strip()
        if name:
            models.setdefault(name, []).append(g.get("index"))
    if len(models) < 2:
        return
    said = "; ".join(f"{name}: GPU {', '.join(str(i) for i in idx)}" for name, idx in list(models.items())[:4])
    keep = max(models.items(), key=lambda kv: len(kv[1]))
    ids = ",".join(str(i) for i in keep[1] if i is not None)
    multi = _multi_gpu_job(f)
    yield Hit(message=f"the job's GPUs are of {len(models)} models ({said})"
                      + (": a synchronous step (DDP, ZeRO) waits for the slowest, and memory is sharded to the smallest"
                         if multi else ": a job spread over them runs at the slowest one's pace"),
              severity="warning" if multi else "info",
              fix=("nvidia-smi -L   # each GPU's model and UUID\n"
                   f"export CUDA_VISIBLE_DEVICES={ids or '0'}   # only the {keep[0]} GPUs\n"
                   "scontrol show node \"$SLURMD_NODENAME\" | grep -i gres   # Slurm: the GPU types this site names, then "
                   "sbatch --gres=gpu:TYPE:N (or --constraint=FEATURE) for GPUs of one type"),
              evidence={"gpus.models": sorted(models)})
