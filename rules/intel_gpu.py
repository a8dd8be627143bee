"""Intel GPUs through oneAPI Level Zero and SYCL: the user-space GPU driver (Intel's compute runtime,
libze_intel_gpu.so.1) that the Level Zero loader must find (knowledge/messages/level_zero.toml), and a
torch built without XPU asked for the Intel GPU (knowledge/messages/torch.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_catalogued, told_evidence, told_text

SYMBOL = "intel-gpu-runtime-missing"
# What a job sets or installs only to run on an Intel GPU: the live check needs one of them, so an
# Intel iGPU that nobody computes on is never reported.
_INTENT_VARS = ("ONEAPI_DEVICE_SELECTOR", "SYCL_DEVICE_FILTER", "ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY")
_FIX = ("ls -l /dev/dri/   # renderD* nodes: the kernel driver (i915 or xe) holds the GPU\n"
        "ldconfig -p | grep -E 'libze_intel_gpu|libze_loader'   # Intel's Level Zero GPU driver (compute runtime) and "
        "the loader\n"
        "ZE_ENABLE_LOADER_DEBUG_TRACE=1 sycl-ls   # the loader's account of the drivers it tried; [level_zero:gpu] lines "
        "when the runtime sees the GPU\n"
        "sudo apt-get install libze-intel-gpu1 libze1   # Ubuntu 24.04's packages of the compute runtime and loader "
        "(intel/compute-runtime#832); other systems: Intel's packages from github.com/intel/compute-runtime/releases "
        "or dgpu-docs.intel.com (on a cluster node, the administrators)\n"
        "docker run --device /dev/dri ...   # in a container: the render nodes passed in, and the compute runtime "
        "installed in the image")
# Before Ubuntu 24.04 packaged the runtime, Intel's own repository named the packages the maintainer
# pointed at in intel/compute-runtime#477.
_OLD_UBUNTU = ("sudo apt-get install intel-level-zero-gpu level-zero   # Ubuntu 20.04/22.04 with Intel's graphics repository "
               "(dgpu-docs.intel.com): the Level Zero GPU driver and loader beside intel-opencl-icd")
_OTHER_VENDORS = {"cuda", "ext_oneapi_cuda", "hip", "ext_oneapi_hip"}
_STRONG = {"level_zero:loader-gpu-driver-load-failed": "the Level Zero loader could not load Intel's GPU driver",
           "level_zero:loader-zero-drivers": "the Level Zero loader found no driver at all",
           "level_zero:ZE_RESULT_ERROR_UNINITIALIZED": "Level Zero found no driver it could initialise",
           "level_zero:zello-no-matching-device": "no Level Zero driver reported a GPU"}


@rule("SW062", SYMBOL, "error", "an Intel GPU program finds no Level Zero GPU driver (Intel's compute runtime)", impact=7,
      also={"warning": "SYCL found no device of the type asked for, sycl-ls lists no Level Zero GPU, or an Intel GPU "
                       "job on a node without the driver (live)"})
def intel_gpu_runtime_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, oneAPI Level Zero finding no GPU driver: its sample's "Did NOT find
        matching ZE_DEVICE_TYPE_GPU device!" and "Driver not initialized:
        ZE_RESULT_ERROR_UNINITIALIZED" (the code zeInit returns with no driver), the loader's "0 Drivers Discovered" and (with
        ZE_ENABLE_LOADER_DEBUG_TRACE=1) "Load Library of libze_intel_gpu.so.1 failed with ...";
        and SYCL's "No device of requested type available" (warning: a device selector can
        filter every device out too). A pasted sycl-ls listing (each of its three layouts,
        "[opencl:0] CPU : ...", "[opencl:cpu:0] ...", "[level_zero:gpu][level_zero:0] ...") that
        shows no GPU, or a GPU through OpenCL only, is a warning: the listing cannot tell a node
        without an Intel GPU from one whose Level Zero runtime is missing; id's groups beside it
        say whether the render group is the cause. Live (warning): an Intel display-class device on the PCI
        bus, a job that means to use it (ONEAPI_DEVICE_SELECTOR, ZE_AFFINITY_MASK, a torch
        +xpu build), and neither libze_intel_gpu.so.1 nor its legacy1 twin where the Level Zero
        loader looks (LD_LIBRARY_PATH, the system library folders, /etc/ld.so.conf's).

    Why it matters:
        The Level Zero loader (libze_loader) only dispatches: the GPU driver that does the work
        is a separate library of Intel's compute runtime. Without it zeInit fails, SYCL and
        PyTorch's XPU backend see no GPU, and the program stops or falls back to the CPU.

    How to fix:
        Install Intel's compute runtime (libze-intel-gpu1 on Ubuntu 24.04; Intel's packages
        elsewhere), check that /dev/dri/renderD* exists and is accessible, and pass the render
        nodes into containers (--device /dev/dri).

    References:
        - https://github.com/oneapi-src/level-zero/issues/65
        - https://github.com/intel/compute-runtime/issues/477 (sycl-ls without level_zero:gpu: the Level Zero GPU packages missing)
        - https://github.com/intel/llvm/blob/sycl/sycl/tools/sycl-ls/sycl-ls.cpp
        - https://github.com/intel/compute-runtime/releases
        - https://github.com/oneapi-src/level-zero/blob/v1.32.0/source/loader/linux/driver_discovery_lin.cpp
        - https://dgpu-docs.intel.com/driver/installation.html
    """
    told = catalogued(f, SYMBOL)
    strong = next((s for s in told if s.get("id") in _STRONG), None)
    if strong is not None:
        yield Hit(message=f"{_STRONG[strong['id']]} (line {strong.get('line')}: \"{told_text(strong)}\"): Intel's "
                          "compute runtime (libze_intel_gpu.so.1), the user-space GPU driver Level Zero and SYCL need, is "
                          "not installed, not where the loader looks, or older than the loader (level-zero#196)",
                  fix=_FIX, evidence=told_evidence(strong))
        return
    sycl = next((s for s in told if s.get("id") == "level_zero:sycl-no-device-of-requested-type"), None)
    if sycl is not None:
        yield Hit(message=f"SYCL found no device of the type asked for (line {sycl.get('line')}: \"{told_text(sycl)}\"): "
                          "no Level Zero or OpenCL GPU driver is installed for the GPU, or ONEAPI_DEVICE_SELECTOR "
                          "filters every device out",
                  severity="warning", fix="echo \"$ONEAPI_DEVICE_SELECTOR\"   # empty, or one that names the GPU "
                                          "(level_zero:gpu)\n" + _FIX,
                  evidence=told_evidence(sycl))
        return
    listed = _sycl_listing(f)
    if listed is not None:
        yield listed
        return
    if told or f.get("ticket.symptoms"):
        return
    yield from _live(f)


