"""The CUDA math libraries a framework ships (cuFFT, cuBLAS) of a CUDA release older than the GPU's
architecture: its kernels run there through PTX, its libraries do not (knowledge/messages/cufft.toml;
the first release for each architecture, knowledge/cuda.toml [arch_min_toolkit])."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.knowledge.wheels import first_toolkit_for
from hpcdoctor.rules._common import catalogued, cuda_gpus, gpu_of_ticket, told_evidence, told_text, version_of

SYMBOL = "cuda-libraries-predate-gpu"
_CHECK = ("python3 -c 'import torch; print(torch.version.cuda, torch.cuda.get_device_name(), "
          "torch.cuda.get_device_capability())'   # the CUDA release of torch's libraries, and the GPU")
_WHEEL = ("python3 -m pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu{tag}   "
          "# a build of CUDA {need} or newer (keep torchaudio/torchvision of the same release){conda}")
# The pytorch channel's pytorch-cuda metapackage exists for CUDA 11.6 to 12.4 only (anaconda.org/pytorch/
# pytorch-cuda/files; pytorch.github.io previous-versions.md: torch 1.13's first use of it): a release
# before 11.6 is asked for as 11.6, one after 12.4 has no conda build from that channel.
_CONDA_FIRST, _CONDA_LAST = "11.6", "12.4"


def _minor(value) -> Optional[object]:
    v = version_of(str(value)) if value else None
    return version_of(f"{v.major}.{v.minor}") if v is not None and len(v.release) >= 2 else None


def _build_cuda(f: FactView) -> Optional[tuple]:
    """(CUDA release of torch's libraries, where it was read): collect_env's "CUDA used to build
    PyTorch" or a live torch's version, else a wheel named with its +cuXYZ tag."""
    try:
        build = f.get("torch.cuda")
    except MissingFact:
        build = None
    if _minor(build) is not None:
        return _minor(build), f"torch is built with CUDA {build}"
    named = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "prose:torch-build-named"), None)
    if named:
        cu = str(named["cu"])
        v = version_of(f"{cu[:-1]}.{cu[-1]}")
        return v, f"torch {named['torch']}+cu{cu} (line {named['line']}) is built with CUDA {v}"
    # the user's own sentence naming the CUDA release beside the torch release they run (prose.toml)
    said = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "prose:cuda-torch-versions-said"), None)
    if said and _minor(said.get("cuda")) is not None:
        return _minor(said["cuda"]), f"the user runs CUDA {said['cuda']} with torch {said.get('torch')} (line {said['line']})"
    return None


# A cuBLAS or cuDNN kernel that failed to run: the status alone has many causes (an earlier illegal access
# above all), so it is read only with the GPU and the CUDA release both named, the release predating the GPU.
_EXECUTION_FAILED = ("cublas:CUBLAS_STATUS_EXECUTION_FAILED", "cudnn:CUDNN_STATUS_EXECUTION_FAILED")


def _execution_failed(f: FactView) -> Iterator[Hit]:
    failed = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _EXECUTION_FAILED), None)
    gpu = gpu_of_ticket(f) if failed else None
    need = first_toolkit_for(gpu["cc"]) if gpu else None
    build = _build_cuda(f) if need else None
    if not (failed and build) or build[0] >= version_of(need):
        return
    lib = "cuBLAS" if failed["id"].startswith("cublas") else "cuDNN"
    yield Hit(message=f"a {lib} kernel failed to run (line {failed.get('line')}: \"{told_text(failed)}\") on {gpu['name']} "
                      f"(compute capability {gpu['cc']}), and {build[1]}: compute capability {gpu['cc']} needs CUDA "
                      f"{need} or newer, and the {lib} of an older release has no code for it",
              fix=_fix(need), evidence={**told_evidence(failed), "gpu": gpu["name"], "cuda": str(build[0])})


def _fix(need: str) -> str:
    v = version_of(need)
    conda = max(v, version_of(_CONDA_FIRST)) if v is not None and v <= version_of(_CONDA_LAST) else None
    return f"{_CHECK}\n" + _WHEEL.format(tag=need.replace(".", ""), need=need,
                                         conda=f"; conda: pytorch-cuda={conda}" if conda else "")


