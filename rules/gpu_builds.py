"""A framework installed as a build without GPU support, asked for the GPU: MXNet's and PaddlePaddle's
own refusals (knowledge/messages/mxnet.toml, paddle.toml). torch's, JAX's, xFormers', onnxruntime's and
GROMACS' builds without CUDA have their own rules (torch-cpu-only, jax-without-cuda, ...)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, told_evidence, told_text

SYMBOL = "framework-built-without-gpu"

# TensorFlow's answer to whether its build has CUDA, in double quotes so that it runs in Windows' cmd too.
_TF_BUILT_CHECK = ("python -c \"import tensorflow as tf; print(tf.__version__, tf.test.is_built_with_cuda())\"   "
                   "# False: a build without CUDA")
# What each framework's user runs to see the build and to install the GPU one (the frameworks' own
# install guides: MXNet's pip packages mxnet-cuXXX for 1.x, its build-from-source USE_CUDA=1;
# PaddlePaddle's paddlepaddle-gpu package).
_FRAMEWORKS = {
    "mxnet": ("MXNet",
              "python -c 'import mxnet; print(mxnet.__version__, mxnet.__file__)'   # the install Python imports\n"
              "python -c 'from mxnet.runtime import Features; print(Features().is_enabled(\"CUDA\"))'   # False: a build "
              "without CUDA (releases with mxnet.runtime, as 1.9.1)\n"
              "pip uninstall -y mxnet && pip install mxnet-cu112   # the pip package of your CUDA (mxnet-cu102, -cu110, "
              "-cu112 ... are 1.9.1's), "
              "or rebuild from source: make clean, then make USE_CUDA=1 USE_CUDA_PATH=/usr/local/cuda, and reinstall "
              "the Python package from that build (cd python && pip install -e .)"),
    "tensorflow": ("TensorFlow",
                   _TF_BUILT_CHECK + "\n"
                   "pip install \"tensorflow[and-cuda]\"   # Linux (and WSL2): the release with its CUDA libraries (2.14+); "
                   "on native Windows the last GPU release is 2.10 (pip install \"tensorflow<2.11\"), later ones run the "
                   "GPU in WSL2"),
    "torch": ("PyTorch (or its Intel extension)",
              "python -c 'import torch; print(torch.__version__, hasattr(torch, \"xpu\") and torch.xpu.is_available())'   "
              "# False or an error: no XPU backend in this torch\n"
              "pip install torch --index-url https://download.pytorch.org/whl/xpu   # torch's own XPU build (Intel GPUs; "
              "the device's driver must be installed), or the intel-extension-for-pytorch XPU release matching this torch"),
    "paddle": ("PaddlePaddle",
               "python -c 'import paddle; print(paddle.__version__, paddle.is_compiled_with_cuda())'   # False: the CPU package\n"
               "pip uninstall -y paddlepaddle && pip install paddlepaddle-gpu   # the GPU package (pick the build of "
               "your CUDA from PaddlePaddle's install page)"),
}


# tensorflow.org/install/pip, Windows native: "TensorFlow 2.10 was the last TensorFlow release that
# supported GPU on native-Windows"; later releases run the GPU under WSL2.
_TF_WINDOWS_FIX = (_TF_BUILT_CHECK + "\n"
                   "pip install \"tensorflow<2.11\"   # native Windows: 2.10 is the last release with GPU support (with "
                   "CUDA 11.2 and cuDNN 8.1); later releases use the GPU only under WSL2")


@rule("SW109", SYMBOL, "error", "a framework installed without GPU support was asked for the GPU", impact=8,
      also={"warning": "torch's xpu refusal where the paste shows neither the extension's import nor code moving to xpu",
            "info": "torch's xpu refusal after code that moves to xpu without importing intel_extension_for_pytorch"})
def framework_built_without_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a deep learning framework's own refusal of a GPU request because the
        build installed has no GPU support, naming the framework: Apache MXNet's "Please compile
        with CUDA enabled" (its storage, engine and context in builds with USE_CUDA=0), "Compile
        with USE_CUDA=1 to enable GPU usage", "Please build with USE_CUDA=1 to enable GPU", "GPU is
        not enabled" and its operators' "Compile with USE_CUDA=1 to use ... operator on GPU";
        PaddlePaddle's "Cannot use GPU because you have installed CPU version PaddlePaddle" and
        "The device should not be 'gpu', since PaddlePaddle is not compiled with CUDA";
        TensorFlow's tf.test.is_built_with_cuda() answering False; torch's "PyTorch is not linked
        with support for xpu devices" (no XPU backend registered: the Intel extension's CPU release,
        or a torch without XPU). MXNet's
        messages for a CUDA build without one feature (runtime compilation, NCCL) are read, not
        this rule's. Python's "No module named 'fused_layer_norm_cuda'" for an extension module a
        package compiles only when its GPU build is asked for (knowledge/gpu_extension_modules.toml:
        NVIDIA apex's --cuda_ext modules): the package was installed as a Python-only build.

    Why it matters:
        The node's GPU, driver and CUDA are fine: the framework Python imports was compiled without
        CUDA (a CPU pip package, or a source build made before CUDA was enabled whose objects were
        reused, or an older install earlier on the path), and every GPU request fails. Installing
        CUDA or changing the driver changes nothing.

    How to fix:
        Check which build Python imports, then install the framework's GPU build: MXNet's
        mxnet-cuXXX pip package of the CUDA version, or a clean rebuild with USE_CUDA=1 (make
        clean first: objects of the CPU build are otherwise reused) and the Python package
        reinstalled from it; PaddlePaddle's paddlepaddle-gpu in place of paddlepaddle.

    References:
        - https://github.com/apache/mxnet/blob/1.9.1/src/storage/gpu_device_storage.h (LOG(FATAL) << "Please compile with CUDA enabled")
        - https://github.com/apache/mxnet/blob/1.9.1/include/mxnet/base.h (Context::Create)
        - https://github.com/apache/mxnet/issues/260 (the Python package of a build without CUDA; make clean, rebuild, reinstall)
        - https://github.com/PaddlePaddle/Paddle/blob/develop/python/paddle/device/__init__.py (set_device)
        - https://www.paddlepaddle.org.cn/install/quick (paddlepaddle-gpu)
        - https://github.com/NVIDIA/apex/blob/master/setup.py (the extensions --cpp_ext and --cuda_ext build)
    """
    s = next((t for t in catalogued(f, SYMBOL) if t.get("family") != "python_import"), None)
    if s is None:
        yield from _extension_not_built(f)
        return
    if s.get("id") == "torch:device-type-not-linked" and s.get("device") == "xpu":
        yield from _xpu_not_registered(f, s)
        return
    name, fix = _FRAMEWORKS.get(str(s.get("family")), (str(s.get("family")), ""))
    if s.get("family") == "tensorflow" and first_symptom(f, "prose:windows-said"):
        fix = _TF_WINDOWS_FIX   # the user's machine runs Windows: the Linux wheel's line is not for it
    yield Hit(message=f"the {name} installed was built without GPU support and the program asked for the GPU (line "
                      f"{s.get('line')}: \"{told_text(s)}\"): the node's GPU, its driver and CUDA are not the cause; {name}'s "
                      "GPU build is needed",
              fix=fix or "# install the framework's GPU build", evidence=told_evidence(s))


