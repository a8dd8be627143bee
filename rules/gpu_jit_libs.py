"""Driver libraries a GPU program finds by its own means, not the dynamic loader's: Triton's lookup
of libcuda.so.1 through the linker cache (SW105), and the driver's PTX JIT compiler that CUDA loads
to compile PTX for the GPU (GPU044). Both recorded on a lent H200 with the library out of reach
(tests/fixtures/emitters_gpu/h200-triton-libcuda-not-found.txt, h200-cuda-ptx-jit-missing.txt)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

TRITON = "triton-libcuda-not-found"
PTX_JIT = "ptx-jit-library-missing"

_TRITON_FIX = (
    "ldconfig -p | grep -F libcuda.so.1   # nothing: the linker cache, where Triton looks first, does not list the driver\n"
    "export TRITON_LIBCUDA_PATH=\"$(dirname \"$(ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 "
    "/usr/local/nvidia/lib64/libcuda.so.1 /usr/lib64-nvidia/libcuda.so.1 /.singularity.d/libs/libcuda.so.1 2>/dev/null "
    "| head -n 1)\")\"   # the first folder where drivers and containers put it: Triton 3 takes it before the cache\n"
    "# administrators, or in the image build: sudo ldconfig (a container whose cache was built before the driver's "
    "libraries were mounted lists none)")
# Triton 2.x requires libcuda.so (no .1) in the folder the cache names ("Please create a symlink of libcuda.so to any
# of the file.", triton==2.1.0-2.3.1 triton/common/build.py): a private folder with both links, named by
# TRITON_LIBCUDA_PATH (2.2 and later), or the link in the driver's folder (administrators).
_TRITON2_LINK_FIX = (
    "ldconfig -p | grep -F libcuda.so   # the cache lists libcuda.so.1 but no libcuda.so beside it\n"
    "d=$(ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 "
    "/usr/lib64-nvidia/libcuda.so.1 /.singularity.d/libs/libcuda.so.1 2>/dev/null | head -n 1); echo \"${d:-no libcuda.so.1 "
    "in the usual folders}\"   # the driver's libcuda.so.1\n"
    "[ -n \"$d\" ] && mkdir -p ~/.local/lib/triton-libcuda && ln -sf \"$d\" ~/.local/lib/triton-libcuda/libcuda.so && ln -sf "
    "\"$d\" ~/.local/lib/triton-libcuda/libcuda.so.1 && export TRITON_LIBCUDA_PATH=~/.local/lib/triton-libcuda   # Triton "
    "2.2 and 2.3 read this folder first\n"
    "[ -n \"$d\" ] && sudo ln -sf \"$d\" \"${d%/*}/libcuda.so\"   # administrators instead: the link in the driver's own "
    "folder, for every user and Triton 2.1")
_PTX_FIX = (
    "ldconfig -p | grep -F libnvidia-ptxjitcompiler   # nothing: the driver's PTX JIT compiler is not where the program ran\n"
    "grep -n ptxjitcompiler /etc/apptainer/nvliblist.conf /etc/singularity/nvliblist.conf 2>/dev/null   # Apptainer --nv "
    "binds only the libraries this list names\n"
    "echo \"$NVIDIA_DRIVER_CAPABILITIES\"   # a docker or Kubernetes container gets it with 'compute' (NVIDIA Container Toolkit)\n"
    "nvidia-smi --query-gpu=compute_cap --format=csv,noheader   # or build the program with machine code for this GPU "
    "(nvcc -arch=sm_XY for compute capability X.Y): no JIT is then needed")


@rule("SW105", TRITON, "error", "Triton cannot find the driver's libcuda.so.1 in the linker cache", impact=6)
def triton_libcuda_not_found(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Triton's "AssertionError: libcuda.so cannot found!", which torch.compile and every Triton
        kernel meet at their first launch: Triton builds its driver helper against libcuda and looks
        for libcuda.so.1 by itself, in TRITON_LIBCUDA_PATH, then in the output of /sbin/ldconfig -p,
        then in the LD_LIBRARY_PATH folders, and asserts when none holds it.

    Why it matters:
        The driver works (torch's own CUDA calls, which the dynamic loader resolves, succeed in the
        same process), but no Triton kernel runs: a container whose linker cache was built before
        the driver was mounted, a driver installed outside the cache's folders (Colab's
        /usr/lib64-nvidia, Apptainer's /.singularity.d/libs, NixOS), or a missing /sbin/ldconfig.
        The hint after the assertion says which: "Please make sure GPU is set up and then run
        /sbin/ldconfig" (the cache lists none; "setup" in Triton 2.2 and 2.3), "Possible files are
        located at [...]" (the cache lists one: in Triton 3.x a stale entry where no file is, in
        Triton 2.x, "... to any of the file.", a libcuda.so.1 without the libcuda.so link 2.x
        requires). Not where the paste shows the driver itself failing: gpu-driver-unusable's.
        Also GNU ld's "skipping incompatible <folder>/libcuda.so when searching for -lcuda" with
        "cannot find -lcuda", in English or in the user's language: Triton's link of its launcher
        against the folders the cache lists found there only another architecture's libcuda.so.

    How to fix:
        Find the folder that holds libcuda.so.1 and give it to Triton (TRITON_LIBCUDA_PATH) or to
        the linker cache (ldconfig, administrators or the image build).

    References:
        - https://github.com/triton-lang/triton/blob/main/third_party/nvidia/backend/driver.py (libcuda_dirs)
        - https://github.com/pytorch/pytorch/issues/107960
        - https://github.com/triton-lang/triton/blob/v2.3.1/python/triton/common/build.py (libcuda_dirs of Triton 2.x; read in the triton==2.1.0, 2.2.0 and 2.3.1 wheels)
        - https://github.com/2noise/ChatTTS/issues/213 (the linker's pair, printed in zh_CN)
    """
    told = catalogued(f, TRITON)
    if not told or catalogued(f, "gpu-driver-unusable"):
        return
    linked = {s.get("key"): s for s in told if s.get("family") == "linker"}
    told = [s for s in told if s.get("family") != "linker"]
    if not told:
        yield from _link_without_libcuda(linked)
        return
    s = told[0]
    located = s.get("located")
    if located and s.get("symlink") == "file":
        yield Hit(message=f"Triton 2.x cannot use the libcuda the linker cache lists ({located}; line {s.get('line')}: "
                          f"\"{told_text(s)}\"): it requires libcuda.so, the unversioned link, in that folder, and the "
                          "driver package did not install it",
                  fix=_TRITON2_LINK_FIX, evidence={**told_evidence(s), "located": located})
        return
    if located:
        yield Hit(message=f"the linker cache lists libcuda.so.1 at {located}, but Triton finds no such file there (line "
                          f"{s.get('line')}: \"{told_text(s)}\"): the cache is stale (built on another host or image, or "
                          "before the driver's files moved); the driver's library is elsewhere, or not in this container",
                  fix=_TRITON_FIX.replace("# nothing: the linker cache, where Triton looks first, does not list the driver",
                                          "# the entry the cache lists: Triton found no such file there"),
                  evidence={**told_evidence(s), "located": located})
        return
    release = {"setup": "Triton 2.2 or 2.3", "set up": "Triton 3.x"}.get(str(s.get("setup")), "Triton")
    yield Hit(message=f"{release} found no libcuda where it looks (line {s.get('line')}: \"{told_text(s)}\"): neither "
                      "TRITON_LIBCUDA_PATH nor the linker cache (ldconfig -p) nor LD_LIBRARY_PATH names the driver's "
                      "folder, so no Triton kernel (torch.compile's) can be built, while the driver itself may work",
              fix=_TRITON_FIX, evidence=told_evidence(s))


