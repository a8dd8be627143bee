"""Extension builds that refuse the CUDA toolkit they found because torch was built with another CUDA:
torch.utils.cpp_extension's check (knowledge/messages/torch.toml), DeepSpeed's op builder and NVIDIA
apex's setup.py (knowledge/messages/extension_builds.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._common import ticket_evidence, ticket_symptoms, told_text, version_of


@rule("SW026", "torch-extension-cuda-mismatch", "error", "an extension built with a CUDA toolkit of another major version than torch's",
      impact=7, also={"warning": "a user's retelling that names only the installed CUDA"})
def torch_extension_cuda_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, an extension build refusing the CUDA toolkit it found (nvcc,
        CUDA_HOME) because torch was built with another CUDA: torch.utils.cpp_extension's "The
        detected CUDA version (12.4) mismatches the version that was used to compile PyTorch
        (11.8)" (every setup.py that builds a CUDAExtension: mmcv, pytorch3d, torch-scatter,
        flash-attn; torch prints it as the RuntimeError's tuple, the versions after the message),
        DeepSpeed's op builder "Installed CUDA version 12.2 does not match the version torch was
        compiled with 11.7, unable to compile cuda/cpp extensions" (CUDAMismatchException), and
        NVIDIA apex's "Cuda extensions are being compiled with a version of Cuda that does not
        match the version used to compile Pytorch binaries" (which names torch's CUDA only; "Cuda None"
        is ROCm's apex comparing hipcc with torch.version.hip). A user's retelling that names only the installed CUDA ("Installed CUDA
        version 11.7 does not match torch version") is a warning. DeepSpeed accepting a minor
        mismatch, or told to skip the check (DS_SKIP_CUDA_CHECK=1), is not a refusal: silent.

    Why it matters:
        Building a CUDA extension (flash-attn, apex, DeepSpeed's ops, a project's own ops from
        source) uses the CUDA toolkit found through CUDA_HOME or nvcc on PATH, and the build
        refuses one whose version differs from the CUDA torch was built with (torch and DeepSpeed:
        another major; apex: another major or minor), since the two runtimes cannot share the
        process. The pip wheel of torch brings its CUDA runtime, not a compiler.

    How to fix:
        Point the build at a toolkit of torch's CUDA version (load the site's cuda/X.Y module,
        install conda's cuda-toolkit=X.Y, or export CUDA_HOME=/usr/local/cuda-X.Y with its bin
        first on PATH), or install the torch build for the toolkit installed (pip's
        download.pytorch.org/whl/cuXYZ index of the same major version).

    References:
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/cpp_extension.py (_check_cuda_version)
        - https://github.com/deepspeedai/DeepSpeed/blob/master/op_builder/builder.py (assert_no_cuda_mismatch)
        - https://github.com/NVIDIA/apex/blob/master/setup.py (check_cuda_torch_binary_vs_bare_metal)
        - https://github.com/deepspeedai/DeepSpeed-MII/issues/277 (the maintainer: install the torch build for the system CUDA)
        - https://docs.nvidia.com/cuda/cuda-installation-guide-linux/ (toolkits under /usr/local/cuda-X.Y)
    """
    sym = ticket_symptoms(f)
    s = next((sym[k] for k in _EXT_MISMATCH if k in sym), None)
    if s is None:
        return
    who = _EXT_MISMATCH[s["id"]]
    detected = s.get("detected") or s.get("detected_f")
    wanted = s.get("torch_cuda") or s.get("torch_cuda_f")
    if s["id"] == "extension_builds:deepspeed-cuda-mismatch-retold":
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": DeepSpeed's op builder refuses to compile its ops "
                          f"with the CUDA {detected} toolkit (nvcc, CUDA_HOME) because torch was built with another CUDA; "
                          "the paste does not say which (python -c 'import torch; print(torch.version.cuda)')",
                  severity="warning", fix=_ext_fix(detected, None), evidence=ticket_evidence(s))
        return
    if s.get("torch_cuda_none"):
        yield Hit(message=f"apex's setup.py (ROCm's apex) found a ROCm whose hipcc is of another major or minor version than "
                          f"the HIP torch was built with (line {s.get('line')}: \"Cuda None\" is torch.version.cuda of a ROCm "
                          "build, printed by apex's ROCm check)",
                  fix=_ROCM_EXT_FIX, evidence=ticket_evidence(s))
        return
    found = f"CUDA {detected}" if detected else "a CUDA toolkit"
    yield Hit(message=f"{who} found {found} (nvcc, CUDA_HOME) while torch was built with CUDA {wanted or '(not shown)'} "
                      f"(line {s.get('line')}): it refuses a toolkit "
                      + ("of another major or minor version" if s["id"] == "extension_builds:apex-cuda-mismatch"
                         else "of another major version"),
              fix=_ext_fix(detected, wanted), evidence=ticket_evidence(s))


# Each extension build's refusal, by the symptom id its catalogue entry gives it.
_EXT_MISMATCH = {"torch:cpp-extension-cuda-mismatch": "an extension build (torch.utils.cpp_extension)",
                 "extension_builds:deepspeed-cuda-mismatch": "DeepSpeed's op builder",
                 "extension_builds:apex-cuda-mismatch": "apex's setup.py",
                 "extension_builds:deepspeed-cuda-mismatch-retold": "DeepSpeed's op builder"}


# ROCm's apex compares hipcc's version under ROCM_HOME with torch.version.hip (ROCm/apex setup.py).
_ROCM_EXT_FIX = ("python -c 'import torch; print(torch.version.hip)'; hipcc --version | grep -i 'HIP version'   "
                 "# the two HIP versions: their major.minor must match\n"
                 "# build with the ROCm of torch's HIP version (ROCM_HOME=/opt/rocm-X.Y, or the matching rocm-sdk wheels), "
                 "or install the torch build for the installed ROCm")


def _ext_fix(detected, wanted) -> str:
    """The toolkit of torch's CUDA, or torch's build for the toolkit installed (the same major
    version: the newest official tag of it, as DeepSpeed-MII's maintainers advised in #277)."""
    lines = []
    if wanted:
        lines += [f"module avail cuda 2>&1 | grep -i 'cuda/{wanted}'; ls -d /usr/local/cuda-{wanted}* 2>/dev/null   "
                  f"# a CUDA {wanted} toolkit here (torch's)",
                  f"export CUDA_HOME=/usr/local/cuda-{wanted} PATH=/usr/local/cuda-{wanted}/bin:$PATH   # or: module load "
                  f"cuda/{wanted}; or in a conda env: conda install -c nvidia cuda-toolkit={wanted}; then rebuild"]
    else:
        lines.append("python -c 'import torch; print(torch.version.cuda)'; nvcc -V | tail -n 2   # the two CUDA versions")
    tag = _torch_tag_for(detected)
    if tag:
        lines.append(f"python3 -m pip install --force-reinstall torch --index-url {wheels.index_url(tag)}   # or torch's "
                     f"build for the installed CUDA {detected} (same major version), then rebuild")
    return "\n".join(lines)


def _torch_tag_for(cuda) -> str:
    """The newest official torch wheel tag (cu118, cu121 ...) of the toolkit's major version."""
    if not cuda or not str(cuda).split(".")[0].isdigit():
        return ""
    major = str(cuda).split(".")[0]
    tags = {w.get("cuda") for w in wheels.wheel_table() if str(w.get("cuda", "")).split(".")[0] == major}
    best = max((t for t in tags if t), key=version_of, default=None)
    return wheels.cuda_tag(best) if best else ""
