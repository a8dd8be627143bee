"""The CUDA toolkit a source build (a torch extension, DeepSpeed's ops) compiles with."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge.wheels import dropped_arch, first_toolkit_for, last_toolkit_for, virtual_arch_of
from hpcdoctor.rules._common import first_symptom, said_no_gpu, ticket_all, ticket_evidence, told_text

_ARCH = re.compile(r"(?:sm|compute|lto)_(\d{2,3}[af]?)$")


@rule("SW032", "nvcc-too-old-for-gpu", "error", "nvcc is older than the GPU the build targets", impact=7)
def nvcc_too_old_for_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, nvcc refusing an architecture of compute capability 7.5 or newer:
        "nvcc fatal : Unsupported gpu architecture 'compute_86'" or "nvcc fatal : Value 'sm_86'
        is not defined for option 'gpu-architecture'" (knowledge/messages/nvcc.toml). No CUDA
        release has dropped those architectures, so the nvcc predates the GPU; refusals of 7.2
        and older (dropped by CUDA 13) are left alone.

    Why it matters:
        The extension (or any CUDA source build) cannot be compiled for this GPU with this
        toolkit: torch.utils.cpp_extension builds for the visible GPU's architecture unless
        TORCH_CUDA_ARCH_LIST says otherwise, and the toolkit's nvcc does not know it.

    How to fix:
        Build with a CUDA toolkit that knows the architecture (the first release for each is in
        knowledge/cuda.toml [arch_min_toolkit]): point CUDA_HOME and PATH at it. For a GPU whose
        minor revision is above 0 (8.6, 8.9), a toolkit that knows the major's .0 architecture can
        build for it instead (TORCH_CUDA_ARCH_LIST="8.0+PTX"): code for 8.0 runs on an 8.6 GPU.

    References:
        - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list
        - https://pytorch.org/docs/stable/cpp_extension.html (TORCH_CUDA_ARCH_LIST)
        - https://github.com/mapillary/inplace_abn/issues/192
    """
    s = first_symptom(f, "nvcc:unsupported-gpu-architecture", "nvcc:gpu-architecture-not-defined")
    if s is None:
        return
    m = _ARCH.match(s.get("arch") or "")
    if m is None:
        return
    arch = m.group(1)
    need = first_toolkit_for(arch)
    if need is None:
        return  # 7.2 and older are dropped by newer nvcc; an architecture not in the table is not judged
    digits = re.match(r"\d+", arch).group(0)
    major, minor = digits[:-1], digits[-1]
    fixes = [f"nvcc --version; ls -d /usr/local/cuda-*   # the toolkit the build ran, and others installed: "
             f"sm_{arch} needs CUDA {need} or newer (then export CUDA_HOME=/usr/local/cuda-X.Y "
             f"PATH=/usr/local/cuda-X.Y/bin:$PATH)"]
    base = first_toolkit_for(f"{major}0")
    if minor != "0" and not arch[-1].isalpha() and base is not None:
        fixes.append(f'export TORCH_CUDA_ARCH_LIST="{major}.0+PTX"   # for a torch.utils.cpp_extension build with '
                     f"CUDA {base} or newer: sm_{major}0 code and PTX, which a compute {major}.{minor} GPU runs")
    yield Hit(message=f"the build's nvcc does not know {s['arch']} (line {s['line']}): its CUDA toolkit is older "
                      f"than CUDA {need}, the first to build for compute capability {major}.{minor}",
              fix="\n".join(fixes), evidence=ticket_evidence(s))


@rule("SW113", "nvcc-dropped-requested-arch", "error", "the build asks nvcc for a GPU architecture its CUDA release has dropped",
      impact=6)