def _link_without_libcuda(linked: dict) -> Iterator[Hit]:
    """GNU ld's "skipping incompatible <folder>/libcuda.so when searching for -lcuda" and "cannot find
    -lcuda" together: the folders the link was given hold only another architecture's libcuda.so, as
    when the linker cache lists only the 32-bit /lib/i386-linux-gnu/libcuda.so and Triton links its
    launcher against the cache's folders. Either line alone says less (a warning; any link line
    without the stubs folder) and is left to the linker error it is."""
    skipped, missing = linked.get("ld-skipping-incompatible-libcuda"), linked.get("ld-cannot-find-lcuda")
    if not skipped or not missing:
        return
    said = f" (printed in {missing['language']})" if missing.get("language") else ""
    yield Hit(message=f"the link against libcuda failed (line {missing.get('line')}: \"{told_text(missing)}\"{said}): the only "
                      f"libcuda.so in the folders it was given is {skipped.get('file') or 'of another architecture'} "
                      f"(line {skipped.get('line')}), which GNU ld skipped as incompatible with this machine; Triton "
                      "(torch.compile) links its launcher with -lcuda against the folders the linker cache lists, so "
                      "the cache names no folder with this architecture's libcuda.so",
              fix=_LINK_FIX, evidence={**told_evidence(missing), "skipped": skipped.get("file"),
                                       "skipped_line": skipped.get("line")})


