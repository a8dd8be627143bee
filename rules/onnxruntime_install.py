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


# "<EP> execution provider is not enabled in this build." is the C API's stub in a library built without
# that provider (provider_bridge_ort.cc): every binding prints it, and each installs the GPU build its own way.
_FIX_RUST = ("# ort (Rust) loaded a CPU build of ONNX Runtime. With its load-dynamic feature it loads ORT_DYLIB_PATH, "
             "else the onnxruntime.dll / libonnxruntime.so the system loader finds first (ort docs, setup/linking)\n"
             "# 1. download the GPU build of the ONNX Runtime release your ort targets (ort 2.0.0-rc.9: 1.20) from "
             "https://github.com/microsoft/onnxruntime/releases (onnxruntime-win-x64-gpu-*.zip, onnxruntime-linux-x64-gpu-*.tgz)\n"
             "# 2. point ort at it before the program starts: Windows cmd: set ORT_DYLIB_PATH=C:\\path\\to\\onnxruntime-win-x64-gpu-...\\lib\\onnxruntime.dll ; "
             "Linux: export ORT_DYLIB_PATH=/path/to/onnxruntime-linux-x64-gpu-.../lib/libonnxruntime.so\n"
             "# or drop load-dynamic: ort's downloaded binaries with the cuda feature are CUDA 12 + cuDNN 9 builds "
             "(x86_64 Windows and Linux; none for aarch64 at rc.9): cargo clean && cargo build --release\n"
             "# either way the GPU build needs the CUDA and cuDNN majors its release names: "
             "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements")
_FIX_CSHARP = ("dotnet remove package Microsoft.ML.OnnxRuntime && dotnet add package Microsoft.ML.OnnxRuntime.Gpu   "
               "# the CPU package has no CUDA provider (onnxruntime-genai: Microsoft.ML.OnnxRuntimeGenAI.Cuda in place of "
               "Microsoft.ML.OnnxRuntimeGenAI)\n"
               "# the GPU package needs the CUDA and cuDNN majors its release names: "
               "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements")
_FIX_ANY = ("# the ONNX Runtime library loaded is a CPU build; install its GPU build for your binding:\n"
            "# Python: pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu\n"
            "# C#: dotnet add package Microsoft.ML.OnnxRuntime.Gpu (in place of Microsoft.ML.OnnxRuntime); Java: "
            "com.microsoft.onnxruntime:onnxruntime_gpu; C/C++: the onnxruntime-*-gpu-* archive of "
            "https://github.com/microsoft/onnxruntime/releases; Rust (ort): ORT_DYLIB_PATH to that archive's library\n"
            "# with the CUDA and cuDNN majors its release names: "
            "https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements")


def _binding_fix(f: FactView, s: dict) -> tuple:
    """Which binding printed it: pykeio/ort's own lines, C#'s exception, Java's, Python's."""
    text = str(s.get("text", ""))
    if any(x.get("family") == "ort_rust" for x in f.get("ticket.symptoms") or []) or "ort::" in text:
        return "Rust (pykeio/ort)", _FIX_RUST
    if "OnnxRuntime" in text and ("Microsoft.ML" in text or "Exception" in text):
        return "C#", _FIX_CSHARP
    if "onnxruntime_pybind" in text or "onnxruntime.capi" in text:
        return "Python", _FIX
    return "", _FIX_ANY


def _not_enabled(f: FactView) -> Iterator[Hit]:
    for s in catalogued(f, SYMBOL):
        if s.get("id") != "onnxruntime:ep-not-enabled-in-build" or s.get("provider") not in ("CUDA", "TensorRT"):
            continue   # another provider's build (DirectML, ROCm, OpenVINO) is not the CUDA one
        binding, fix = _binding_fix(f, s)
        yield Hit(message=f"the ONNX Runtime library{' that ' + binding + ' loaded' if binding else ''} was built without the "
                          f"{s['provider']} execution provider (a CPU build), so sessions run on the CPU (line "
                          f"{s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))
        return


def _pasted(f: FactView) -> Iterator[Hit]:
    hits = list(_not_enabled(f))
    if hits:
        yield from hits
        return
    for s in catalogued(f, SYMBOL):
        if s.get("id") == "onnxruntime:ep-not-enabled-in-build":
            continue
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
        In a pasted log, ONNX Runtime's C API stub "CUDA execution provider is not enabled in
        this build." (TensorRT likewise), which every binding prints (Python, C#, Java, and
        pykeio/ort's "An error occurred when attempting to register `CUDAExecutionProvider`: ...");
        onnxruntime's own Python warning "Specified provider 'CUDAExecutionProvider' is
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
        For the C API's "not enabled in this build", install the GPU build for the binding that
        printed it: onnxruntime-gpu (Python), Microsoft.ML.OnnxRuntime.Gpu (C#), the
        onnxruntime-*-gpu-* release archive (C/C++), and for pykeio/ort with load-dynamic,
        ORT_DYLIB_PATH pointed at that archive's library (or its own CUDA 12 download without
        load-dynamic). Python:
        Install onnxruntime-gpu in place of onnxruntime (uninstall both first: they install the
        same import package), with the CUDA and cuDNN versions its release requires;
        get_available_providers() then lists CUDAExecutionProvider.

    References:
        - https://onnxruntime.ai/docs/install/ (onnxruntime: CPU; onnxruntime-gpu: CUDA)
        - https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements
        - https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/python/onnxruntime_inference_collection.py
        - https://github.com/microsoft/onnxruntime/issues/10685 (both packages installed)
        - https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/core/session/provider_bridge_ort.cc (the "not enabled in this build" stubs)
        - https://github.com/pykeio/ort/blob/v2.0.0-rc.9/docs/pages/setup/linking.mdx (load-dynamic, ORT_DYLIB_PATH)
        - https://github.com/pykeio/ort/issues/463 (ort with load-dynamic on Windows loading a CPU build)
    """
    hits = list(_pasted(f))
    if hits or catalogued(f, SYMBOL):
        yield from hits
        return
    yield from _installed(f)