def _extension_not_built(f: FactView) -> Iterator[Hit]:
    """Python's "No module named" for an extension module a package builds only when its GPU build is
    asked for (knowledge/gpu_extension_modules.toml): that package was installed without it."""
    packages = knowledge.load("gpu_extension_modules")["packages"]
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") != "python_import:no-module-named":
            continue
        module = str(s.get("module") or "")
        key, pkg = next(((k, p) for k, p in packages.items() if module in p["modules"]), (None, None))
        if pkg is None:
            continue
        yield Hit(message=f"{pkg['name']} is installed without its GPU extensions: {module} is one it compiles only "
                          f"when built with {pkg['flag']} (line {s.get('line')}: \"{told_text(s)}\"); a Python-only "
                          "build imports, and the first use of a fused kernel fails",
                  fix=(f"python -c 'import {key}; print({key}.__file__)'   # the {key} this Python imports (PyPI's "
                       f"'{key}' package is another project: pip uninstall -y {key} first)\n"
                       f"git clone {pkg['repository']} && cd {key} && {pkg['install']}   # in the environment that "
                       "runs the job, with the CUDA toolkit (nvcc) of torch's CUDA version on PATH"),
                  evidence={**told_evidence(s), "module": module, "package": key})
        return


def _xpu_not_registered(f: FactView, s) -> Iterator[Hit]:
    """torch's "not linked with support for xpu devices": before torch's own XPU builds the device
    is registered by importing intel_extension_for_pytorch. Code shown moving to xpu without that
    import is the program's (an info); with it, the extension installed has no XPU backend."""
    fix = _FRAMEWORKS["torch"][1]
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    if first_symptom(f, "torch:ipex-imported"):
        yield Hit(message=f"torch has no xpu backend although the code imports intel_extension_for_pytorch ({said}): "
                          "the extension installed is a release without XPU support (its CPU release), or torch "
                          "lacks XPU; the node's GPU and driver are not the cause",
                  fix=fix, evidence=told_evidence(s))
    elif first_symptom(f, "torch:xpu-device-used"):
        yield Hit(message=f"the code moves to the xpu device without importing intel_extension_for_pytorch ({said}): "
                          "with Intel's extension, the import is what registers the xpu device with torch",
                  severity="info",
                  fix="import intel_extension_for_pytorch as ipex   # after import torch, before the first .to('xpu')",
                  fix_lang="python", evidence=told_evidence(s))
    else:
        yield Hit(message=f"torch has no xpu backend ({said}): either the program did not import "
                          "intel_extension_for_pytorch, which registers the device, or the torch or extension installed "
                          "has no XPU support",
                  severity="warning", fix="import intel_extension_for_pytorch as ipex   # first, in the program; if "
                                          "the error stays, the install has no XPU backend:\n" + fix,
                  evidence=told_evidence(s))
