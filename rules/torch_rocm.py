"""The ROCm torch build against the node's GPUs: an AMD GPU it has no kernels for, or an NVIDIA GPU."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._builds import python_environment, arch_list_not_known
from hpcdoctor.rules._common import catalogued, hip_program_not_torch, nvidia_gpus_only, stated, told_evidence, told_text


@rule("SW008", "torch-rocm-missing-gfx", "error", "the ROCm torch build has no kernels for this AMD GPU", impact=10)
def torch_rocm_missing_gfx(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A ROCm build of torch whose arch list (torch.cuda.get_arch_list(), gfx targets) lacks the
        graphics target of an AMD GPU on the node: a gfx1100 Radeon under a wheel built for
        gfx90a/gfx942 only, or an MI300X (gfx942) under an older ROCm wheel. In a pasted log, the
        HIP runtime's "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"
        or clr's "No compatible code objects found for: gfx1152"; not where the paste shows another
        HIP program and no torch (llama.cpp's ggml start-up line, the user running HIP's samples):
        that program's own kernels are framework-missing-arch's.

    Why it matters:
        ROCm code objects run only on the gfx target they were built for; there is no PTX-like
        forward path. Kernels fail with "HIP error: invalid device function" or "no kernel image",
        or torch.cuda.is_available() is True and the first operation fails.

    How to fix:
        Install a ROCm build of torch whose arch list includes the GPU's gfx target, which the fix
        names from knowledge/torch_wheels.toml ([[rocm_wheel]], e.g. the +rocm7.2 wheels of 2.11 for
        gfx950 or gfx1151), or the site's module built for it; where no official wheel carries the
        target (gfx1010, gfx1031), build from source with PYTORCH_ROCM_ARCH set to it. Check with
        python -c "import torch; print(torch.cuda.get_arch_list())". A pasted collect_env names the
        wheel, not its list: the official wheel's list is then used.

    References:
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
        - https://github.com/pytorch/pytorch/issues/138506
        - https://github.com/pytorch/pytorch/issues/132570 (gfx1010 absent from the ROCm 6.2 wheels)
        - https://github.com/astral-sh/uv/issues/14086 (get_arch_list() of the official ROCm wheels)
    """
    try:
        t = f["torch"]
    except MissingFact:
        told = list(_rocm_gfx_told(f))
        if not told:
            raise
        yield from told
        return
    arch = t.get("arch_list")
    if t.get("build") == "rocm":
        arch_list_not_known(f, t, [g for g in _amd_devices(f, t) if g.get("vendor") == "amd"])
    if t.get("build") != "rocm" or not isinstance(arch, list) or not arch:
        yield from _rocm_gfx_told(f)
        return
    built = {wheels.gfx_base(a) for a in arch}  # gfx90a:xnack- is still gfx90a code
    # A pasted collect_env names the wheel, not its list: the list is then the official wheel's
    # (knowledge/torch_wheels.toml [[rocm_wheel]]), and the message says so.
    official = wheels.rocm_wheel_gfx_list(str(t.get("version") or ""), f.config)
    from_table = "arch_list" in (t.get("from_knowledge") or []) and official is not None and official["arch"] == arch
    whose = ("the official wheel " if from_table else "") + f"torch {t.get('version')}"
    for g in _amd_devices(f, t):
        gfx = g.get("gfx_target")
        if g.get("vendor") == "amd" and isinstance(gfx, str) and gfx.startswith("gfx") and wheels.gfx_base(gfx) not in built:
            yield Hit(message=f"{g.get('name')} is {gfx}, but {whose} carries {', '.join(arch)}: "
                              "\"invalid device function\" at the first kernel",
                      subject=f"GPU {g.get('index')}",
                      fix=wheels.resolve_rocm(gfx, f.config, **python_environment(t))["text"],
                      evidence={"gfx_target": gfx, "torch.arch_list": arch,
                                "arch_list_from": "knowledge/torch_wheels.toml" if from_table else "torch"})


