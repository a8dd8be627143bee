"""TensorRT: its runtime missing where a program asks for it, and an engine plan refused because a
different TensorRT version or a different GPU built it (knowledge/messages/tensorrt.toml, read from
the strings of NVIDIA's TensorRT 11.4 runtime libraries)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

_TRT_LIBS = ("libnvinfer", "libnvinfer_plugin", "libnvonnxparser", "libnvinfer_lean", "libnvinfer_dispatch", "libnvparsers")
_LIB = re.compile(r"^(lib[A-Za-z_]{1,40}?)\.so(?:\.([0-9]{1,3}))?")


def _trt_library(name: str) -> Optional[tuple]:
    """(stem, major or None) when ``name`` ('libnvinfer.so.10') is one of TensorRT's libraries."""
    m = _LIB.match(str(name or ""))
    return (m.group(1), m.group(2)) if m and m.group(1) in _TRT_LIBS else None


def _loader_misses(f: FactView) -> List[dict]:
    """TensorRT libraries the loader could not open, as onnxruntime's provider, an import or the loader
    itself says; TensorFlow's DsoLoader probing them on its line is its optional TF-TRT, not a need."""
    symptoms = list(f.get("ticket.symptoms") or [])
    tf_lines = {s.get("line") for s in symptoms if str(s.get("id", "")).startswith("tensorflow:")}
    out = []
    for s in symptoms:
        sid = str(s.get("id", ""))
        if s.get("line") in tf_lines:
            continue
        if sid == "tensorrt:ort-tensorrt-provider-load-failed" and _trt_library(s.get("library")):
            out.append(s)
        elif sid == "torch:import-missing-library" and _trt_library(s.get("library")):
            out.append(s)
        elif sid.startswith("libraries:") and sid.split(":", 1)[1] in _TRT_LIBS:
            out.append(s)
    return out


def _major(s: dict) -> Optional[str]:
    lib = _trt_library(s.get("library"))
    if lib and lib[1]:
        return lib[1]
    return str(s.get("version") or "").split(".")[0] or None


def _install(major: Optional[str]) -> str:
    # PyPI: TensorRT 8 as "tensorrt"; 10 and later as tensorrt-cu11/-cu12/-cu13 by CUDA major
    if major and major.isdigit() and int(major) <= 8:
        return f'pip install "tensorrt=={major}.*"   # the TensorRT major the program was built for (libnvinfer.so.{major})'
    pin = f"=={major}.*" if major else ""
    return (f'pip install "tensorrt-cu12{pin}"   # tensorrt-cu13 for a CUDA 13 build; the major the program was built for'
            f"{f' (libnvinfer.so.{major})' if major else ''}")


_LIBS_FIX_TAIL = ("export LD_LIBRARY_PATH=\"$(python -c 'import os, tensorrt_libs; print(os.path.dirname(tensorrt_libs.__file__))')"
                  ":$LD_LIBRARY_PATH\"   # pip's wheels keep libnvinfer in site-packages/tensorrt_libs, off the loader's path\n"
                  "# in a container image: install TensorRT in the image itself (its Dockerfile), or use an image that ships it")


@rule("SW054", "tensorrt-libraries-missing", "error", "the program asks for TensorRT but no TensorRT runtime is installed or loadable",
      impact=6)