def _sycl_listing(f: FactView):
    """A pasted sycl-ls listing that shows no GPU (every device a CPU, an FPGA emulator or the host
    device), or a GPU through OpenCL only: SYCL's runtime found no Intel GPU driver for Level Zero.
    A warning: the listing cannot tell a node without an Intel GPU from one whose runtime is missing."""
    rows = [s for s in f.get("ticket.symptoms") or [] if s.get("id") == "level_zero:sycl-ls-device"]
    if not rows:
        return None
    kinds = [(str(s.get("backend")), str(s.get("devtype") or s.get("oldtype") or "").lower()) for s in rows]
    shown = ", ".join(sorted({f"{b}:{t}" if t else b for b, t in kinds}))
    gpu_backends = {b for b, t in kinds if t == "gpu"}
    # A GPU through Level Zero is the healthy listing; one through CUDA or HIP only is an NVIDIA or
    # AMD GPU's (SYCL's other backends), not an Intel GPU without its runtime.
    if any("level_zero" in b for b in gpu_backends) or (gpu_backends and not gpu_backends - _OTHER_VENDORS):
        return None
    groups = next((str(s.get("groups") or "") for s in f.get("ticket.symptoms") or [] if s.get("id") == "level_zero:id-groups"),
                  None)
    who = ""
    if groups is not None:
        member = [g for g in ("render", "video") if f"({g})" in groups]
        who = (f"; the user is in the {' and '.join(member)} group{'s' if len(member) > 1 else ''}, so the render node's "
               "permissions are not the cause" if "render" in member else
               "; the user is not in the render group (id), which the GPU's render node needs: sudo usermod -aG render $USER")
    first = rows[0]
    what = ("lists the GPU through OpenCL only, with no Level Zero GPU device" if gpu_backends
            else "lists no GPU device at all")
    return Hit(message=f"sycl-ls {what} (line {first.get('line')} on: {shown}){who}: where the node has an Intel GPU, "
                       "Intel's Level Zero GPU driver (the compute runtime's libze_intel_gpu.so.1) or the Level Zero loader "
                       "is not installed; the OpenCL runtime alone (intel-opencl-icd) does not give SYCL a level_zero:gpu "
                       "device (intel/compute-runtime#477)",
               severity="warning", fix=_FIX + "\n" + _OLD_UBUNTU,
               evidence=told_evidence(first))


