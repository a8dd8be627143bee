"""Molecular dynamics engines built without what the run needs: a GROMACS without CUDA on an NVIDIA
GPU (no GPU support, or an OpenCL, SYCL or HIP build), read from GROMACS's own messages
(knowledge/messages/md_engines.toml); and a LAMMPS binary without the package (or the Kokkos GPU
backend) its input or command line asks for (knowledge/messages/lammps.toml)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, cuda_gpus, told_evidence, told_text

GROMACS = "gromacs-built-without-cuda"
LAMMPS = "lammps-package-not-built"

# GROMACS's words that state the build itself: mdrun -nb gpu on a build without GPU support, and the
# OpenCL build's refusal of Volta and newer NVIDIA GPUs ("please use CUDA build").
_STATES_IT = frozenset({"md_engines:gromacs-nb-gpu-without-gpu-support",
                        "md_engines:incompatible (please use CUDA build for NVIDIA Volta GPUs or newer)"})
# The OpenCL kernel build's failure names the device it compiled for.
_NAMES_DEVICE = frozenset({"md_engines:gromacs-ocl-nbnxm-compile-failed", "md_engines:gromacs-ocl-pme-compile-failed"})
_NVIDIA_NAME = re.compile(r"(?i)\b(?:nvidia|geforce|tesla|quadro|titan|rtx|gtx)\b|\b[ABHLPTV][0-9]{2,3}\b")

_GROMACS_FIX = (
    "gmx --version 2>/dev/null | grep 'GPU support'   # an NVIDIA GPU needs \"GPU support: CUDA\" (gmx_mpi for an MPI build)\n"
    "module avail gromacs 2>&1 | grep -i -E 'cuda|gpu'   # the site's CUDA build of GROMACS, where it has one\n"
    "# conda-forge's CUDA builds carry cuda in their build string (nompi_cuda_h..., mpi_openmpi_cuda_h...):\n"
    "conda install -c conda-forge 'gromacs=*=*cuda*'\n"
    "# or build it (GROMACS install guide): cmake .. -DGMX_GPU=CUDA -DGMX_BUILD_OWN_FFTW=ON && make -j 8 && make install")

_LAMMPS_FIX = (
    "lmp -h | sed -n '/^Installed packages:/,/^List of individual style options/p'   # the packages this binary has "
    "(the executable may be named lmp_mpi, lmp_gpu, ...)\n"
    "module avail lammps 2>&1   # the site's LAMMPS builds: pick one whose lmp -h lists the package\n"
    "# or build LAMMPS with it (CMake, LAMMPS manual Build_package): cmake -D PKG_{pkg}=on ../cmake && cmake --build .")

_KOKKOS_GPU_FIX = (
    "lmp -h | grep -E 'KOKKOS package API|^Installed packages' -A1   # a GPU build lists CUDA (or HIP, SYCL) as its API\n"
    "module avail lammps 2>&1 | grep -i -E 'kokkos|cuda|gpu'   # the site's KOKKOS GPU build of LAMMPS\n"
    "# or build it (LAMMPS manual Build_extras, KOKKOS): cmake -D PKG_KOKKOS=on -D Kokkos_ENABLE_CUDA=on "
    "-D Kokkos_ARCH_AMPERE80=on ../cmake && cmake --build .   # the Kokkos_ARCH_ of your GPU")


def _nvidia_in_paste(f: FactView) -> Optional[str]:
    """An NVIDIA GPU the paste shows: one a tool listing gave (nvidia-smi), else one its text names."""
    gpus = cuda_gpus(f)
    if gpus:
        return str(gpus[0].get("name") or "an NVIDIA GPU")
    named = f.get("ticket.gpus_named") or []
    return str(named[0].get("gpu")) if named else None


@rule("GPU043", GROMACS, "error", "GROMACS built without CUDA on an NVIDIA GPU (no GPU support, or an OpenCL, SYCL or HIP build)",
      impact=6)
def gromacs_built_without_cuda(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        GROMACS's own messages that the build in use has no CUDA backend while the GPU is NVIDIA's:
        mdrun -nb gpu refused because "the GROMACS binary has been built without GPU support"; an
        OpenCL build's device check "incompatible (please use CUDA build for NVIDIA Volta GPUs or
        newer)"; an OpenCL build failing to compile its kernels for an NVIDIA device ("Failed to
        compile NBNXN kernels for GPU #NVIDIA A100-SXM4-40GB ... Could not build OpenCL program,
        error was Unknown OpenCL error: -9999"); and `gmx --version`'s "GPU support: disabled"
        (or OpenCL, SYCL, HIP) beside an NVIDIA GPU the paste shows.

    Why it matters:
        GROMACS picks its GPU backend when it is built (GMX_GPU=CUDA, OpenCL, SYCL, HIP or OFF).
        Only the CUDA build is supported on NVIDIA GPUs: the install guide calls OpenCL
        deprecated and its use on NVIDIA "less practical", and the OpenCL build refuses Volta and
        newer NVIDIA GPUs itself (NVIDIA's OpenCL compiler gave wrong results there). Packaged
        builds are the usual source: conda-forge's default gromacs package has no CUDA (older
        ones were OpenCL builds), so the run fails or falls back to the CPU.

    How to fix:
        Use a CUDA build of GROMACS: the site's GPU/CUDA module, conda-forge's CUDA variant (its
        build string carries "cuda": conda install -c conda-forge 'gromacs=*=*cuda*'), or build
        GROMACS with -DGMX_GPU=CUDA. `gmx --version` must then print "GPU support: CUDA".

    References:
        - https://manual.gromacs.org/current/install-guide/index.html (GPU support: CUDA, OpenCL deprecated)
        - https://manual.gromacs.org/current/user-guide/mdrun-performance.html (OpenCL on NVIDIA: limitations)
        - https://github.com/conda-forge/gromacs-feedstock (recipe/meta.yaml: the nompi_cuda and mpi_*_cuda build strings)
        - https://github.com/samuelmurail/gromacs_py/issues/22 (an OpenCL conda build on an A100: Unknown OpenCL error -9999)
    """
    elsewhere = _nvidia_in_paste(f)
    for s in catalogued(f, GROMACS):
        sid = str(s.get("id", ""))
        device = str(s.get("device") or "").strip()
        if sid in _STATES_IT:
            gpu = None
        elif sid in _NAMES_DEVICE and _NVIDIA_NAME.search(device):
            gpu = device
        elif elsewhere:
            gpu = elsewhere
        else:
            continue
        what = sid.split(":", 1)[-1]
        if "GPU support:" in str(s.get("text", "")):
            said = f"`gmx --version` says \"GPU support: {what}\""
        elif what.startswith("incompatible"):
            said = "GROMACS's OpenCL build refuses this NVIDIA GPU (Volta or newer)"
        elif what.startswith("gromacs-ocl"):
            said = "GROMACS's OpenCL build failed on the NVIDIA GPU" if not gpu else "GROMACS's OpenCL build failed to compile its kernels"
        else:
            said = "this GROMACS has no GPU support"
        on = f" on {gpu}" if gpu else ""
        yield Hit(message=f"{said}{on} (line {s.get('line')}: \"{told_text(s)}\"): the GROMACS in use was built "
                          "without CUDA, the only backend GROMACS supports on NVIDIA GPUs (OpenCL is deprecated "
                          "there and refused on Volta and newer)",
                  fix=_GROMACS_FIX, evidence=told_evidence(s))
        return