def tensorrt_libraries_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program that needs TensorRT finding none: "ModuleNotFoundError: No
        module named 'tensorrt'", onnxruntime's TensorRT execution provider failing to load its
        library because libnvinfer.so.N (or libnvinfer_plugin, libnvonnxparser) cannot be opened
        and its "Please install TensorRT libraries as mentioned in the GPU requirements page", or
        the loader's "libnvinfer.so.N: cannot open shared object file" in an import. TensorFlow's
        DsoLoader probing libnvinfer at start-up is left alone: only TF-TRT needs it.

    Why it matters:
        The program stops, or (onnxruntime) silently falls back to the CUDA or CPU provider and
        runs several times slower than the TensorRT build it was deployed for. pip's TensorRT
        wheels install libnvinfer inside site-packages, where the loader does not look unless
        told; images tagged for TensorRT sometimes ship the provider without the runtime.

    How to fix:
        Install the TensorRT major the program was built for (the N of libnvinfer.so.N) in the
        environment the program runs in, and put its library directory on LD_LIBRARY_PATH; in a
        container, install it in the image.

    References:
        - https://docs.nvidia.com/deeplearning/tensorrt/latest/installing-tensorrt/installing.html
        - https://onnxruntime.ai/docs/execution-providers/TensorRT-ExecutionProvider.html#requirements
        - https://github.com/microsoft/onnxruntime/blob/main/onnxruntime/python/onnxruntime_pybind_state.cc (RegisterTensorRTPluginsAsCustomOps)
        - https://pypi.org/project/tensorrt-cu12/
    """
    told = _loader_misses(f) + catalogued(f, "tensorrt-libraries-missing")
    if not told:
        return
    told.sort(key=lambda s: s.get("line") if isinstance(s.get("line"), int) else 1 << 30)
    s = next((t for t in told if _major(t) and t.get("id") != "tensorrt:python-module-missing"), told[0])
    major = _major(s) if s.get("id") != "tensorrt:python-module-missing" else None
    what = ("the Python running it has no TensorRT package" if s.get("id") == "tensorrt:python-module-missing"
            else f"TensorRT's library {s.get('library') or s.get('name') or 'libnvinfer'} cannot be loaded"
            if s.get("id") != "tensorrt:ort-install-tensorrt-libraries"
            else "onnxruntime's TensorRT provider found no loadable TensorRT")
    ort = any(str(t.get("id", "")).startswith("tensorrt:ort-") for t in told)
    yield Hit(message=f"the program needs TensorRT and {what} (line {s.get('line')}: \"{told_text(s)}\")"
                      f"{'; onnxruntime then falls back to a slower provider' if ort else ''}",
              fix=("python -c 'import tensorrt; print(tensorrt.__version__)'; ldconfig -p | grep -E 'libnvinfer(_plugin)?\\.so'"
                   "   # what this environment has\n"
                   f"{_install(major)}\n{_LIBS_FIX_TAIL}"),
              evidence=told_evidence(s))


_VERSION_FIX = ("python -c 'import tensorrt; print(tensorrt.__version__)'; ldconfig -p | grep libnvinfer; echo \"$LD_LIBRARY_PATH\""
                "   # the TensorRT that loads the plan (two installs on the path: the first wins)\n"
                "trtexec --getPlanVersionOnly --loadEngine=model.engine   # the TensorRT that built it (trtexec of TensorRT 10 and later)\n"
                "trtexec --onnx=model.onnx --saveEngine=model.engine   # rebuild with the TensorRT the program loads, on this node\n"
                "# to move plans between TensorRT versions: build with --versionCompatible (8.6 and later) and run them with the lean runtime")


@rule("SW055", "tensorrt-engine-version-mismatch", "error",
      "a TensorRT engine plan was built by another TensorRT version than the one loading it", impact=6)
def tensorrt_engine_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, TensorRT's runtime refusing a serialized engine built by another TensorRT
        version: "The engine plan file is not compatible with this version of TensorRT, expecting
        library version X got Y" (TensorRT 5-8), "Serialization assertion safeVersionRead ==
        safeSerializationVersion failed.Version tag does not match" (8.4 and later), "Trying to
        load an engine created with incompatible serialization version" (10 and later) and
        "Failed due to an old deserialization call on a newer plan file", usually followed by
        "Engine deserialization failed.".

    Why it matters:
        A plan is tied to the exact TensorRT version that built it unless built version-compatible;
        the engine cannot be created and inference does not start. It is met after upgrading
        TensorRT, a container or JetPack, when the plan came with a model download, or when two
        TensorRT installs are on the path and the program loads another one than trtexec built with.

    How to fix:
        Rebuild the plan with the TensorRT the program loads (find which one: its Python package,
        ldconfig, LD_LIBRARY_PATH), or pin that TensorRT to the plan's version; build with
        --versionCompatible where plans must move between versions.

    References:
        - https://docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/advanced.html (version compatibility)
        - https://github.com/NVIDIA/TensorRT/issues/2195
        - https://github.com/NVIDIA/TensorRT/tree/main/samples/trtexec
    """
    told = catalogued(f, "tensorrt-engine-version-mismatch")
    if not told:
        return
    s = told[0]
    versions = (f": this runtime is TensorRT {s['expected']}, the plan says {s['got']}" if s.get("expected") and s.get("got")
                else f": the runtime's serialization version is {s['current']}, the plan's {s['serialized']}"
                if s.get("current") and s.get("serialized") else "")
    yield Hit(message=f"a TensorRT engine plan was built by another TensorRT version than the one loading it{versions} "
                      f"(line {s.get('line')}: \"{told_text(s)}\"); rebuild it with the TensorRT the program loads",
              fix=_VERSION_FIX, evidence=told_evidence(s))


