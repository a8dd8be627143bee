"""A program that is not torch failing because its own GPU binary (its fatbin) has no code for the
GPU: the CUDA error's enum name as CuPy, numba, cudarc, Thrust, RustaCUDA and NVIDIA's samples print
it, for framework-missing-arch. torch's own wording ("CUDA error: no kernel image ...") is
torch-missing-arch's and is left to it."""

from __future__ import annotations

import re
from typing import Optional

from hpcdoctor.engine import Hit
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._common import catalogued, first_symptom, gpu_of_ticket, told_evidence, told_text

# The enum names of error 209 (cuda.h CUDA_ERROR_NO_BINARY_FOR_GPU, driver_types.h
# cudaErrorNoKernelImageForDevice, RustaCUDA's CudaError::NoBinaryForGpu): only a program's own
# error report prints the name; torch prints the message alone after its check's words.
_NAMES = ("CUDA_ERROR_NO_BINARY_FOR_GPU", "cudaErrorNoKernelImageForDevice", "NoBinaryForGpu")
_IDS = ("cuda_driver:CUDA_ERROR_NO_BINARY_FOR_GPU", "cuda:cudaErrorNoKernelImageForDevice", "cuda_rust:NoBinaryForGpu")
# a library's own driver-API check that prints the message without the name: cpm_kernels'
# checkCUStatus, "CUDA Error: %s" % cuGetErrorString (cuda_driver.toml, cpm-kernels-cuda-error)
# glog's CHECK_EQ(error, cudaSuccess) from Caffe's CUDA_CHECK (OpenPose's bundled Caffe and the
# forks that copied it): cuda.toml's glog-check-cudasuccess form
_OWN_CHECKS = ("CUDA Error: ", "== cudaSuccess (")
_GLOG_LEGACY = re.compile(r"== cudaSuccess \((\d{1,4}) vs\. 0\)")
_TORCH_WORDS = ("CUDA error: ", "CUDA driver error: ", "cuda runtime error (", "THCudaCheck FAIL", "Triton Error [CUDA]")
_TORCH_FRAMES = ("torch:torch-import-frame", "torch:torch-c-import")

_FIX = ("nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader   # the GPU's compute capability: 3.7 is sm_37, 12.0 sm_120\n"
        "cuobjdump --list-elf --list-ptx \"$(command -v PROGRAM)\"   # the architectures the program's fatbin carries "
        "(for a Python package: its .so files under site-packages)\n"
        "# rebuild the kernels for that architecture (nvcc -gencode arch=compute_XY,code=sm_XY; CMake CMAKE_CUDA_ARCHITECTURES=XY),\n"
        "# or install the package's build for this GPU's CUDA (CuPy: the cupy-cudaNNx wheel of a CUDA that knows the GPU);\n"
        "nvcc --list-gpu-arch   # the architectures this CUDA toolkit can build for: one that no longer lists the GPU's needs an older toolkit")


def native_binary_lacks_arch(f: FactView) -> Optional[Hit]:
    """Error 209 by its enum name, from a paste with no torch check's words and no torch frames;
    or its text alone after a program's own words (cuda.toml's message-alone form: "launch failed:
    no kernel image ..."), from a paste in which nothing names torch."""
    if any(s.get("id") in _TORCH_FRAMES for s in f.get("ticket.symptoms") or []):
        return None
    s = next((t for t in catalogued(f, "framework-missing-arch") if t.get("id") in _IDS
              and (ggml_raised(f, t) is not None
                   or ((any(n in str(t.get("text", "")) for n in _NAMES + _OWN_CHECKS) or _alone_without_torch(f, t))
                       and not any(w in str(t.get("text", "")) for w in _TORCH_WORDS)))), None)
    if s is None:
        return None
    ggml = ggml_raised(f, s)
    if ggml is not None:
        return _ggml_lacks_arch(f, s, ggml)
    gpu = gpu_of_ticket(f)
    on = f" ({gpu['name']}, compute capability {gpu['cc']})" if gpu else ""
    return Hit(message=f"the program's own GPU binary has no code for this GPU{on} (line {s.get('line')}: \"{told_text(s)}\"): "
                       "CUDA error 209, no kernel image for the device; its fatbin was built for other architectures, with "
                       "no PTX the driver could compile for this one (or only PTX, and the driver's PTX JIT "
                       "libnvidia-ptxjitcompiler.so is missing)" + _legacy_number(s, gpu),
               fix=_FIX, evidence=told_evidence(s))


