"""Libraries with no code for the GPU, for framework-missing-arch: cuDNN's ARCH_MISMATCH status (by its
name, cuDNN 9's NOT_SUPPORTED_ARCH_MISMATCH, and Mocha.jl's "Arch mismatch"), RAPIDS cuDF's import-time
refusal of a GPU below its generation and its missing PTX, and CUDA's "invalid device symbol" where the
paste shows the symbol call or the build's architecture (knowledge/messages/cudnn.toml, mocha.toml,
rapids.toml, cuda.toml). Each finding names the library and, where the paste gives them, the GPU and
its compute capability."""

from __future__ import annotations

from typing import Optional

from hpcdoctor.engine import Hit
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, gpu_of_ticket, told_evidence, told_text, version_of

_CUDNN = ("cudnn:CUDNN_STATUS_ARCH_MISMATCH", "cudnn:CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH", "mocha:arch-mismatch")
_RAPIDS = ("rapids:gpu-below-minimum", "rapids:gpu-below-pascal-old", "rapids:missing-ptx-files")
_CC = "nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader   # the GPU and its compute capability\n"


def library_lacks_gpu(f: FactView) -> Optional[Hit]:
    """The first of these libraries' refusals in the paste, as a finding; None where there is none."""
    told = catalogued(f, "framework-missing-arch")
    gpu = gpu_of_ticket(f)
    rapids = [s for s in told if s.get("id") in _RAPIDS]
    if rapids:
        return _rapids(rapids, gpu)
    s = next((t for t in told if t.get("id") in _CUDNN), None)
    if s is not None:
        on = f" on {gpu['name']} (compute capability {gpu['cc']})" if gpu else ""
        return Hit(message=f"cuDNN refused the GPU{on} (line {s.get('line')}: \"{told_text(s)}\", CUDNN_STATUS_ARCH_MISMATCH): "
                           "the function needs a feature this GPU lacks: this cuDNN release has no support for this GPU "
                           "(each cuDNN release lists the compute capabilities it supports; Mocha.jl's cuDNN needed 3.0 "
                           "and up, pluskid/Mocha.jl#57, and cuDNN 9.11 dropped those below 7.5)",
                   fix=_CC + "ldconfig -p | grep libcudnn   # the cuDNN copies the loader finds (the version is in the file name): "
                             "use a cuDNN release whose support matrix lists this compute capability, or the framework "
                             "without cuDNN on this GPU",
                   evidence=told_evidence(s))
    return _invalid_symbol(f, gpu)


def _rapids(said, gpu) -> Hit:
    below = next((s for s in said if s.get("id") != "rapids:missing-ptx-files"), None)
    ptx = next((s for s in said if s.get("id") == "rapids:missing-ptx-files"), None)
    s = below or ptx
    cc = (below or {}).get("cc") or _cc_of((ptx or {}).get("ccnum")) or (gpu or {}).get("cc")
    name = (below or {}).get("gpu") or (gpu or {}).get("name")
    need = (below or {}).get("min_cc") or "6.0 (RAPIDS up to 23.12) or 7.0 (from 24.02)"
    what = f"{str(name).strip()} (compute capability {cc})" if name else f"a GPU of compute capability {cc}"
    lines = ", ".join(f"line {x.get('line')}" for x in sorted((x for x in (below, ptx) if x), key=lambda x: x.get("line", 0)))
    return Hit(message=f"RAPIDS (cuDF, and cuML and cuGraph, which import it) has no code for {what} ({lines}: "
                       f"\"{told_text(s)}\"): cuDF's kernels and PTX start at compute capability {need}; RAPIDS "
                       "21.x to 23.12 need Pascal (6.0) or newer, 24.02 and later Volta (7.0) or newer. No install "
                       "option adds the older GPU",
               fix=_CC + "# run RAPIDS on a GPU of compute capability 6.0+ (RAPIDS <= 23.12) or 7.0+ (24.02 and later); "
                         "on this GPU use the CPU libraries (pandas, scikit-learn)",
               evidence={**told_evidence(s), "compute_capability": cc, "framework.min_cc": need})


def _cc_of(n) -> Optional[str]:
    """cuDF's capability number ("52", "120") to "5.2", "12.0"."""
    t = str(n or "")
    return f"{t[:-1]}.{t[-1]}" if t.isdigit() and len(t) >= 2 else None


def _invalid_symbol(f: FactView, gpu) -> Optional[Hit]:
    """cudaErrorInvalidSymbol read from a program's own check: an error where the paste names the
    build's architecture and it cannot run the GPU, a warning where it names the symbol call or an
    architecture without the GPU (the program's wrong symbol is the other cause), silent otherwise."""
    s = next((t for t in catalogued(f, "framework-missing-arch") if t.get("id") == "cuda:cudaErrorInvalidSymbol"), None)
    if s is None or not (s.get("call") or s.get("arch")):
        return None
    arch = s.get("arch")
    built = _cc_of(arch) if arch else None
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    fix = (_CC + "cuobjdump --list-elf --list-ptx ./PROGRAM   # the architectures the program (or its library) carries: "
           "the GPU's must be among them\n"
           "# rebuild with the GPU's own: nvcc -gencode arch=compute_XY,code=sm_XY (CMake: CMAKE_CUDA_ARCHITECTURES=XY)")
    if built and gpu and (version_of(built).major != version_of(gpu["cc"]).major or version_of(built) > version_of(gpu["cc"])):
        return Hit(message=f"\"invalid device symbol\" ({said}): the build names sm_{arch}, which cannot run on "
                           f"{gpu['name']} (compute capability {gpu['cc']}); a module without code for the GPU is "
                           "not loaded, so none of its __device__/__constant__ symbols exist",
                   fix=fix, evidence={**told_evidence(s), "built_arch": f"sm_{arch}", "compute_capability": gpu["cc"]})
    what = f"the paste names {s.get('call')}" if s.get("call") else f"the build names sm_{arch}"
    return Hit(message=f"\"invalid device symbol\" ({said}) and {what}: CUDA finds no such symbol in the module loaded "
                       "for this GPU. Either the program names a symbol that is no __device__/__constant__ variable of "
                       "its module (its own bug), or the module has no code for this GPU's architecture, so none of its "
                       "symbols exist (built without the GPU's -gencode), the cause in most public reports where the "
                       "code runs elsewhere: compare the GPU's compute capability with the architectures built",
               severity="warning", fix=fix,
               evidence={**told_evidence(s), **({"call": s.get("call")} if s.get("call") else {}),
                         **({"built_arch": f"sm_{arch}"} if arch else {})})
