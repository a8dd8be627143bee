"""torchvision and torchaudio built for another CUDA release than the torch beside them: each says so
on import, naming both releases (knowledge/messages/torch_companions.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "torch-companion-cuda-mismatch"
_NAME = {"torch_companions:torchaudio-cuda-mismatch": "torchaudio",
         "torch_companions:torchvision-cuda-mismatch": "torchvision"}


@rule("SW124", SYMBOL, "error", "torchvision or torchaudio was built for another CUDA release than torch", impact=7)
def torch_companion_cuda_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, torchaudio's "Detected that PyTorch and TorchAudio were compiled with
        different CUDA versions. PyTorch has CUDA version 11.8 whereas TorchAudio has CUDA version
        11.7" and torchvision's "Detected that PyTorch and torchvision were compiled with different
        CUDA [major] versions. PyTorch has CUDA Version=X.Y and torchvision has CUDA Version=X.Y".

    Why it matters:
        Each companion's compiled extension links the CUDA runtime of the release it was built
        for, and its wheel is built against one torch release and one CUDA variant; mixing wheel
        indexes (PyPI's default beside a cu118 torch) or upgrading one package alone leaves a pair
        that refuses to import, and everything that imports it (transformers' audio models, a
        training script) fails with it.

    How to fix:
        Reinstall the companion from the wheel index of torch's own CUDA variant, pinned to the
        torch installed, so pip takes the companion release built against it.

    References:
        - https://github.com/pytorch/audio/blob/main/src/torchaudio/_extension/utils.py (_check_cuda_version)
        - https://github.com/pytorch/vision/blob/main/torchvision/extension.py (_check_cuda_version)
        - https://pytorch.org/get-started/previous-versions/ (the companions of each torch release, by index)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    package = _NAME.get(str(s.get("id")), "the companion")
    cuda, other = str(s.get("torch_cuda")), str(s.get("companion_cuda"))
    tag = wheels.cuda_tag(cuda)
    fix = ("python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'   # the torch installed and "
           "its CUDA\n"
           "v=$(python3 -c 'import torch; print(torch.__version__.split(\"+\")[0])'); "
           f"python3 -m pip install --force-reinstall \"torch==$v\" {package} --index-url {wheels.index_url(tag)}   "
           f"# {package}'s wheel pins the torch it was built against, so pip takes the release made for this one, "
           f"built for CUDA {cuda}")
    yield Hit(message=f"{package} was built for CUDA {other} and the torch installed for CUDA {cuda} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): {package} was installed from another wheel index or release than torch, "
                      "and it refuses to load",
              fix=fix, evidence=told_evidence(s))