def _alone_without_torch(f: FactView, s: dict) -> bool:
    """The message read alone (no enum name, no check's words) where no reading of the paste names
    torch: a torch build's kernels would have raised it through torch's check, whose words are read."""
    return bool(s.get("bare")) and not any("torch" in str(t.get("id", "")) for t in f.get("ticket.symptoms") or [])


def _legacy_number(s: dict, gpu) -> str:
    """glog's "(48 vs. 0)": error 48 is no kernel image in CUDA 10.0 and older (209 from 10.1,
    cuda.toml's legacy_code), so the program runs on a CUDA 10.0 or older runtime; with the GPU known,
    the first CUDA that builds for it (cuda.toml [arch_min_toolkit])."""
    m = _GLOG_LEGACY.search(str(s.get("text", "")))
    if not m or m.group(1) != "48":
        return ""
    need = wheels.first_toolkit_for(gpu["cc"]) if gpu else None
    after = (f"; the first CUDA that builds for compute capability {gpu['cc']} is {need}: the program needs a rebuild "
             f"with CUDA {need} or newer" if need and need != "10.0" else "")
    return (". Its number, 48, is that error's number before CUDA 10.1: the program runs on a CUDA 10.0 or older "
            "runtime" + after)


def ggml_raised(f: FactView, s: dict) -> Optional[dict]:
    """ggml's (llama.cpp's) own CUDA check's place line just after the CUDA error ``s`` (ggml_cuda_error
    prints the error, then "current device: N, in function F at FILE:LINE"): the error was raised by
    ggml's kernels, not torch's, though both print "CUDA error: ". None where no such line follows it."""
    return next((g for g in f.get("ticket.symptoms") or [] if g.get("id") == "ggml:cuda-check-location"
                 and 0 <= (g.get("line") or 0) - (s.get("line") or 0) <= 3), None)


def _ggml_lacks_arch(f: FactView, s: dict, ggml: dict) -> Hit:
    """Error 209 from ggml's own CUDA check (knowledge/messages/ggml.toml): llama.cpp's CUDA build
    (or ollama's, whisper.cpp's) was compiled without this GPU's architecture; its CMake option
    CMAKE_CUDA_ARCHITECTURES names the ones to build (llama.cpp docs/build.md, "Compute Capability")."""
    gpu = gpu_of_ticket(f)
    on = f" ({gpu['name']}, compute capability {gpu['cc']})" if gpu else ""
    # native: CMake 3.24+ builds for the GPUs of the machine that builds (llama.cpp's docs/build.md)
    arch = gpu["cc"].replace(".", "") if gpu else "native"
    op = first_symptom(f, "ggml:op-failed")
    what = f"its {op['op']} kernel" if op and op.get("op") else "its kernel"
    return Hit(message=f"ggml's (llama.cpp's) CUDA build has no code for this GPU{on}: {what} failed with \"no kernel "
                       f"image is available for execution on the device\" (line {s.get('line')}, raised by ggml's own "
                       f"check in {ggml.get('function')}, line {ggml.get('line')}); torch is not involved",
               fix=("nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader   # the GPU's compute capability: 12.1 is 121\n"
                    f"cmake -B build -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES={arch} && cmake --build build --config Release -j   "
                    "# in the llama.cpp source tree: rebuild for this GPU (a CUDA toolkit that knows it: nvcc --list-gpu-arch)"),
               evidence=told_evidence(s))