def _live(f: FactView) -> Iterator[Hit]:
    pci = f.get("pci.gpus")
    intel = [d for d in pci or [] if isinstance(d, dict) and d.get("vendor_id") == "8086"
             and str(d.get("class_id") or "").startswith("03")]
    if not intel:
        return
    ze = f.get("vendor_loaders.level_zero")
    if not isinstance(ze, dict) or ze.get("gpu_drivers") or ze.get("alt_drivers"):
        return
    env = f.get("env.vars") or {}
    version = str(f.get("torch.version") or "")
    means = [v for v in _INTENT_VARS if env.get(v)] + (["torch " + version] if "+xpu" in version else [])
    if not means:
        return   # an Intel GPU nobody asks to compute on (a desktop's iGPU): not a finding
    yield Hit(message=f"an Intel GPU is on the PCI bus ({intel[0].get('address')}) and this job means to use it "
                      f"({', '.join(means)}), but no Level Zero GPU driver (libze_intel_gpu.so.1) is where the loader "
                      "looks: Level Zero, SYCL and torch's XPU backend will see no GPU",
              severity="warning", fix=_FIX,
              evidence={"pci.address": intel[0].get("address"), "vendor_loaders.level_zero.gpu_drivers": []})


# PyTorch's own instruction for its Intel GPU build (docs/source/notes/get_start_xpu.rst @ 0159f80c):
# the XPU wheels are on PyTorch's index, not PyPI, and need the Intel GPU driver and support packages.
_XPU_INDEX = "https://download.pytorch.org/whl/xpu"


@rule("SW123", "torch-without-xpu", "warning", "torch was asked for an Intel GPU (xpu) but is a build without XPU support",
      impact=7)
def torch_without_xpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted traceback, torch's own refusal of the xpu device: "AssertionError: Torch not
        compiled with XPU enabled" (torch.xpu's lazy initialisation) or "PyTorch was compiled
        without XPU support". Printed by every torch wheel built without XPU, the CPU wheel
        (2.13.0+cpu prints it) and the CUDA wheels alike.

    Why it matters:
        The program runs nothing on the Intel GPU: the environment's torch cannot see one,
        whatever the driver. A warning: on a machine without an Intel GPU the program, not torch,
        is what to change.

    How to fix:
        On a machine with an Intel GPU, with its driver and Intel's support packages installed,
        install PyTorch's XPU build from PyTorch's own index (the XPU wheels are not on PyPI), then
        check torch.xpu.is_available(). Without an Intel GPU, run the program on the CPU.

    References:
        - https://github.com/pytorch/pytorch/blob/main/docs/source/notes/get_start_xpu.rst (pip3 install torch --index-url https://download.pytorch.org/whl/xpu)
        - https://github.com/pytorch/pytorch/blob/main/torch/xpu/__init__.py (_lazy_init)
    """
    s = first_catalogued(f, "torch-without-xpu")
    if s is None:
        return
    yield Hit(message=f"torch refuses the Intel GPU (line {s.get('line')}: \"{told_text(s)}\"): this environment's torch is a "
                      "build without XPU support (a CPU or CUDA wheel), so nothing runs on an Intel GPU; on a machine "
                      "without one, the program must use the CPU",
              fix=("python3 -c 'import torch; print(torch.__version__, torch._C._has_xpu)'   # False: no XPU in this build "
                   "(torch.xpu's own check)\n"
                   f"python3 -m pip install torch --index-url {_XPU_INDEX}   # on a machine with an Intel GPU, its driver "
                   "and Intel's support packages: PyTorch's XPU build (not on PyPI); then torch.xpu.is_available()"),
              evidence=told_evidence(s))
