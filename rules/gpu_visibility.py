"""The GPUs a process sees: none at all, or fewer than the index it asks for. CUDA (and HIP) number
only the GPUs that CUDA_VISIBLE_DEVICES (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES), the
scheduler's device cgroup and the container leave to the process, from 0. Read from the emitters'
own words (knowledge/messages/: cuda, cuda_driver, hip, torch, xla, nccl) and, on a node, from the
job's variable against the GPUs the node has."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, told_evidence, told_text
from hpcdoctor.rules.gpu_access import libs_not_bound_in_container
from hpcdoctor.rules.rocm_support import rocm_gpu_not_in_release
from hpcdoctor.rules.scheduler import slurm_job_without_gpus

NO_GPU = "no-gpu-visible"
BEYOND = "gpu-index-beyond-visible"

# Pasted messages whose rule names the cause of "no GPU" itself: with one of them the cause has its
# finding, and "the process sees no GPU" adds nothing (one cause, one finding).
_CAUSE_NAMED = frozenset({"gpu-driver-unusable", "torch-cpu-only", "gpu-fallen-off-bus", "driver-too-old",
                          "gpu-device-permission-denied", "nvidia-container-toolkit-missing",
                          "rocm-kfd-permission-denied", "torch-rocm-build-on-nvidia", "torch-cuda-build-on-amd",
                          "jax-without-cuda", "mps-client-cannot-connect", "driver-predates-gpu"})

# CUDA's rule for the variable (CUDA C++ Programming Guide, "CUDA Environment Variables"): a comma-
# separated sequence of indices, GPU-UUIDs (a unique prefix will do) or MIG-UUIDs; the devices listed
# before the first invalid entry stay visible, the rest are hidden. An index is read as strtoul reads
# it (pytorch/pytorch#84879: "1gpu2" is 1), so only its leading digits count.
_INDEX = re.compile(r"\d{1,9}")

_NO_GPU_FIX = (
    "echo \"CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-(unset)}\"   # empty, -1, NoDevFiles, or an index or UUID "
    "the node lacks: CUDA then numbers no GPU\n"
    "nvidia-smi -L   # the GPUs the driver sees here, with their indices and UUIDs; an error or no GPU here is the "
    "driver's, the job's allocation's or the container's, not the variable's\n"
    "unset CUDA_VISIBLE_DEVICES   # or export CUDA_VISIBLE_DEVICES=0 (an index nvidia-smi -L lists), before the "
    "program starts: a script that sets it in os.environ after importing torch is too late or wrong\n"
    "scontrol show job \"$SLURM_JOB_ID\" | grep -iE 'tres|gres'   # in a Slurm job: no gres/gpu, the job asked for "
    "none (srun --gpus=1)\n"
    "docker run --rm --gpus all IMAGE nvidia-smi -L   # in a container: docker needs --gpus, apptainer exec --nv")

# The same words from a ROCm (HIP) build ("no ROCm-capable device is detected", hipErrorNoDevice):
# the NVIDIA commands above do not exist on an AMD node, and ROCm adds a cause of its own, a user
# outside the group that owns /dev/kfd (ROCm's installation prerequisites).
_NO_GPU_FIX_ROCM = (
    "echo \"HIP_VISIBLE_DEVICES=${HIP_VISIBLE_DEVICES-(unset)} ROCR_VISIBLE_DEVICES=${ROCR_VISIBLE_DEVICES-(unset)}\""
    "   # an index the node lacks: ROCm then exposes no GPU\n"
    "rocm-smi --showuniqueid   # the AMD GPUs the driver sees here, numbered from 0; an error or none here is the "
    "driver's, the job's allocation's or the container's, not the variable's\n"
    "ls -l /dev/kfd /dev/dri/render*; id -nG   # the devices belong to group render (or video): a user in neither "
    "sees no GPU\n"
    "sudo usermod -a -G render,video \"$USER\"   # ROCm's prerequisite; it takes effect at the next login\n"
    "scontrol show job \"$SLURM_JOB_ID\" | grep -iE 'tres|gres'   # in a Slurm job: no gres/gpu, the job asked for "
    "none (srun --gpus=1)\n"
    "docker run --rm --device /dev/kfd --device /dev/dri IMAGE rocminfo   # in a container: docker needs both "
    "devices, apptainer exec --rocm")

_BEYOND_FIX = (
    "python3 -c 'import torch; print(torch.cuda.device_count())'   # the GPUs this process sees: valid indices are "
    "0 to count-1\n"
    "echo \"CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-(unset)} LOCAL_RANK=${LOCAL_RANK-} "
    "SLURM_LOCALID=${SLURM_LOCALID-}\"   # a visible list renumbers its GPUs from 0: with CUDA_VISIBLE_DEVICES=3 "
    "the GPU is cuda:0\n"
    "# in the program: torch.device('cuda', int(os.environ.get('LOCAL_RANK', 0))), not a fixed cuda:N; cuda:0 where "
    "the launcher gives each rank one GPU of its own\n"
    "nvidia-smi -L | wc -l   # start no more ranks per node than this (torchrun --nproc_per_node, srun "
    "--ntasks-per-node, accelerate --num_processes)")


def _rocm_gpu_named_unsupported(f: FactView) -> bool:
    try:
        return any(True for _ in rocm_gpu_not_in_release(f))
    except MissingFact:
        return False


def _cause_named(f: FactView) -> bool:
    return any(_CAUSE_NAMED & set(s.get("rules") or []) for s in f.get("ticket.symptoms") or [])


def _entry_gpu(entry: str, gpus: List[dict]) -> Optional[dict]:
    """The node's GPU one entry names, or None. Raises LookupError where the facts cannot tell (a
    MIG-UUID, a GPU-UUID where the facts hold no UUIDs)."""
    digits = _INDEX.match(entry)
    if digits:
        return next((g for g in gpus if g.get("index") == int(digits.group())), None)
    if entry.startswith("GPU-"):
        uuids = [str(g.get("uuid") or "") for g in gpus]
        if not all(u.startswith("GPU-") for u in uuids):
            raise LookupError("the node's GPU UUIDs were not recorded")
        matches = [g for g, u in zip(gpus, uuids) if u.startswith(entry)]
        return matches[0] if len(matches) == 1 else None
    if entry.startswith("MIG-"):
        raise LookupError("MIG instances are not among the facts")
    return None


def _visible(value: str, gpus: List[dict]) -> Tuple[List[dict], Optional[str], List[dict]]:
    """The node's GPUs that CUDA numbers under ``value``, the first entry that names none (None when
    every entry names one), and the node's GPUs listed after that entry, which it hides."""
    entries = [e.strip() for e in value.split(",")]
    seen: List[dict] = []
    for at, entry in enumerate(entries):
        gpu = _entry_gpu(entry, gpus)
        if gpu is None or gpu in seen:
            # a GPU named twice leaves CUDA none (torch's _parse_visible_devices mirrors it)
            if gpu is not None:
                return [], entry, []
            later: List[dict] = []
            for rest in entries[at + 1:]:
                try:
                    g = _entry_gpu(rest, gpus)
                except LookupError:
                    g = None
                if g is not None and g not in seen and g not in later:
                    later.append(g)
            return seen, entry, later
        seen.append(gpu)
    return seen, None, []


