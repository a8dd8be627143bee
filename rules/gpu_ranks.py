"""A rank's GPU against the CPUs it was given: how far its CPUs sit from the GPU (NUMA), and how
many DataLoader workers the allocation supports. The thread counts themselves are rules/threads.py's."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_evidence, told_text
from hpcdoctor.rules.threads import _allowed, _share


def _rank_gpu(f: FactView):
    """The GPU this rank uses: the only visible one, or the one at its local rank."""
    gpus = f.gpus()
    env = f.get("env.vars") or {}
    visible = env.get("CUDA_VISIBLE_DEVICES") or env.get("ROCR_VISIBLE_DEVICES") or env.get("HIP_VISIBLE_DEVICES")
    if visible and re.fullmatch(r"\d+", visible.strip()):
        idx = int(visible)
        return next((g for g in gpus if g.get("index") == idx), None)
    rank = f.get("scheduler.local_rank")
    if rank is None:
        rank = f.get("scheduler.launcher_local_rank")
    if isinstance(rank, int) and len(gpus) > 1 and rank < len(gpus):
        return gpus[rank]
    return None


@rule("THR006", "gpu-numa-mismatch", "warning", "a rank's CPUs are far from its GPU", impact=7)
def gpu_numa_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A rank bound to CPUs none of which are local to the GPU it uses (the GPU's NUMA node, from
        sysfs local_cpulist).

    Why it matters:
        Every host-device copy and every kernel launch crosses the socket interconnect; data loading
        threads run on the wrong socket. 10-30% slowdowns are common, more for input-bound jobs.

    How to fix:
        Let Slurm place ranks next to their GPUs: srun --gpus-per-task=1 --gpu-bind=closest
        --cpu-bind=cores, or bind by hand with numactl --cpunodebind=N --membind=N.

    References:
        - 004_3c12714629749d50.txt (NUMA and sockets: keep each rank on the socket that feeds its GPU)
    """
    g = _rank_gpu(f)
    if g is None:
        return
    local = g.get("local_cpus")
    allowed = _allowed(f)
    if not isinstance(local, list) or not local or not allowed:
        return
    if not allowed & set(local):
        from hpcdoctor.parse.cpulist import format_cpulist

        node = g.get("numa_node")
        yield Hit(message=f"this rank runs on CPUs {format_cpulist(allowed)} but its GPU {g.get('index')} is local to "
                          f"CPUs {format_cpulist(local)}" + (f" (NUMA node {node})" if isinstance(node, int) else ""),
                  subject=f"GPU {g.get('index')}",
                  fix="srun --gpus-per-task=1 --gpu-bind=closest --cpu-bind=cores python train.py"
                      + (f"   # or: numactl --cpunodebind={node} --membind={node} python train.py" if isinstance(node, int) else ""),
                  evidence={"affinity.allowed_cpus": format_cpulist(allowed), "gpu.local_cpus": format_cpulist(local)})


@rule("THR007", "dataloader-workers", "advice", "DataLoader workers this allocation supports", impact=3,
      also={"warning": "each GPU rank has a single CPU, torch's pasted warning of more workers than CPUs, or Lightning's of too few beside a GPU the user says waits",
            "info": "read from the user's words (GPU utilisation low or fluctuating): the documented usual cause; Lightning's warning where it counts one CPU"})
