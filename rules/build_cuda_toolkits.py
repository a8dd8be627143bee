"""Two CUDA toolkits on one machine and a build that chose the other one: a build's own line naming
the CUDA release it configured with (CMake's FindCUDA / FindCUDAToolkit, PyTorch's 2017 THC build)
beside an nvcc --version banner of another release in the same paste (knowledge/messages/
cmake_cuda.toml, nvcc.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, major_minor, told_evidence, told_text, version_of

SYMBOL = "build-picked-other-cuda-toolkit"
_CHOSE = ("cmake_cuda:found-cuda-version", "cmake_cuda:torch-thc-got-cuda-version")


# TensorFlow 1.x's configure (third_party/gpus/cuda_configure.bzl) runs CUDA_TOOLKIT_PATH's nvcc and
# fails where its release is not TF_CUDA_VERSION's: the message names both releases.
_TF_CONFIGURE = "tensorflow:configure-nvcc-version-mismatch"


def _tensorflow_configure(s: dict) -> Hit:
    nvcc, wanted = str(s["nvcc"]), str(s["wanted"])
    evidence = told_evidence(s)
    evidence.update({"cuda.configured": wanted, "cuda.nvcc_found": nvcc})
    return Hit(message=f"TensorFlow's configure found an nvcc of CUDA {nvcc} where the build asks for CUDA {wanted} "
                       f"(line {s.get('line')}: \"{told_text(s)}\"): the toolkit at CUDA_TOOLKIT_PATH (or the nvcc it "
                       "found) is another CUDA release than the one the build is configured for",
               fix=("ls -d /usr/local/cuda*; command -v nvcc; nvcc --version | tail -1   # the toolkits installed and the "
                    "release of each nvcc\n"
                    f"export CUDA_TOOLKIT_PATH=/usr/local/cuda-{major_minor(wanted)}   # the toolkit of CUDA {wanted}, "
                    "where it is installed; then ./configure again (or TF_CUDA_VERSION set to the release of the nvcc "
                    "found, if that is the one meant)\n"
                    "# in an nvidia/cuda container: a -runtime tag holds no nvcc; build in the -devel tag of the same "
                    "CUDA release, not with the distribution's nvidia-cuda-toolkit (another release)"),
               evidence=evidence)


@rule("SW117", SYMBOL, "warning", "a build configured with another CUDA toolkit than the nvcc on PATH", impact=5)
def build_picked_other_cuda_toolkit(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, the CUDA release the build configured with ("-- Found CUDA: PATH
        (found version "X")", FindPackageHandleStandardArgs as FindCUDA and FindCUDAToolkit call
        it; PyTorch's 2017 "-- got cuda version X") and nvcc --version's "Cuda compilation tools,
        release Y" of another release in the same paste; TensorFlow 1.x's configure saying "CUDA
        version detected from nvcc (X) does not match TF_CUDA_VERSION (Y)".

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
        - https://github.com/tensorflow/tensorflow/pull/6608 (cuda_configure.bzl: the nvcc release matched against TF_CUDA_VERSION)
    """
    told = f.get("ticket.symptoms") or []
    tf = first_symptom(f, _TF_CONFIGURE)   # its pattern holds both releases
    if tf is not None:
        yield _tensorflow_configure(tf)
        return
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


@rule("SW127", "cuda-toolkit-older-than-required", "error",
      "the CUDA toolkit a build found is older than the release the project requires", impact=5)
def cuda_toolkit_older_than_required(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted CMake log, FindCUDA's (or FindCUDAToolkit's) "Could NOT find CUDA: Found
        unsuitable version "5.5", but required is at least "6.5" (found /usr)".

    Why it matters:
        The project asks find_package for a minimum CUDA release; the toolkit CMake found first
        (a distribution's nvidia-cuda-toolkit under /usr, an old /usr/local/cuda link, the nvcc
        first on PATH) is older, so configuration stops, even where a newer toolkit is installed
        beside it.

    How to fix:
        Point CMake at a toolkit of the required release or newer (CUDA_TOOLKIT_ROOT_DIR for
        FindCUDA, CUDAToolkit_ROOT for FindCUDAToolkit, or that toolkit's nvcc first on PATH;
        module load cuda on a cluster), delete the build's CMake cache, and configure again.

    References:
        - https://cmake.org/cmake/help/latest/module/FindCUDA.html (CUDA_TOOLKIT_ROOT_DIR)
        - https://cmake.org/cmake/help/latest/module/FindCUDAToolkit.html (CUDAToolkit_ROOT)
        - https://github.com/Kitware/CMake/blob/master/Modules/FindPackageHandleStandardArgs.cmake
    """
    s = first_symptom(f, "cmake_cuda:found-unsuitable-cuda-version")
    if s is None:
        return
    found, required, path = s.get("version"), s.get("required"), s.get("path")
    where = f" at {path}" if path else ""
    yield Hit(message=f"CMake found CUDA {found}{where}, and the project requires at least {required} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): the first toolkit CMake looked at is too old"
                      + (" (under /usr: the distribution's nvidia-cuda-toolkit package)" if path == "/usr" else ""),
              fix=("ls -d /usr/local/cuda*; module avail cuda 2>&1 | head   # the toolkits installed, and the site's\n"
                   f"cmake -DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda-{required} -DCUDAToolkit_ROOT=/usr/local/cuda-{required} ..   "
                   f"# a toolkit of CUDA {required} or newer (module load cuda puts its nvcc first on PATH); delete "
                   "CMakeCache.txt first"),
              evidence=told_evidence(s))