# The cache's libcuda entries and the driver's own folder; a private folder with both links for Triton
# (TRITON_LIBCUDA_PATH, read first by Triton 2.2 and later), the stubs folder for a link of one's own.
_LINK_FIX = (
    "ldconfig -p | grep -F libcuda.so   # the cache's libcuda entries: here only another architecture's (i386, lib32)\n"
    "d=$(ls /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1 /usr/local/nvidia/lib64/libcuda.so.1 "
    "/usr/lib64-nvidia/libcuda.so.1 /usr/lib/aarch64-linux-gnu/libcuda.so.1 2>/dev/null | head -n 1); echo "
    "\"${d:-no 64-bit libcuda.so.1 in the usual folders: is the NVIDIA driver installed here?}\"\n"
    "[ -n \"$d\" ] && mkdir -p ~/.local/lib/triton-libcuda && ln -sf \"$d\" ~/.local/lib/triton-libcuda/libcuda.so && ln -sf "
    "\"$d\" ~/.local/lib/triton-libcuda/libcuda.so.1 && export TRITON_LIBCUDA_PATH=~/.local/lib/triton-libcuda   # Triton "
    "2.2 and later link against this folder first\n"
    "# administrators instead: the driver's folder in /etc/ld.so.conf.d and sudo ldconfig, with a libcuda.so link "
    "beside libcuda.so.1; a link of your own: -L\"${CUDA_HOME:-/usr/local/cuda}/lib64/stubs\" (the toolkit's stub)")


@rule("GPU044", PTX_JIT, "error", "the NVIDIA driver's PTX JIT compiler is missing where the program ran", impact=7,
      also={"warning": "JIT compilation disabled (CUDA_DISABLE_PTX_JIT)"})
def ptx_jit_library_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        CUDA's cudaErrorJitCompilerNotFound / CUDA_ERROR_JIT_COMPILER_NOT_FOUND (221, "PTX JIT
        compiler library not found"): a program whose kernels are PTX for this GPU (no machine code
        for its compute capability) needs the driver's libnvidia-ptxjitcompiler.so.1 to compile
        them, and it is not where the program ran. As a warning, cudaErrorJitCompilationDisabled /
        CUDA_ERROR_JIT_COMPILATION_DISABLED (223): CUDA_DISABLE_PTX_JIT forbids the same compile.

    Why it matters:
        The driver's library list of a container is the usual cause: Apptainer's --nv binds only
        what nvliblist.conf names, and the NVIDIA Container Toolkit mounts it with the compute
        capability. Programs with machine code for the GPU run; PTX-only ones (new GPUs, JIT
        libraries, Numba, CuPy's RawKernel) fail at their first kernel.

    How to fix:
        Give the container the driver's PTX JIT compiler (nvliblist.conf, NVIDIA_DRIVER_CAPABILITIES
        with compute), or build the program with machine code for the GPU's compute capability.
        Where CUDA_DISABLE_PTX_JIT is set, unset it.

    References:
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorJitCompilerNotFound = 221, cudaErrorJitCompilationDisabled = 223)
        - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221)
        - https://apptainer.org/docs/user/main/gpu.html (nvliblist.conf: the libraries --nv binds)
        - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html (CUDA_DISABLE_PTX_JIT, just-in-time compilation)
    """
    told = catalogued(f, PTX_JIT)
    if not told:
        return
    s = told[0]
    disabled = "compilation" in str(s.get("key", "")).lower() or "COMPILATION_DISABLED" in str(s.get("key", ""))
    if disabled:
        yield Hit(message=f"CUDA refused to JIT-compile PTX (line {s.get('line')}: \"{told_text(s)}\"): JIT compilation "
                          "is disabled, typically CUDA_DISABLE_PTX_JIT=1 in the environment",
                  fix="env | grep -E '^CUDA_(DISABLE_PTX_JIT|FORCE_PTX_JIT)='   # set: unset CUDA_DISABLE_PTX_JIT and rerun",
                  evidence=told_evidence(s), severity="warning")
        return
    yield Hit(message=f"CUDA could not load the driver's PTX JIT compiler (line {s.get('line')}: \"{told_text(s)}\"): "
                      "libnvidia-ptxjitcompiler.so.1 is not where the program ran, so kernels shipped as PTX for this "
                      "GPU cannot be compiled",
              fix=_PTX_FIX, evidence=told_evidence(s))
