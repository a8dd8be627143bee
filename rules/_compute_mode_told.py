"""What compute-mode-restricted (GPU010) says of an application's own refusal of the GPUs it found
(knowledge/messages/md_engines.toml): GROMACS's "unavailable" states CUDA's busy-or-unavailable answer;
OpenMM's and NAMD's sentences are only consistent with a compute mode, beside the other causes their
sources name, so they are info and name the check that tells them apart."""

from __future__ import annotations

from typing import Optional

from hpcdoctor.engine import Hit
from hpcdoctor.rules._common import told_evidence, told_text

_MODE_CHECK = ("nvidia-smi --query-gpu=index,compute_mode,memory.used,memory.total --format=csv   # "
               "Exclusive_Process or Prohibited? memory already full?\n"
               "nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv   # the process that holds "
               "an exclusive GPU")
_ONE_PER_GPU = ("srun --gpus-per-task=1 python run.py   # one process per GPU where the mode is Exclusive_Process "
                "(or ask the administrators for the Default mode: nvidia-smi -c DEFAULT)")

# The messages whose words state the refusal: chosen before those only consistent with it.
STATED = frozenset(("md_engines:unavailable",))
INFO = frozenset(("md_engines:openmm-no-compatible-cuda-device", "md_engines:openmm-requested-cuda-device-not-loaded",
                  "md_engines:namd-all-devices-unusable"))


def engine_told(s: dict) -> Optional[Hit]:
    """The finding for one md_engines message; None for a message of another family."""
    sid, line = s.get("id"), s.get("line")
    if sid == "md_engines:unavailable":
        return Hit(message=f"GROMACS found a GPU busy or unavailable (line {line}: \"{told_text(s)}\"): CUDA's "
                           "cudaErrorDevicesUnavailable, which GROMACS's source gives as a GPU in Exclusive_Process mode "
                           "already used by another process, or in Prohibited mode",
                   fix=f"{_MODE_CHECK}\n{_ONE_PER_GPU}", evidence=told_evidence(s))
    if sid in ("md_engines:openmm-no-compatible-cuda-device", "md_engines:openmm-requested-cuda-device-not-loaded"):
        which = "any GPU it tried" if sid.endswith("no-compatible-cuda-device") else "the GPU its DeviceIndex names"
        return Hit(message=f"OpenMM could not create a CUDA context on {which} (line {line}: \"{told_text(s)}\"): "
                           "OpenMM's source throws this when cuCtxCreate failed on each, which a GPU in "
                           "Exclusive_Process mode already used by another process (common on clusters) or in "
                           "Prohibited mode does, and so do a GPU with no free memory and a driver that refuses "
                           "contexts; the compute mode tells them apart",
                   fix=f"{_MODE_CHECK}\n{_ONE_PER_GPU}", evidence=told_evidence(s), severity="info")
    if sid == "md_engines:namd-all-devices-unusable":
        return Hit(message=f"NAMD found no GPU it can use (line {line}: \"{told_text(s)}\"): NAMD drops GPUs in "
                           "Prohibited compute mode, and also those of compute capability below 3.0, unable to map "
                           "host memory or with two multiprocessors or fewer; the compute mode tells them apart",
                   fix="nvidia-smi --query-gpu=index,name,compute_cap,compute_mode --format=csv   # Prohibited? "
                       "(the administrators set it back with nvidia-smi -c DEFAULT)",
                   evidence=told_evidence(s), severity="info")
    return None