def _names(gpus: List[dict]) -> str:
    return ", ".join(f"{g.get('index')}: {g.get('name') or 'GPU'}"
                     + (f" ({g.get('uuid')})" if str(g.get("uuid") or "").startswith("GPU-") else "") for g in gpus)


def _hidden_live(f: FactView) -> Iterator[Hit]:
    """The job's variable against the node's GPUs: NVML lists every GPU of the node (or of the job's
    device cgroup) whatever CUDA_VISIBLE_DEVICES says, so the two can be compared."""
    env = f.get("env.vars")
    gpus = f.get("gpus")
    if not isinstance(env, dict) or not isinstance(gpus, list) or not gpus:
        return
    nvidia = [g for g in gpus if g.get("vendor") == "nvidia"]
    value = env.get("CUDA_VISIBLE_DEVICES")
    if nvidia and isinstance(value, str):
        try:
            seen, bad, hidden = _visible(value, nvidia)
        except LookupError:
            return
        shown = repr(value) if value.strip() else "empty"
        named = f"{bad!r}" if bad else "an empty entry"
        evidence = {"env.vars.CUDA_VISIBLE_DEVICES": value, "gpus": [g.get("index") for g in nvidia]}
        if bad is not None and not seen:
            yield Hit(message=f"CUDA_VISIBLE_DEVICES is {shown}: CUDA stops at {named}, which names no GPU of this node "
                              f"(or one named twice), so the job sees no GPU; the node has {len(nvidia)}: "
                              f"{_names(nvidia)}",
                      fix=_NO_GPU_FIX, evidence=evidence)
        elif hidden:
            yield Hit(message=f"CUDA_VISIBLE_DEVICES={value!r}: CUDA stops at {named}, which names no GPU of this node, "
                              f"so it hides the GPUs listed after it ({_names(hidden)}); the job sees "
                              f"{len(seen)} of the node's {len(nvidia)}",
                      fix=_NO_GPU_FIX, evidence=evidence, severity="warning")
        return
    amd = [g for g in gpus if g.get("vendor") == "amd"]
    for var in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        value = env.get(var)
        entries = [e.strip() for e in value.split(",")] if isinstance(value, str) and value.strip() else []
        # ROCm's documents say what an index names (a device of the list); what an empty or invalid
        # entry does they do not, so only indices past the count are judged.
        if amd and entries and all(e.isdigit() for e in entries) and all(int(e) >= len(amd) for e in entries):
            yield Hit(message=f"{var}={value!r} names only GPU indices past this node's {len(amd)} AMD GPU(s) "
                              f"({_names(amd)}): ROCm exposes none of them to the job",
                      fix=f"rocm-smi --showuniqueid   # the node's AMD GPUs, numbered from 0\n"
                          f"export {var}=0   # an index below {len(amd)}, or unset {var}",
                      evidence={f"env.vars.{var}": value, "gpus": [g.get("index") for g in amd]})
            return