def dataloader_workers(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU job: how many DataLoader workers each GPU rank can feed from the CPUs it was given,
        and, at warning level, an allocation of a single CPU per GPU rank. In a pasted log:
        torch's "This DataLoader will create N worker processes in total. Our suggested max
        number of worker in current system is M" (more workers than CPUs) and PyTorch
        Lightning's "does not have many workers which may be a bottleneck" (fewer than 2: its
        heuristic, advice alone, a warning beside a GPU the user says waits, info where it counts
        one CPU, Lightning-AI/pytorch-lightning#19223). A user
        who says GPU utilisation is low or fluctuating ("Volatile GPU-Util is low and fluctuant",
        GPU利用率很低) is answered at severity info with the cause PyTorch's Performance Tuning
        Guide puts first: the training process waiting for data loaded without workers.

    Why it matters:
        Each worker is a process that decodes and augments batches; with too few CPUs per GPU the
        GPU waits for data, with more workers than CPUs they fight for cores. The Alliance guide
        starts from as many workers as cpus-per-task.

    How to fix:
        DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True) with N from the
        message; ask for more CPUs per GPU (--cpus-per-task) if the GPU starves.

    References:
        - 001_dd2fe1913b91ca0a.txt ("a DataLoader with as many workers as you have cpus-per-task")
        - 004_3c12714629749d50.txt (num_workers=2-4 per rank as a start)
        - https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html (Enable asynchronous data loading and augmentation)
    """
    pasted = catalogued(f, "dataloader-workers")
    # What a program printed (torch's or Lightning's worker-count warning) says more than the words.
    printed = [s for s in pasted if s.get("id") not in _UTIL_LOW_SAID]
    if printed:
        yield _pasted_workers(printed[0], starving=any(s.get("id") in _UTIL_LOW_SAID for s in pasted))
        return
    if pasted:
        yield _util_low_said(pasted[0])
        return
    if not f.get("scheduler.in_job") or not f.gpus():
        return
    share, source = _share(f)
    workers = max(0, share - 1)
    if share <= 1:
        yield Hit(message=f"each GPU rank has {share} CPU: DataLoader workers will starve the GPU",
                  fix="#SBATCH --cpus-per-task=8   # then DataLoader(num_workers=7) in the script",
                  evidence={"cpus_per_rank": share, "source": source}, severity="warning")
    else:
        yield Hit(message=f"each GPU rank has {share} CPUs ({source}): use up to {workers} DataLoader workers, "
                          "leaving one CPU for the training loop",
                  fix=f"DataLoader(..., num_workers={workers}, pin_memory=True, persistent_workers=True)", fix_lang="python",
                  evidence={"cpus_per_rank": share, "source": source})


# The user's words that GPU utilisation is low (knowledge/messages/faq_pytorch.toml).
_UTIL_LOW_SAID = frozenset({"faq_pytorch:gpu-utilization-low", "faq_pytorch:gpu-utilization-low-zh"})


def _util_low_said(s: dict) -> Hit:
    # A symptom in words: the cause is the Tuning Guide's usual one, to be confirmed where it runs.
    return Hit(message=f"the user says GPU utilisation is low or fluctuating (line {s.get('line')}: \"{told_text(s)}\"): "
                       "the usual cause (PyTorch Performance Tuning Guide) is the training process waiting for data "
                       "that the DataLoader loads in the main process (num_workers=0) or with too few workers",
               fix=("pip install py-spy && py-spy dump --pid PID   # the training process's stack: frames in the DataLoader or the dataset's "
                    "__getitem__ mean it waits for data\n"
                    "# then DataLoader(..., num_workers=N, pin_memory=True, persistent_workers=True), N up to the "
                    "CPUs per GPU less one"),
               evidence=ticket_evidence(s), severity="info")


def _pasted_workers(s: dict, starving: bool) -> Hit:
    # torch's warning: more workers than CPUs; Lightning's: fewer than 2 where there are more CPUs.
    if s.get("workers") and s.get("suggested"):
        return Hit(message=f"the DataLoader starts {s['workers']} workers on {s['suggested']} CPUs (line {s['line']}): "
                           "they fight for cores and can slow the loader down or hang it",
                   fix=f"DataLoader(..., num_workers={max(1, int(s['suggested']) - 1)})   # at most the CPUs torch "
                       "counted, one left for the training loop (divide among DataLoaders made at once)",
                   fix_lang="python", evidence=ticket_evidence(s), severity="warning")
    # Lightning's is a heuristic (PossibleUserWarning: few workers where it counts more CPUs, whether or
    # not loading is slow; projects filter it as noise): a warning only beside a GPU the user says waits.
    if s.get("cpus") and int(s["cpus"]) <= 1:
        return Hit(message=f"Lightning warns of few DataLoader workers where it counts a single CPU (line {s['line']}): "
                           "there is none to add (Lightning-AI/pytorch-lightning#19223: its suggestion is not checked "
                           "against the CPUs available)",
                   fix="# nothing to change for one CPU; warnings.filterwarnings(\"ignore\", \".*does not have many workers.*\") "
                       "silences it", fix_lang="python", evidence=ticket_evidence(s), severity="info")
    cpus = f"{s['cpus']} CPUs" if s.get("cpus") else "more CPUs"
    n = max(1, int(s["cpus"]) - 1) if s.get("cpus") else "len(os.sched_getaffinity(0)) - 1"
    if "which is the number of cpus" in str(s.get("matched") or s.get("text") or ""):
        # older Lightning counts the machine's CPUs (os.cpu_count()), not those the job may use
        cpus, n = f"{s['cpus']} CPUs in the machine" if s.get("cpus") else cpus, "len(os.sched_getaffinity(0)) - 1"
    if starving:
        return Hit(message=f"the DataLoader runs with fewer than 2 workers on {cpus} (line {s['line']}) and the user "
                           "says GPU utilisation is low: the GPU waits while the training process makes each batch itself",
                   fix=f"DataLoader(..., num_workers={n}, pin_memory=True, persistent_workers=True)",
                   fix_lang="python", evidence=ticket_evidence(s), severity="warning")
    return Hit(message=f"Lightning's hint: the DataLoader runs with fewer than 2 workers on {cpus} (line {s['line']}); "
                       "a bottleneck only where the GPU waits for batches (its utilisation drops between steps)",
               fix=f"DataLoader(..., num_workers={n}, pin_memory=True, persistent_workers=True)   # where "
                   "nvidia-smi dmon shows the GPU idle between steps",
               fix_lang="python", evidence=ticket_evidence(s), severity="advice")