@rule("SW061", SYMBOL, "error", "the framework's CUDA libraries (cuFFT, cuBLAS) are of a CUDA release older than the GPU",
      impact=7, also={"warning": "a build older than the GPU's first CUDA release, read live, or a pre-Ada build beside cuFFT's failure",
                      "info": "cuFFT's internal error with neither the GPU nor the build named"})
def cuda_libraries_predate_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, cuFFT failing as torch raises it, "RuntimeError: cuFFT error:
        CUFFT_INTERNAL_ERROR" (knowledge/messages/cufft.toml, every cufftResult of cuFFT 11 and
        12), on a GPU whose architecture is newer than the CUDA release torch was built with
        (collect_env's "CUDA used to build PyTorch", a +cuXYZ wheel): an error when both are named,
        a warning when only a build older than CUDA 11.8 (the first for Ada 8.9 and Hopper 9.0) is,
        info when neither is. cuBLAS's and cuDNN's EXECUTION_FAILED status only with the GPU and
        the CUDA release both named (collect_env, a +cuXYZ wheel, or the user's own "CUDA 10.1 ...
        torch 1.4.0"), the release older than the GPU's first. NVRTC's "nvrtc: error: invalid
        value for --gpu-architecture (-arch)" (knowledge/messages/nvrtc.toml; torch's jiterator
        and fusers, CuPy): an error on a named GPU of compute capability 7.5 or newer whose first
        CUDA release is newer than the build (when named), a warning with only an old build named,
        info alone; a GPU before 7.5 is left alone (CUDA 13's NVRTC no longer knows it). Live, a torch whose CUDA release
        predates the node's GPU (warning): its kernels may still run there through PTX, its cuFFT
        and cuBLAS do not.

    Why it matters:
        torch's own kernels reach a newer GPU through PTX compiled at load time, so the program
        starts; the CUDA math libraries shipped with it carry code only for the architectures
        their release knew, and cuFFT does not keep CUDA's forward compatibility (PyTorch's
        maintainers, pytorch#88038): every FFT (torch.fft, torch.stft, spectrograms) fails on an
        RTX 40xx, L4, L40 or H100 with a CUDA 11.7 or older build. CUFFT_INTERNAL_ERROR also comes
        from a plan made with too little free GPU memory (pytorch#119420): with a new enough build,
        that is the cause to look at. NVRTC, the run-time compiler torch and CuPy ship, compiles
        for the GPU's own architecture and refuses one newer than its release.

    How to fix:
        Install a torch build of a CUDA release that knows the GPU (11.8 or newer for 8.9 and
        9.0; 12.8 for 10.0 and 12.0): pip from download.pytorch.org/whl/cuXYZ, or conda's
        pytorch-cuda=XY.Z, with torchaudio/torchvision of the same release.

    References:
        - https://github.com/pytorch/pytorch/issues/88038
        - https://github.com/pytorch/pytorch/issues/119420
        - https://docs.nvidia.com/cuda/cufft/index.html#cufftresult
        - https://docs.nvidia.com/cuda/ada-compatibility-guide/index.html
        - https://pytorch.org/get-started/previous-versions/
        - https://docs.nvidia.com/cuda/nvrtc/index.html
    """
    told = catalogued(f, SYMBOL)
    nvrtc = [s for s in told if s.get("family") == "nvrtc"]
    if nvrtc:
        yield from _nvrtc_arch(f, nvrtc[0])
        return
    if not told:
        hits = list(_execution_failed(f))
        yield from hits or _live(f)
        return
    s = told[0]
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    gpu = gpu_of_ticket(f)
    need = first_toolkit_for(gpu["cc"]) if gpu else None
    build = _build_cuda(f)
    if gpu and need and build:
        if build[0] >= version_of(need):
            return   # the libraries know this GPU: another cause (free memory, a plan's size)
        yield Hit(message=f"cuFFT failed ({said}) on {gpu['name']} (compute capability {gpu['cc']}), and {build[1]}: "
                          f"compute capability {gpu['cc']} needs CUDA {need} or newer, and the cuFFT of an older release "
                          "has no code for it (PyTorch's maintainers, pytorch#88038)",
                  fix=_fix(need), evidence=told_evidence(s))
        return
    ada = first_toolkit_for("8.9")
    if build and not gpu and build[0] < version_of(ada):
        yield Hit(message=f"cuFFT failed ({said}) and {build[1]}, older than CUDA {ada}, the first for Ada (8.9) and "
                          "Hopper (9.0) GPUs: on such a GPU its cuFFT has no code for the architecture (pytorch#88038)",
                  severity="warning", fix=_fix(ada), evidence=told_evidence(s))
        return
    if build or (gpu and not need):
        return
    about = (f" on {gpu['name']} (compute capability {gpu['cc']}, which needs CUDA {need} or newer)" if gpu else "")
    yield Hit(message=f"cuFFT failed{about} ({said}): the usual cause is a torch built with a CUDA release older than "
                      "the GPU (CUDA 11.7 or older on an RTX 40xx, L4 or H100; pytorch#88038); else too little free GPU "
                      "memory when the plan was made (pytorch#119420)",
              severity="info", fix=_fix(need or ada), evidence=told_evidence(s))


def _nvrtc_arch(f: FactView, s: dict) -> Iterator[Hit]:
    """NVRTC's "invalid value for --gpu-architecture (-arch)" (nvrtc.toml): the program asked its NVRTC
    for the GPU's own architecture and that NVRTC does not know it. On a GPU from 7.5 on (no CUDA
    release has dropped one) the NVRTC predates the GPU; on an older GPU the NVRTC may as well be too
    new for it (CUDA 13 dropped 7.2 and older), so that is left alone."""
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    gpu = gpu_of_ticket(f)
    need = first_toolkit_for(gpu["cc"]) if gpu else None
    build = _build_cuda(f)
    if gpu and not need:
        return   # a GPU before 7.5, or one knowledge has no first release for: not judged
    if gpu and need:
        if build and build[0] >= version_of(need):
            return   # that build's NVRTC knows the GPU: the program asked for another architecture
        known = f", and {build[1]}" if build else ""
        yield Hit(message=f"NVRTC refused the GPU's architecture ({said}) on {gpu['name']} (compute capability "
                          f"{gpu['cc']}){known}: NVRTC first compiles for compute capability {gpu['cc']} in CUDA {need}, "
                          "so the NVRTC the program ships or loads (torch's bundled libnvrtc, CuPy's) is of an older "
                          "CUDA release",
                  fix=_fix(need), evidence={**told_evidence(s), "gpu": gpu["name"], "needs_cuda": need})
        return
    ada = first_toolkit_for("8.9")
    if build and build[0] < version_of(ada):
        yield Hit(message=f"NVRTC refused the GPU's architecture ({said}) and {build[1]}, older than CUDA {ada}, the "
                          "first for Ada (8.9) and Hopper (9.0) GPUs: on such a GPU its NVRTC does not know the "
                          "architecture (Blackwell needs CUDA 12.8)",
                  severity="warning", fix=_fix(ada), evidence=told_evidence(s))
        return
    if build:
        return
    yield Hit(message=f"NVRTC refused the GPU's architecture ({said}): the usual cause is an NVRTC (torch's bundled "
                      "libnvrtc, CuPy's) of a CUDA release older than the GPU (11.7 or older on an RTX 40xx, L4, L40 "
                      "or H100; 12.7 or older on Blackwell); on a GPU before compute capability 7.5 it may instead "
                      "be an NVRTC too new for it (CUDA 13 dropped 7.2 and older)",
              severity="info", fix=_fix(ada), evidence=told_evidence(s))


def _live(f: FactView) -> Iterator[Hit]:
    """A torch on this node whose CUDA release predates one of the node's NVIDIA GPUs."""
    build = _minor(f.get("torch.cuda"))   # unknown: the rule is not judged, never passed
    gpus = cuda_gpus(f)
    if build is None:
        return
    for g in gpus:
        cc = g.get("compute_capability")
        need = first_toolkit_for(cc) if isinstance(cc, str) else None
        if need and build < version_of(need):
            yield Hit(message=f"torch is built with CUDA {build} and {g.get('name')} is compute capability {cc}, first "
                              f"known to CUDA {need}: torch's kernels may reach it through PTX, its cuFFT and cuBLAS do not "
                              "(cuFFT fails with CUFFT_INTERNAL_ERROR; pytorch#88038)",
                      severity="warning", fix=_fix(need),
                      evidence={"torch.cuda": str(build), "gpu.name": g.get("name"), "gpu.compute_capability": cc})
            return