_KOKKOS_GPU = "lammps:kokkos-gpus-requested-no-gpu-backend"


def _entry_package(s: dict) -> str:
    """The package a message names by its wording (package gpu, -sf kk): the catalogue entry's
    `package`, as the message itself has no group for it."""
    from hpcdoctor.knowledge import messages

    fam = next(iter(messages.families(("lammps",))), None)
    entry = fam.by_key.get(str(s.get("key", ""))) if fam is not None else None
    return str(entry.get("package") or "") if entry is not None else ""


@rule("SW101", LAMMPS, "info", "LAMMPS binary without the package its input or command line needs", impact=5)
def lammps_package_not_built(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        LAMMPS's own refusals of a style, command or switch whose package this binary was built
        without: "Unrecognized pair style 'lj/cut/gpu' is part of the GPU package which is not
        enabled in this LAMMPS binary." (any style kind: pair, fix, compute, kspace, ...), a style
        "part of the X package, but seems to be missing because of a dependency", "Package gpu
        command without GPU package installed" (and kokkos, omp, intel), "Using suffix gpu
        without GPU package installed" (-sf gpu, kk, omp, intel), "Cannot use -kokkos on without
        KOKKOS installed" (-k on), and KOKKOS's "GPUs are requested but Kokkos has not been
        compiled using a GPU-enabled backend" (-k on g N on a CPU-only Kokkos build). Said at
        info: which packages a LAMMPS binary has is a choice of whoever built it, most often the
        user (libAtoms/QUIP#614: the user's own build, which worked once ML-QUIP was enabled), so
        it is no fault of the node; the finding gives the build or module that has the package.

    Why it matters:
        LAMMPS compiles in only the packages chosen when it was built (PKG_<NAME> in CMake); an
        input that needs another one stops at that command, and an accelerator asked for on the
        command line (-sf gpu, -k on g 1) cannot run without its package, or, for KOKKOS, without
        a GPU backend (Kokkos_ENABLE_CUDA). A plain "Unrecognized ... style" with no package named
        is not this: LAMMPS does not know the style at all (a typo, a removed style such as the
        old "fix gpu", or a plugin).

    How to fix:
        Use a LAMMPS build that has the package: `lmp -h` lists its "Installed packages"; the
        site's modules often offer GPU or KOKKOS builds; or build LAMMPS with cmake -D
        PKG_<NAME>=on (PKG_GPU=on with GPU_API=cuda, PKG_KOKKOS=on with Kokkos_ENABLE_CUDA=on for
        a GPU). Or drop the suffix or package command and run the plain styles.

    References:
        - https://docs.lammps.org/Build_package.html
        - https://docs.lammps.org/Run_options.html (-sf, -pk, -k)
        - https://docs.lammps.org/Speed_kokkos.html and https://docs.lammps.org/Speed_gpu.html
        - https://github.com/libAtoms/QUIP/issues/614 (ML-QUIP not enabled in this LAMMPS binary)
    """
    told = catalogued(f, LAMMPS)
    if not told:
        return
    s = told[0]
    if s.get("id") == _KOKKOS_GPU:
        yield Hit(message=f"LAMMPS was asked for GPUs through KOKKOS (line {s.get('line')}: \"{told_text(s)}\"), but its "
                          "KOKKOS package was built without a GPU backend (Kokkos_ENABLE_CUDA, HIP or SYCL)",
                  fix=_KOKKOS_GPU_FIX, evidence=told_evidence(s))
        return
    package = str(s.get("package") or _entry_package(s) or "").strip().upper() or "<NAME>"
    dependency = str(s.get("id", "")).endswith("missing-dependency")
    why = (f"its {package} package is installed but the style is missing because of a dependency (a library or "
           "another package it needs was not built)" if dependency else
           f"this LAMMPS binary was built without the {package} package")
    fix = _LAMMPS_FIX.replace("{pkg}", package if package != "<NAME>" else "NAME")
    yield Hit(message=f"LAMMPS stopped (line {s.get('line')}: \"{told_text(s)}\"): {why}",
              fix=fix, evidence=told_evidence(s))
