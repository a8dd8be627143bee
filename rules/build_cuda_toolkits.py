"""Two CUDA toolkits on one machine and a build that chose the other one: a build's own line naming
the CUDA release it configured with (CMake's FindCUDA / FindCUDAToolkit, PyTorch's 2017 THC build)
beside an nvcc --version banner of another release in the same paste (knowledge/messages/
cmake_cuda.toml, nvcc.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, told_text, version_of

SYMBOL = "build-picked-other-cuda-toolkit"
_CHOSE = ("cmake_cuda:found-cuda-version", "cmake_cuda:torch-thc-got-cuda-version")


@rule("SW117", SYMBOL, "warning", "a build configured with another CUDA toolkit than the nvcc on PATH", impact=5)
def build_picked_other_cuda_toolkit(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, the CUDA release the build configured with ("-- Found CUDA: PATH
        (found version "X")", FindPackageHandleStandardArgs as FindCUDA and FindCUDAToolkit call
        it; PyTorch's 2017 "-- got cuda version X") and nvcc --version's "Cuda compilation tools,
        release Y" of another release in the same paste.

    Why it matters:
        FindCUDA takes its toolkit from CUDA_TOOLKIT_ROOT_DIR (or CUDA_HOME, or the /usr/local/cuda
        link) and uses that toolkit's nvcc, headers and libraries, whatever nvcc the shell finds
        first; a CMake cache keeps the first choice. With two toolkits installed the build then
        compiles for the other release: architectures it does not know (compute_61 under CUDA 7.5),
        workarounds meant for it, and libraries that do not match the runtime used later.

    How to fix:
        Point the build at the toolkit meant (CUDA_HOME / CUDA_TOOLKIT_ROOT_DIR to the directory of
        the nvcc on PATH), clear its CMake cache, and configure again; or remove the toolkit that
        is no longer wanted.

    References:
        - https://cmake.org/cmake/help/latest/module/FindCUDA.html (CUDA_TOOLKIT_ROOT_DIR)
        - https://github.com/Kitware/CMake/blob/master/Modules/FindPackageHandleStandardArgs.cmake (the "Found" line)
        - https://github.com/pytorch/pytorch/issues/2651 (CUDA 7.5 found beside 8.0: the build picked the older)
    """
    told = f.get("ticket.symptoms") or []
    chose = [s for s in told if s.get("id") in _CHOSE and s.get("version")]
    banner = next((s for s in told if s.get("id") == "nvcc:version-banner" and s.get("release")), None)
    if not chose or banner is None:
        return
    configured = chose[-1]   # a configure run again prints the one that counts last
    used, on_path = str(configured["version"]), str(banner["release"])
    a, b = version_of(used), version_of(on_path)
    if a is None or b is None or a.release[:2] == b.release[:2]:
        return
    path = configured.get("path")
    where = f" at {path}" if path else ""
    evidence = told_evidence(configured)
    evidence.update({"cuda.configured": used, "cuda.nvcc_on_path": on_path})
    yield Hit(message=f"the build configured with CUDA {used}{where} (line {configured.get('line')}: "
                      f"\"{told_text(configured)}\"), while the nvcc on PATH is release {on_path} (line {banner.get('line')}): "
                      "two CUDA toolkits are installed and the build picked the other one, whose nvcc, headers and "
                      "libraries it then uses",
              fix=("ls -d /usr/local/cuda*; readlink -f /usr/local/cuda; command -v nvcc; echo \"CUDA_HOME=$CUDA_HOME\"   "
                   "# the toolkits installed, the one the link and CUDA_HOME name, and the one on PATH\n"
                   "export CUDA_HOME=\"$(dirname \"$(dirname \"$(command -v nvcc)\")\")\" "
                   "CUDA_TOOLKIT_ROOT_DIR=\"$(dirname \"$(dirname \"$(command -v nvcc)\")\")\"   # the toolkit of the nvcc on "
                   f"PATH (release {on_path})\n"
                   "# then delete the build's CMakeCache.txt (or its build folder: python setup.py clean) and configure "
                   "again; or remove the toolkit no longer wanted"),
              evidence=evidence)