def _rocm_gfx_told(f: FactView) -> Iterator[Hit]:
    """The HIP runtime's "hipErrorNoBinaryForGpu: Unable to find code object for all current
    devices!" (ROCm/clr hip_code_object.cpp), pasted: the program's HIP code carries no code
    object for the GPU's gfx target."""
    if nvidia_gpus_only(f):
        return  # a ROCm build on an NVIDIA GPU: torch-rocm-build-on-nvidia
    if hip_program_not_torch(f):
        return  # a HIP program shown not to be torch (llama.cpp, HIP's samples): its own kernels, framework-missing-arch
    for s in catalogued(f, "torch-rocm-missing-gfx"):
        yield Hit(message=f"the HIP runtime found no code object for this GPU's gfx target (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the ROCm build lacks the GPU's architecture",
                  fix="rocminfo | grep -m1 -o 'gfx[0-9a-f]*'   # the GPU's target: install a ROCm build of torch whose "
                      "torch.cuda.get_arch_list() has it (AMD_LOG_LEVEL=1 prints the targets the binary carries)",
                  evidence=told_evidence(s))
        return


def _amd_devices(f: FactView, t: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The node's AMD GPUs; where no GPU tool was recorded (a pasted collect_env), the device torch
    itself reports: a ROCm collect_env prints torch.cuda.get_device_name() with the device's
    gcnArchName, "AMD Instinct MI210 (gfx90a:sramecc+:xnack-)" (torch/utils/collect_env.py,
    get_gpu_info). That is the current device only, so it is used for its gfx, never as a count."""
    gpus = f.gpus()
    if gpus or not isinstance(t.get("gpu_models"), list):
        return f["gpus"]
    named = []
    for n, model in enumerate(t["gpu_models"]):
        m = re.match(r"^(.+?)\s*\((gfx[0-9a-f]+(?::[a-z]+[+-])*)\)$", str(model).strip())
        if m:
            named.append({"index": n, "vendor": "amd", "name": m.group(1), "gfx_target": m.group(2)})
    return named or f["gpus"]


# What says the program runs HIP (a ROCm build): the HIP runtime's and ROCr's messages.
_HIP_FAMILIES = ("hip", "hsa")


@rule("SW023", "torch-rocm-build-on-nvidia", "error", "a ROCm (HIP) build of torch on a machine whose GPU is NVIDIA", impact=10)
def torch_rocm_build_on_nvidia(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A ROCm build of torch (a "+rocm" version, torch.version.hip set) on a node whose GPUs are
        all NVIDIA; in a pasted ticket, a HIP runtime or ROCr message (hipErrorNoBinaryForGpu,
        "HIP error: ...", HSA_STATUS_...) where the GPUs listed or named are NVIDIA ones (the
        "GPU: Nvidia GeForce RTX 3050" of an installer's report).

    Why it matters:
        A ROCm build carries code objects for AMD gfx targets only: on an NVIDIA GPU the HIP
        runtime finds no device it has code for and the program stops at its first kernel
        ("Unable to find code object for all current devices"). Installers that pick the wheel
        by distribution or by a stale choice land here; no ROCm wheel runs on NVIDIA hardware.

    How to fix:
        Uninstall the ROCm build and install the CUDA build of the same torch release that the
        node's driver supports (the fix names the index); then torch.version.cuda is set and
        torch.version.hip is None.

    References:
        - https://pytorch.org/get-started/locally/ (one index per CUDA or ROCm version)
        - https://github.com/easydiffusion/easydiffusion/issues/1477 (hipErrorNoBinaryForGpu on an RTX 3050)
    """
    nvidia = nvidia_gpus_only(f)
    if not nvidia:
        return
    check = "python -c 'import torch; print(torch.__version__, torch.version.hip, torch.version.cuda)'   # +rocm / a HIP version: the ROCm build"
    fix = (f"{check}\npip uninstall -y torch torchvision torchaudio\n"
           "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/cu128   "
           "# a CUDA variant this driver supports: nvidia-smi shows its highest CUDA")
    t = f.get("torch")
    if isinstance(t, dict) and t.get("build") == "rocm":
        yield Hit(message=f"torch {t.get('version')} is a ROCm (HIP) build, but this node's GPUs are NVIDIA ({', '.join(map(str, nvidia))}): "
                          "a ROCm build has no code for them", fix=fix,
                  evidence={"torch.version": t.get("version"), "torch.build": "rocm", "gpus": nvidia})
        return
    told = [s for s in f.get("ticket.symptoms") or [] if s.get("family") in _HIP_FAMILIES]
    if not told:
        return
    s = told[0]
    yield Hit(message=f"the HIP (ROCm) runtime ran (line {s.get('line')}: \"{told_text(s)}\") on a "
                      f"machine whose GPU is NVIDIA ({', '.join(map(str, nvidia))}): a ROCm build of torch was installed, "
                      "which has no code for NVIDIA GPUs", fix=fix, evidence={**told_evidence(s), "gpus": nvidia})


def _amd_only(f: FactView) -> list:
    """The AMD GPUs of the node, where every GPU listed is AMD; else []."""
    listed = f.gpus()
    return [g.get("name") for g in listed] if listed and all(g.get("vendor") == "amd" for g in listed) else []


_ROCM_FIX = ("python -c 'import torch; print(torch.__version__, torch.version.hip, torch.version.cuda)'   "
             "# +cuXYZ / a CUDA version and hip None: not the ROCm build\n"
             "pip uninstall -y torch torchvision torchaudio\n"
             "pip install torch==2.13.0 torchvision torchaudio --index-url https://download.pytorch.org/whl/rocm7.2   "
             "# torch 2.13's ROCm 7.2 build (knowledge/torch_wheels.toml); a variant whose get_arch_list() has this GPU's gfx target (rocminfo | grep -m1 -o 'gfx[0-9a-f]*'); "
             "in a container, an image built on a ROCm torch")


@rule("SW042", "torch-cuda-build-on-amd", "error", "a CUDA build of torch on a machine whose GPU is AMD", impact=10,
      also={"info": "the user names an AMD GPU and says the job runs on the CPU: the usual cause, not a fact seen"})
def torch_cuda_build_on_amd(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A CUDA build of torch (a "+cuXYZ" version, torch.version.cuda set, torch.version.hip
        None) on a node whose GPUs are all AMD, on the node or in a pasted environment report with
        an AMD GPU listing. In a pasted ticket whose user names an AMD GPU ("AMD (ROCm)", a Radeon
        or Instinct board) and says the program uses the CPU instead of ROCm or the GPU: that
        cause, at info, with the command that confirms it.

    Why it matters:
        A CUDA build carries kernels for NVIDIA GPUs only and looks for the NVIDIA driver: on an
        AMD GPU torch.cuda.is_available() is False and the program runs on the CPU, or stops
        where it asks for "cuda". ROCm builds (torch.version.hip set) are separate wheels, from
        PyTorch's rocmX.Y indexes; an image or environment built from the default CUDA wheel
        stays on the CPU.

    How to fix:
        Uninstall the CUDA build and install the ROCm build of the same torch release from its
        ROCm index (one whose arch list includes the GPU's gfx target); in a container, use an
        image built on the ROCm build. Then torch.version.hip is set.

    References:
        - https://pytorch.org/get-started/locally/ (one index per CUDA or ROCm version)
        - https://docs.pytorch.org/docs/stable/notes/hip.html (torch.version.hip, the cuda device on ROCm)
        - https://github.com/invoke-ai/InvokeAI/issues/7251
    """
    amd = _amd_only(f)
    t = f.get("torch")
    if amd and isinstance(t, dict) and t.get("build") == "cuda":
        yield Hit(message=f"torch {t.get('version')} is a CUDA build, but this node's GPUs are AMD ({', '.join(map(str, amd))}): "
                          "a CUDA build cannot use them and runs on the CPU", fix=_ROCM_FIX,
                  evidence={"torch.version": t.get("version"), "torch.build": "cuda", "gpus": amd})
        return
    told = {s.get("id"): s for s in f.get("ticket.symptoms") or []}
    said_amd, on_cpu = told.get("prose:amd-gpu-said"), told.get("prose:cpu-instead-of-gpu-said")
    if said_amd and on_cpu and stated(on_cpu) and not nvidia_gpus_only(f):
        yield Hit(message=f"an AMD GPU (line {said_amd.get('line')}: \"{told_text(said_amd)}\") and the job on the CPU "
                          f"(line {on_cpu.get('line')}: \"{told_text(on_cpu)}\"): the usual cause is a torch that is not the "
                          "ROCm build (a CUDA or CPU wheel, which cannot use an AMD GPU); torch.version.hip confirms it",
                  fix=_ROCM_FIX, severity="info", evidence=told_evidence(on_cpu))