@rule("GPU037", NO_GPU, "error", "the process sees no GPU: CUDA numbers none of the node's GPUs for it", impact=8,
      also={"warning": "CUDA_VISIBLE_DEVICES hides some of the node's GPUs behind an entry that names none",
            "info": "a pasted message says the process saw no GPU; it does not say why"})
def no_gpu_visible(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On a node (or its snapshot): the job's CUDA_VISIBLE_DEVICES leaves it none of the node's
        NVIDIA GPUs (an error) or hides some of them (a warning): empty, -1, NoDevFiles, an index
        past the node's count or a GPU UUID the node does not have, as the first entry (or a later
        one, which hides the GPUs listed after it); for AMD GPUs, ROCR_VISIBLE_DEVICES or
        HIP_VISIBLE_DEVICES naming only indices past the node's count. MIG UUIDs are not judged.
        In a pasted ticket, at info: an emitter's own words that the process saw no GPU (torch's
        "No CUDA GPUs are available", cudaErrorNoDevice and CUDA_ERROR_NO_DEVICE "no CUDA-capable
        device is detected" through torch, CuPy, TensorFlow's and JAX's cuInit, XLA's "No visible
        GPU devices."). Those words do not say why, so they are only quoted, and the finding is
        left to slurm-job-without-gpus, container-nvidia-libs-not-bound or a driver rule where the
        paste shows that cause.

    Why it matters:
        CUDA numbers only the GPUs the process may see; with none, torch.cuda.is_available() is
        False and a program either stops or silently runs on the CPU. A healthy node shows the same
        words when the variable is wrong, the scheduler gave the job no GPU, or the container was
        started without one, so reinstalling the driver or CUDA changes nothing.

    How to fix:
        Compare CUDA_VISIBLE_DEVICES with nvidia-smi -L (indices and UUIDs), then unset it or set
        it to a GPU the node has, before the program starts. In a Slurm job ask for GPUs (srun
        --gpus=N); in a container pass them (docker --gpus, apptainer --nv). ROCm's words ("no
        ROCm-capable device is detected") get ROCm's commands: HIP_VISIBLE_DEVICES and
        ROCR_VISIBLE_DEVICES against rocm-smi, the render group that owns /dev/kfd, and docker's
        --device /dev/kfd --device /dev/dri.

    References:
        - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars (CUDA_VISIBLE_DEVICES: indices, UUIDs, MIG; the devices before the first invalid entry stay visible)
        - https://github.com/pytorch/pytorch/blob/01a6a16d9bb6424c034f5623c46bfd08ec21613b/c10/cuda/CUDAFunctions.cpp (cudaErrorNoDevice counts 0 devices; "No CUDA GPUs are available")
        - https://github.com/openxla/xla/blob/001918b7024cf5f020051a9d25d2dd57a5896aaa/xla/pjrt/gpu/gpu_helpers.cc ("No visible GPU devices.")
        - https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html (ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES)
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/install/prerequisites.html (the render and video groups that own /dev/kfd and /dev/dri)
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html (a container needs --device /dev/kfd --device /dev/dri)
        - https://github.com/pytorch/pytorch/pull/84879 (CUDA reads an index as strtoul does)
        - https://github.com/pytorch/pytorch/blob/17e3b6a97af175f377f42b52cf20d4c758a432a9/torch/cuda/__init__.py (_parse_visible_devices: a repeated GPU leaves none)
    """
    live = list(_hidden_live(f))
    if live:
        yield from live
        return
    said = catalogued(f, NO_GPU)
    if not said:
        # nothing pasted says it: the live comparison needs both facts (skipped with its reason without them)
        _needed = (f["env.vars"], f["gpus"])
        return
    if _cause_named(f) or any(True for _ in slurm_job_without_gpus(f)) or libs_not_bound_in_container(f):
        return
    if str(said[0].get("id", "")).startswith("hip:") and _rocm_gpu_named_unsupported(f):
        return  # an AMD GPU its ROCm release does not list: rocm-gpu-not-in-release names that cause
    s = said[0]
    if str(s.get("id", "")).startswith("hip:"):
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the process saw no AMD GPU. The words do not say "
                          "why: HIP_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES hiding the GPUs, a job given none, a "
                          "container started without /dev/kfd, a user outside the render group, or no working "
                          "driver; the fix's first three lines tell them apart",
                  fix=_NO_GPU_FIX_ROCM, evidence=told_evidence(s), severity="info")
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the process saw no GPU. The words do not say why: "
                      "CUDA_VISIBLE_DEVICES hiding the GPUs, a job given none, a container started without them, or "
                      "no working driver; the fix's first two lines tell them apart",
              fix=_NO_GPU_FIX, evidence=told_evidence(s), severity="info")


@rule("GPU038", BEYOND, "info", "the program asks for a GPU index past the GPUs its process sees", impact=6)
def gpu_index_beyond_visible(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket: CUDA's "invalid device ordinal" (cudaErrorInvalidDevice,
        CUDA_ERROR_INVALID_DEVICE; HIP's hipErrorInvalidDevice), with torch's "GPU device may be
        out of range, do you have enough GPUs?", torch's "Invalid device id", XLA's "Invalid
        device ordinal value (N). Valid range is [0, M]." and NCCL's "Invalid device N
        (totalnDev=M)": the program named a GPU index that its process does not have; PyTorch
        Lightning's "You requested gpu: [0, 1] But your machine only has: [0]" and "You requested
        to find N devices but this machine only has M GPUs", whose finding names the indexes asked
        for and those the process sees, with CUDA_VISIBLE_DEVICES and the job's GPU request.

    Why it matters:
        CUDA numbers the GPUs a process sees from 0, and only those: with CUDA_VISIBLE_DEVICES=3,
        or one GPU given by the scheduler, the GPU is cuda:0 and cuda:1 does not exist. A script
        that hard-codes cuda:1, or a launcher that starts more ranks per node than there are
        GPUs, stops here. The node is healthy, so the finding is information, not a fault.

    How to fix:
        Print the count the process sees (torch.cuda.device_count()), index GPUs by the
        launcher's local rank (LOCAL_RANK, SLURM_LOCALID) or use cuda:0 where each rank is given
        one GPU, and start no more ranks per node than it has GPUs.

    References:
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorInvalidDevice = 101)
        - https://github.com/pytorch/pytorch/blob/0ac83aeb35494c139d2634d868b81b5cff666ec9/c10/cuda/CUDAMiscFunctions.cpp (get_cuda_error_help)
        - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars (CUDA_VISIBLE_DEVICES renumbers from 0)
        - https://pytorch.org/docs/stable/elastic/run.html (LOCAL_RANK)
        - https://github.com/Lightning-AI/pytorch-lightning/blob/be98784a1a03581b7051a355ae1084fd352d7cea/src/lightning/fabric/utilities/device_parser.py (_sanitize_gpu_ids)
    """
    said = catalogued(f, BEYOND)
    if not said:
        return
    s = said[0]
    if str(s.get("id", "")).startswith("lightning:"):
        yield _lightning_beyond(s)
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the program asked for a GPU index its process does "
                      "not have. CUDA numbers only the GPUs the process sees, from 0 (a CUDA_VISIBLE_DEVICES list or a "
                      "scheduler's allocation renumbers them): a fixed cuda:N, or more ranks per node than GPUs, goes "
                      "past them",
              fix=_BEYOND_FIX, evidence=told_evidence(s))