_DEVICE_FIX = ("nvidia-smi --query-gpu=index,name,compute_cap --format=csv   # the GPUs this node has\n"
               "CUDA_VISIBLE_DEVICES=0 trtexec --onnx=model.onnx --saveEngine=model.engine   # rebuild on the GPU that runs it\n"
               "# one plan for every Ampere or newer GPU (TensorRT 8.6 and later): trtexec --hardwareCompatibilityLevel=ampere+ ...\n"
               "# under Slurm, build inside a job on the partition's GPU type and keep one plan per GPU type")


@rule("SW056", "tensorrt-engine-built-for-other-gpu", "error",
      "a TensorRT engine plan was built on a GPU of another kind than the one running it", impact=6,
      also={"warning": "another GPU model of the same compute capability: the plan loads, tuned for the other GPU"})
def tensorrt_engine_built_for_other_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, TensorRT's runtime refusing a plan built on another GPU: "The engine plan
        file is generated on an incompatible device, expecting compute A got compute B, please
        rebuild", a hardware-compatible plan on an older GPU ("The current device is not
        compatible with this hardware-compatible engine"), a GPU with fewer multiprocessors than
        the plan needs; and, as a warning, "Using an engine plan file across different models of
        devices is not supported" (same compute capability, another model).

    Why it matters:
        TensorRT chooses kernels for the GPU it builds on; a plan from another compute capability
        cannot run, and one from another model of the same capability may be slow or deadlock.
        Plans copied from a workstation, downloaded with a model, or built on one partition's GPU
        and run on another's meet it.

    How to fix:
        Rebuild the plan on the GPU type that runs it (one plan per GPU type), or build one
        hardware-compatible plan (--hardwareCompatibilityLevel=ampere+) for Ampere and newer GPUs.

    References:
        - https://docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/advanced.html (hardware compatibility)
        - https://github.com/NVIDIA/TensorRT/issues/564
        - https://github.com/NVIDIA/TensorRT/tree/main/samples/trtexec
    """
    told = catalogued(f, "tensorrt-engine-built-for-other-gpu")
    if not told:
        return
    s = next((t for t in told if t.get("id") != "tensorrt:plan-across-device-models"), told[0])
    caps = (f": this GPU is compute {s['expected']}, the plan was built for compute {s['got']}"
            if s.get("id") == "tensorrt:plan-incompatible-device" and s.get("expected") and s.get("got") else "")
    warned = s.get("id") == "tensorrt:plan-across-device-models"
    yield Hit(message=f"a TensorRT engine plan was built on {'another GPU model' if warned else 'a GPU of another kind'} than the one "
                      f"running it{caps} (line {s.get('line')}: \"{told_text(s)}\"); rebuild it on this GPU type",
              fix=_DEVICE_FIX, evidence=told_evidence(s), severity="warning" if warned else None)