def nvcc_dropped_requested_arch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, nvcc (or ptxas: "ptxas fatal : Value 'sm_21' is not defined for
        option 'gpu-name'") refusing an architecture that CUDA has dropped: "nvcc fatal :
        Unsupported gpu architecture 'compute_12'" (Tesla, last built by CUDA 6.5), 'compute_20'
        (Fermi, CUDA 8.0), 'sm_30' (Kepler, CUDA 10.2), 'sm_35' (CUDA 11.8), 'compute_70' (Maxwell to
        Volta, CUDA 12.9; knowledge/cuda.toml [arch_last_toolkit]); and 'compute_21', which names no
        virtual architecture in any release (sm_21's is compute_20, [virtual_arch_of]).

    Why it matters:
        The same words as an nvcc too old for a new GPU (SW032), with the opposite fix: here the
        nvcc is newer than the build's flags, which were written for GPUs this CUDA no longer
        builds for, usually a Makefile, configure default or CMake list older than the toolkit.

    How to fix:
        Build for the GPU the code will run on (nvidia-smi --query-gpu=compute_cap): replace the
        dropped architecture in the build's flags (-gencode, -arch, CUDA_ARCH, TORCH_CUDA_ARCH_LIST,
        CMAKE_CUDA_ARCHITECTURES). Only a GPU of that old architecture itself needs the old toolkit.

    References:
        - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#gpu-feature-list
        - https://github.com/vetter/shoc/issues/52
        - https://github.com/vlfeat/matconvnet/issues/338
    """
    s = first_symptom(f, "nvcc:unsupported-gpu-architecture", "nvcc:gpu-architecture-not-defined",
                      "ptxas:gpu-name-not-defined")
    if s is None:
        return
    name = s.get("arch") or ""
    m = _ARCH.match(name)
    if m is None:
        return
    arch = m.group(1)
    virtual = virtual_arch_of(arch) if name.startswith("compute_") else None
    if not dropped_arch(arch):
        return  # a newer architecture is SW032's (ptxas-too-old's for ptxas); one no table names is not judged
    last = last_toolkit_for(arch)
    tool = "ptxas" if s["id"].startswith("ptxas:") else "nvcc"
    cc = f"{arch[:-1]}.{arch[-1]}"
    if virtual is not None:
        message = (f"the build asks {tool} for {name} (line {s['line']}), which no CUDA release knows: the virtual "
                   f"architecture of compute capability {cc} GPUs is compute_{virtual}")
        old = (f"# a compute {cc} GPU itself: -gencode arch=compute_{virtual},code=sm_{arch}, with CUDA {last} or "
               f"older (the last to build for it)")
    else:
        message = (f"the build asks {tool} for {name} (line {s['line']}), an architecture CUDA dropped after {last}: "
                   f"this {tool} is newer than the build's GPU flags")
        old = f"# only a compute {cc} GPU itself needs CUDA {last} or older (the last release that builds for it)"
    fix = ("nvidia-smi --query-gpu=name,compute_cap --format=csv   # the GPU the code runs on: build for its "
           f"capability instead of {name} (-gencode arch=compute_XY,code=sm_XY, TORCH_CUDA_ARCH_LIST=\"X.Y\", "
           f"CMAKE_CUDA_ARCHITECTURES=XY) in the Makefile, configure options or CMake cache that set {name}\n" + old)
    yield Hit(message=message, fix=fix, evidence=ticket_evidence(s))


def _cuda_module_loaded(f: FactView, s: dict) -> Optional[dict]:
    """A `module load` of a CUDA toolkit (cuda, nvhpc) shown before the line S (jobscript.toml module-load)."""
    for m in ticket_all(f, "jobscript:module-load"):
        names = str(m.get("modules") or "").lower().split()
        if (m.get("line") or 0) < (s.get("line") or 0) and any(n.startswith(("cuda/", "cuda-", "nvhpc")) or n == "cuda"
                                                                  for n in names):
            return m
    return None


@rule("SW033", "cuda-toolkit-nvcc-missing", "error", "a CUDA source build finds no CUDA toolkit (nvcc)", impact=7,
      also={"info": "on a machine the user says has no NVIDIA GPU: the package's CPU variant is the answer, not a toolkit"})
def cuda_toolkit_nvcc_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log (pip install of DeepSpeed, a torch extension's setup.py), the build
        finding no CUDA compiler (knowledge/messages/cuda_home.toml): DeepSpeed's "CUDA_HOME does
        not exist, unable to compile CUDA op(s)", torch.utils.cpp_extension's "CUDA was not found
        on the system", "CUDA_HOME environment variable is not set" and "nvcc not found at
        '...'", or "No such file or directory: '/usr/local/cuda/bin/nvcc'"; or the shell finding no
        nvcc at all, in bash's, dash's, zsh's, fish's or tcsh's words ("nvcc: command not found",
        "build.sh: 2: nvcc: not found", knowledge/messages/shell.toml), or finding none at the path a
        program ran it by ("sh: /usr/local/cuda/bin/nvcc: No such file or directory": OpenMM's CUDA
        platform looks there unless OPENMM_CUDA_COMPILER says otherwise), but not where the paste
        loads a CUDA module before it (module load cuda/8.0.61): the toolkit is there, and the
        build's own fixed path is the fault (a Makefile's, gpu-burn#2). A Rust CUDA crate's build
        script (find_cuda_helper) panicking with "Could not find a cuda installation".

    Why it matters:
        torch's wheels carry the CUDA runtime libraries but no compiler, so torch sees the GPUs
        while nothing can compile CUDA code: a runtime-only container (CUDA "runtime" images) or
        a node with only the driver has no nvcc.

    How to fix:
        Install a CUDA toolkit (nvcc included) of the CUDA version torch was built with, or find
        one already on the node, and point CUDA_HOME at its root (the folder above bin/nvcc). On a
        machine the user says has no NVIDIA GPU, the package's CPU variant instead (info).

    References:
        - https://pytorch.org/docs/stable/cpp_extension.html (CUDA_HOME)
        - https://github.com/deepspeedai/DeepSpeed/issues/4553
    """
    s = first_symptom(f, "cuda_home:deepspeed-cuda-home-missing", "cuda_home:torch-cuda-not-found",
                      "cuda_home:torch-cuda-home-not-set", "cuda_home:torch-nvcc-not-found-at", "cuda_home:nvcc-enoent",
                      "shell:nvcc-not-found", "shell:nvcc-path-not-found", "cuda_home:rust-cuda-no-installation",
                      "cuda_home:rust-cuda-which-nvcc-failed", "cuda_home:rust-cuda-root-not-found")
    if s is None:
        return
    if s["id"].startswith("cuda_home:rust-cuda-"):
        yield Hit(message=f"a Rust CUDA crate's build script found no CUDA toolkit (line {s['line']}: \"{told_text(s)}\"): "
                          "building it needs the toolkit (nvcc, cuda.h and its libraries), not only the driver",
                  fix=("command -v nvcc; ls -d /usr/local/cuda*/lib64 /opt/cuda/lib64 2>/dev/null   # a toolkit already "
                       "here: put its bin/ on PATH (the helper looks above `which nvcc`) or export CUDA_LIBRARY_PATH to its lib64/ "
                       "(on Windows: CUDA_PATH to its root)\n"
                       "# none: install a CUDA toolkit or load the site's cuda module, then run cargo build again"),
                  evidence=ticket_evidence(s))
        return
    if s["id"] == "shell:nvcc-path-not-found":
        if _cuda_module_loaded(f, s) is not None:
            return   # a toolkit is loaded where the build ran: its own fixed path is the fault, not a missing toolkit
        path = s.get("path") or s.get("zsh") or s.get("tcsh") or s.get("fish") or "that path"
        yield Hit(message=f"a program ran nvcc by its path and the shell found none there (line {s['line']}: "
                          f"\"{told_text(s)}\"): no CUDA toolkit is installed at {path.rsplit('/bin/', 1)[0]}; it may be "
                          "elsewhere on the node (a distribution's /opt/cuda, a module, a conda environment), where the "
                          "program has to be told to look",
                  fix=("ls -d /usr/local/cuda*/bin/nvcc /opt/cuda*/bin/nvcc \"$CONDA_PREFIX\"/bin/nvcc 2>/dev/null; "
                       "command -v nvcc   # where this node's nvcc is\n"
                       "# point the program at it: CUDA_HOME (the folder above bin/nvcc) for most builds, "
                       "OPENMM_CUDA_COMPILER (nvcc's own path) for OpenMM's CUDA platform; none found: install a CUDA "
                       "toolkit or load the site's cuda module"),
                  evidence=ticket_evidence(s))
        return
    if s["id"] == "shell:nvcc-not-found":
        yield Hit(message=f"the shell found no nvcc on PATH (line {s['line']}: \"{told_text(s)}\"): no CUDA toolkit is "
                          "installed here, or it is installed outside PATH (sudo resets PATH to its secure_path)",
                  fix=("ls -d /usr/local/cuda*/bin/nvcc /opt/cuda*/bin/nvcc \"$CONDA_PREFIX\"/bin/nvcc 2>/dev/null   "
                       "# a toolkit already on the node: put its bin/ first on PATH and export CUDA_HOME to the folder "
                       "above it; under sudo pass it on (sudo env \"PATH=$PATH\" ...); none: install a CUDA toolkit or "
                       "load the site's cuda module"),
                  evidence=ticket_evidence(s))
        return
    where = f"there is no {s['path']}" if s.get("path") else "it found no CUDA toolkit (CUDA_HOME unset, no nvcc on PATH)"
    no_gpu = said_no_gpu(f, mac=True)
    if no_gpu is not None and not f.gpus():
        # a package's CUDA build chosen on a machine the user says has no NVIDIA GPU: the CPU variant, not a toolkit
        yield Hit(message=f"the install builds CUDA code and {where} (line {s['line']}), on a machine the user says has no "
                          f"NVIDIA GPU (line {no_gpu.get('line')}): what it builds could not run here; the package's CPU "
                          "variant (or its build without CUDA) is what this machine can use",
                  fix=("# install the package's CPU variant: many projects publish one (a -cpu package, or a switch that "
                       "builds without CUDA), which their README's install section names"),
                  evidence={**ticket_evidence(s), "no_gpu.line": no_gpu.get("line")}, severity="info")
        return
    yield Hit(message=f"the CUDA build needs nvcc and {where} (line {s['line']}): torch's wheel carries the CUDA "
                      "runtime, not the compiler",
              fix=("ls -d /usr/local/cuda*/bin/nvcc /opt/cuda*/bin/nvcc \"$CONDA_PREFIX\"/bin/nvcc 2>/dev/null; "
                   "python -c 'import torch; print(torch.version.cuda)'   # an installed toolkit, and the CUDA torch "
                   "was built with: export CUDA_HOME to the folder above bin/nvcc of a matching one, or install "
                   "that CUDA toolkit (its compiler is enough)"),
              evidence=ticket_evidence(s))