# Lightning's own check (device_parser._sanitize_gpu_ids, find_usable_cuda_devices) compares what
# Trainer/Fabric(devices=...) asks for with range(torch.cuda.device_count()): the GPUs this process may
# see, which CUDA_VISIBLE_DEVICES, the scheduler's GPU request and the container decide.
_LIGHTNING_FIX = (
    "python3 -c 'import torch; print(torch.cuda.device_count())'   # the GPUs this process sees; Lightning "
    "compares devices= with range(count)\n"
    "echo \"CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-(unset)}\"   # a list shorter than devices= hides the rest: "
    "unset it or list as many GPUs as devices= asks for\n"
    "nvidia-smi -L   # the GPUs the node has\n"
    "scontrol show job \"$SLURM_JOB_ID\" | grep -iE 'tres|gres'   # in a Slurm job: ask for as many as devices= "
    "(sbatch --gres=gpu:2 or --gpus-per-node=2)\n"
    "# or ask for what is there: Trainer(accelerator='gpu', devices='auto') or devices=<that count>")


def _lightning_beyond(s: dict) -> Hit:
    requested, visible = s.get("requested"), s.get("visible")
    if requested and visible is not None:
        asked = f"GPU indexes {requested} and this process sees {visible}"
    elif s.get("requested_count") and s.get("visible_count"):
        asked = f"{s.get('requested_count')} GPUs and this process sees {s.get('visible_count')}"
    else:
        asked = "more GPUs than this process sees"
    return Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": Lightning was asked (devices=) for {asked}. "
                       "It counts only the GPUs torch sees, which CUDA_VISIBLE_DEVICES, the job's GPU request and the "
                       "container decide, not the GPUs the node has",
               fix=_LIGHTNING_FIX, evidence=told_evidence(s))
