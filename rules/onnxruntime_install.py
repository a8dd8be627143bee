"""ONNX Runtime installed as its CPU-only package where the GPU is wanted: PyPI's "onnxruntime" has no
CUDA execution provider (that is "onnxruntime-gpu"). Read from onnxruntime's own warning and its
printed provider list (knowledge/messages/onnxruntime.toml), and live from the job's Python's
installed distributions (the payload's package list: no import)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, cuda_gpus, gpu_of_ticket, told_evidence, told_text

SYMBOL = "onnxruntime-without-cuda-provider"
_GPU_PROVIDERS = ("CUDAExecutionProvider", "TensorrtExecutionProvider")
# Both packages install the import package onnxruntime: removing the CPU one after the GPU one would
# delete files the GPU one shares, so the CPU package goes first.
_FIX = ("python -c 'import onnxruntime as ort; print(ort.__file__, ort.get_available_providers())'   # no "
        "CUDAExecutionProvider: the CPU package\n"
        "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu   # in the job's environment "
        "(the image, the venv); requirements.txt: onnxruntime-gpu in place of onnxruntime\n"
        "# onnxruntime-gpu's CUDA provider needs the CUDA and cuDNN major versions its release names "
        "(onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements)")


def _pasted(f: FactView) -> Iterator[Hit]:
    for s in catalogued(f, SYMBOL):
        available = str(s.get("available") or "")
        if "CUDAExecutionProvider" in available:
            continue
        if s.get("id") == "onnxruntime:provider-not-available":
            if s.get("provider") not in _GPU_PROVIDERS:
                continue   # another provider (DirectML, OpenVINO, ROCm) is another package's
            yield Hit(message=f"onnxruntime has no {s['provider']}: the installed package is the CPU build "
                              f"(providers: {available}), so the session runs on the CPU (line {s.get('line')}: "
                              f"\"{told_text(s)}\")", fix=_FIX, evidence=told_evidence(s))
            return
        gpu = gpu_of_ticket(f)
        if gpu:   # the list alone says what is installed, not that the GPU was wanted
            yield Hit(message=f"onnxruntime lists only [{available}] on a machine with an NVIDIA GPU ({gpu['name']}): "
                              f"the installed package is the CPU build, so ONNX models run on the CPU (line "
                              f"{s.get('line')}: \"{told_text(s)}\")", severity="warning", fix=_FIX,
                      evidence=told_evidence(s))
            return


def _installed(f: FactView) -> Iterator[Hit]:
    packages = f["torch"].get("packages") or {}
    cpu = packages.get("onnxruntime")
    if not cpu or packages.get("onnxruntime-gpu") or not cuda_gpus(f):
        return
    yield Hit(message=f"the job's Python has onnxruntime {cpu}, the CPU-only package, on a node with "
                      f"{len(cuda_gpus(f))} NVIDIA GPU(s): ONNX models it runs use the CPU",
              severity="advice", fix=_FIX, evidence={"torch.packages.onnxruntime": cpu})


@rule("SW047", SYMBOL, "error", "onnxruntime is the CPU-only package: no CUDA execution provider", impact=6,
      also={"warning": "only the printed provider list, beside an NVIDIA GPU, was pasted",
            "advice": "live: the CPU package installed on a GPU node, nothing says ONNX Runtime is used"})
def onnxruntime_without_cuda_provider(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, onnxruntime's own warning "Specified provider 'CUDAExecutionProvider' is
        not in available provider names.Available providers: 'AzureExecutionProvider,
        CPUExecutionProvider'" (TensorrtExecutionProvider likewise), and, as a warning, the
        provider list the CPU package prints, ['AzureExecutionProvider', 'CPUExecutionProvider'],
        in a paste that shows an NVIDIA GPU. On a node, as advice: the job's Python has the
        "onnxruntime" distribution and not "onnxruntime-gpu" beside NVIDIA GPUs (read from the
        installed distributions, without importing onnxruntime).

    Why it matters:
        PyPI's "onnxruntime" is built for the CPU only; asking a session for the CUDA provider
        only warns, and every model then runs on the CPU, many times slower, with no error. A
        requirements file or image that names onnxruntime, or a package that pulls it in, gives
        the CPU build even on a GPU node.

    How to fix:
        Install onnxruntime-gpu in place of onnxruntime (uninstall both first: they install the
        same import package), with the CUDA and cuDNN versions its release requires;
        get_available_providers() then lists CUDAExecutionProvider.

    References:
        - https://onnxruntime.ai/docs/install/ (onnxruntime: CPU; onnxruntime-gpu: CUDA)
        - https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements
        - https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/python/onnxruntime_inference_collection.py
        - https://github.com/microsoft/onnxruntime/issues/10685 (both packages installed)
    """
    hits = list(_pasted(f))
    if hits or catalogued(f, SYMBOL):
        yield from hits
        return
    yield from _installed(f)
