"""The CUDA toolkit's link-time stub libcuda.so loaded at run time in place of the driver
(knowledge/messages/cuda.toml cudaErrorStubLibrary, cuda_driver.toml CUDA_ERROR_STUB_LIBRARY)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cuda-stub-libcuda-loaded"

_FIX = (
    "ldconfig -p | grep libcuda.so.1   # the driver's own libcuda.so.1 (from the NVIDIA driver, not the toolkit)\n"
    "echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -n stubs   # a .../stubs folder here is what put the stub first\n"
    "export LD_LIBRARY_PATH=$(echo \"$LD_LIBRARY_PATH\" | tr : '\\n' | grep -v '/stubs/*$' | paste -sd: -)   # drop it, then rerun\n"
    "# keep lib64/stubs in LIBRARY_PATH or -L at link time only; in a container, run it with the NVIDIA runtime (--gpus all) so the host's libcuda.so.1 is mounted")


@rule("SW103", SYMBOL, "error", "the CUDA toolkit's stub libcuda.so was loaded in place of the driver", impact=5)
def cuda_stub_libcuda_loaded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, CUDA's error 34: the runtime's cudaErrorStubLibrary ("CUDA driver is a
        stub library", as torch, llama.cpp's ggml_cuda_init and other CUDA checks print it) or the
        driver API's CUDA_ERROR_STUB_LIBRARY (cudarc, numba and other driver API callers). On the
        node: the libcuda.so.1 the dynamic loader finds first for this job (LD_LIBRARY_PATH before
        the cache) is, or links to, a file in a stubs folder (recorded on an H200 with the stub first:
        tests/fixtures/nodes/h200-fc-env-stub-libcuda-2026-11-28).

    Why it matters:
        The CUDA toolkit ships a stub libcuda.so (lib64/stubs, targets/<arch>/lib/stubs) so that a
        program can be linked on a machine without the NVIDIA driver; it exports every driver entry
        point and fails each with this error. A program that loads it at run time (LD_LIBRARY_PATH
        or an ld.so.conf entry naming the stubs folder ahead of the driver's library, a container
        or conda environment that put it first, a container run without the driver's libraries)
        sees no GPU at all although nvidia-smi works.

    How to fix:
        Find the driver's libcuda.so.1 (ldconfig -p | grep libcuda.so.1) and the stubs folder on
        the search path (echo "$LD_LIBRARY_PATH" | tr : '\\n' | grep -n stubs); take the stubs
        folder out of LD_LIBRARY_PATH (and out of /etc/ld.so.conf.d, then ldconfig) and keep it
        for linking only (LIBRARY_PATH, -L). In a container, run it with the NVIDIA container
        runtime so that the host driver's libcuda.so.1 is mounted.

    References:
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorStubLibrary = 34; the same doc comment in driver_types.h of the nvidia-cuda-runtime-cu12 12.8.90 wheel)
        - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (CUDA_ERROR_STUB_LIBRARY = 34; cuda.h of CUDA 13.0)
        - http://developer.download.nvidia.com/compute/cuda/6_5/rel/docs/CUDA_Toolkit_Release_Notes.pdf (stubs of the CUDA Driver library, libcuda.so, to link against at build time)
        - https://github.com/NVIDIA/warp/issues/219
        - https://github.com/NixOS/nixpkgs/issues/320145
    """
    stub = _stub_on_node(f)
    if stub is not None:
        yield stub
        return
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the program loaded the CUDA toolkit's stub libcuda.so "
                      "(a link-time placeholder, CUDA error 34) instead of the NVIDIA driver's libcuda.so.1: "
                      "a stubs folder comes first on its library search path",
              fix=_FIX, evidence=told_evidence(s))


def _stub_on_node(f: FactView):
    """The libcuda.so.1 the loader takes first for this job (checks/devices.py) is, or links to, the
    toolkit's stub: the path or its target runs through a folder named stubs."""
    libs = f.get("devices.driver_libraries")
    targets = f.get("devices.driver_library_targets")
    if not isinstance(libs, dict) or not libs.get("libcuda.so.1"):
        return None
    path = str(libs["libcuda.so.1"])
    target = str((targets if isinstance(targets, dict) else {}).get("libcuda.so.1") or path)
    if "/stubs/" not in path and "/stubs/" not in target:
        return None
    shown = path if target == path else f"{path} -> {target}"
    return Hit(message=f"the first libcuda.so.1 the dynamic loader finds for this job is the CUDA toolkit's stub "
                       f"({shown}): every CUDA program here fails with error 34, 'CUDA driver is a stub library'",
               fix=_FIX, evidence={"devices.driver_libraries": libs, "devices.driver_library_targets": targets})
