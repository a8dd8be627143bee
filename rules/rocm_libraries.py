"""ROCm libraries not found where they are looked for: rocBLAS without its Tensile
kernel library at run time (knowledge/messages/rocblas.toml, from rocBLAS's tensile_host.cpp), and
clang without the ROCm device library at build time (rocm_clang.toml)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import rocm_gpus
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "rocblas-tensile-library-missing"
_GFX = re.compile(r"TensileLibrary(?:_lazy)?_(gfx[0-9a-f]{3,5})")
_GPU_TARGET = "rocminfo | grep -m1 -o 'gfx[0-9a-f]*'   # this GPU's gfx target, which a TensileLibrary file must name"
_FIND = ("find /opt/rocm*/lib \"$(python -c 'import torch,os; print(os.path.dirname(torch.__file__))' 2>/dev/null)/lib\" "
         "-name 'TensileLibrary*' -path '*rocblas*' 2>/dev/null | head   # where the Tensile libraries really are")


def _folder(path: str) -> str:
    """The folder rocBLAS looked in: the printed file's, or a glob's."""
    return path.rsplit("/", 1)[0] if "/" in path else path


def _listed_targets(f: FactView, after: int) -> List[str]:
    """The gfx targets of the files rocBLAS listed under its "Cannot read ... for GPU arch" error."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") == "rocblas:available-tensile-library-files" and isinstance(s.get("line"), int) and s["line"] >= after:
            return sorted(set(_GFX.findall(str(s.get("files") or ""))))
    return []


def _path_fix(folder: Optional[str]) -> str:
    look = f"ls \"{folder}\"   # what rocBLAS found there: TensileLibrary*_gfxNNN files, one set per GPU target\n" if folder else ""
    return (f"{look}{_GPU_TARGET}\n{_FIND}\n"
            "export ROCBLAS_TENSILE_LIBPATH=/opt/rocm/lib/rocblas/library   # the folder find printed, which holds this gfx "
            "target's files; set it in the job script before srun (Slurm passes the environment on), and with "
            "apptainer exec --env ROCBLAS_TENSILE_LIBPATH=... or docker run -e for a container")


@rule("SW043", SYMBOL, "error", "rocBLAS finds no Tensile kernel library for the GPU where it looks", impact=8)
def rocblas_tensile_library_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, rocBLAS aborting because it found no Tensile kernel library: "rocBLAS
        error: Cannot read <folder>/TensileLibrary.dat: No such file or directory" (with "for GPU
        arch : gfxNNN" and the list of the files the folder does hold, from ROCm 5.5's rocBLAS),
        "rocBLAS warning: No paths matched <folder>/*gfxNNN*co. Make sure that
        ROCBLAS_TENSILE_LIBPATH is set correctly.", and "rocBLAS error: Could not load
        <TensileLibrary file>" with "Could not initialize Tensile library".

    Why it matters:
        rocBLAS (and so every GEMM of PyTorch, TensorFlow or llama.cpp on ROCm) runs Tensile's
        kernels, which it loads at its first call from $ROCBLAS_TENSILE_LIBPATH, else from a
        folder beside librocblas.so, looking for TensileLibrary_lazy_<gfx>.dat, then
        TensileLibrary_<gfx>.dat, then TensileLibrary.dat. When none is there the process
        aborts. Either the folder is not where rocBLAS looked (a ROCm tree moved or copied, an
        older layout such as /opt/rocm/rocblas/lib, a wrong ROCBLAS_TENSILE_LIBPATH), or it holds
        no files for this GPU's gfx target (a ROCm release, or a wheel's bundled rocBLAS, that
        does not support the GPU); "Could not load" is a file from another rocBLAS release. A
        target no ROCm list read supports is left to rocm-gpu-not-in-release: no folder has it.

    How to fix:
        List the folder rocBLAS names. Where the files are elsewhere, point
        ROCBLAS_TENSILE_LIBPATH at the folder that holds this GPU's TensileLibrary files (in the
        job script, or passed into the container). Where the folder holds files only for other gfx
        targets, use a ROCm release (or a ROCm torch wheel) that supports the GPU. Where a file
        could not be loaded, use the library folder of the same ROCm release as librocblas.so.

    References:
        - https://github.com/ROCm/rocBLAS/blob/b520bc83fa67045bed4544f33ba83ce3a7c39c44/library/src/tensile_host.cpp (TensileHost::initialize)
        - https://github.com/ROCm/rocBLAS/issues/1267 (a maintainer: the per-arch TensileLibrary files, ROCBLAS_TENSILE_LIBPATH)
        - https://github.com/ROCm/rocBLAS/issues/1300
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = next((t for t in told if t.get("id", "").startswith("rocblas:no-tensile") or t.get("id") == "rocblas:tensile-library-unreadable"),
             told[0])
    sid, path = str(s.get("id")), str(s.get("path") or "")
    quoted = f"line {s.get('line')}: \"{told_text(s)}\""
    if sid in ("rocblas:could-not-load-tensile-library", "rocblas:could-not-initialize-tensile-library"):
        folder = _folder(path) if path else None
        yield Hit(message=f"rocBLAS found its Tensile library but could not load it ({quoted}): a file from another rocBLAS "
                          "release than librocblas.so, or a damaged one",
                  fix=_path_fix(folder).replace(_FIND, _FIND + "\nls -l \"$(dirname \"$(ldconfig -p | grep -m1 -o '/[^ ]*librocblas.so[^ ]*')\")\"   "
                                                "# the librocblas.so the loader picks: its release's library folder must match"),
                  evidence=told_evidence(s))
        return
    folder = _folder(path) if path else None
    arch = s.get("arch")
    if arch and not f.get("ticket.rocm_versions") and rocm_gpus.never_supported(str(arch)):
        return  # a target no ROCm list read supports: rocm-gpu-not-in-release answers it, no folder holds its kernels
    others = _listed_targets(f, int(s.get("line") or 0)) if arch else []
    if arch and others and arch not in others:
        yield Hit(message=f"rocBLAS has no Tensile kernels for this GPU's target {arch} ({quoted}); its library folder holds "
                          f"files for {', '.join(others)} only: this rocBLAS build does not support the GPU",
                  fix=f"{_GPU_TARGET}\n{_FIND}\n# use a ROCm release (or ROCm torch wheel) whose rocBLAS lists {arch}: "
                      "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html",
                  evidence={**told_evidence(s), "gfx_target": arch, "listed": others})
        return
    where = f" in {folder}" if folder else ""
    for_arch = f" for {arch}" if arch else ""
    yield Hit(message=f"rocBLAS found no Tensile kernel library{for_arch}{where} ({quoted}): the folder is not where this "
                      "ROCm keeps it (a moved or older layout, a wrong ROCBLAS_TENSILE_LIBPATH), or it holds nothing for "
                      "this GPU's target",
              fix=_path_fix(folder), evidence=told_evidence(s))


_DEVICE_LIBS = "rocm-device-libs-not-found"
_DEVICE_LIBS_FIX = (
    "find / -xdev -name 'ocml.bc' -path '*amdgcn/bitcode*' 2>/dev/null | head   # where the device library's bitcode is\n"
    "export HIP_DEVICE_LIB_PATH=/path/to/amdgcn/bitcode   # the folder find printed (hipcc passes it to clang as "
    "--rocm-device-lib-path); ROCm before 5 read DEVICE_LIB_PATH\n"
    "hipcc --rocm-device-lib-path=/path/to/amdgcn/bitcode ...   # or on the command line (CMake: "
    "-DCMAKE_HIP_FLAGS=--rocm-device-lib-path=/path/to/amdgcn/bitcode)\n"
    "# nothing found: install the device library (sudo apt-get install rocm-device-libs, or dnf's rocm-device-libs)")


@rule("SW064", _DEVICE_LIBS, "error",
      "clang (under hipcc) finds no ROCm device library to link into GPU code", impact=5,
      also={"info": "the user says hipcc does not find the device library; clang's own message is not in the paste"})
def rocm_device_libs_not_found(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, clang's AMDGPU toolchain refusing to compile device code for want
        of the ROCm device library: "cannot find ROCm device library; provide its path via
        '--rocm-path' or '--rocm-device-lib-path', or pass '-nogpulib' ..." (clang 15 and later;
        clang 12-14 wrote "cannot find ROCm device library. Provide its path via --rocm-path or
        --rocm-device-lib-path ..."), and clang 11's "cannot find device library for gfx1031.
        Provide path to different ROCm installation via --rocm-path ...", errors; the user's own
        words that hipcc fails to find the rocm-device-lib path, info.

    Why it matters:
        Every HIP (and OpenCL) device code object links the device library's bitcode (ocml, ockl,
        oclc_*). clang looks in --rocm-device-lib-path, HIP_DEVICE_LIB_PATH, then under the ROCm
        path (<rocm>/amdgcn/bitcode, /opt/rocm by default); a distribution or self-built ROCm that
        installs the bitcode elsewhere (/usr/lib64/amdgcn/bitcode, /usr/lib/<triple>/amdgcn/bitcode,
        TheRock's <rocm>/lib/llvm/amdgcn/bitcode) stops every GPU build until clang is told.

    How to fix:
        Find the folder holding ocml.bc and point HIP_DEVICE_LIB_PATH (or --rocm-device-lib-path)
        at it; install the rocm-device-libs package where there is none.

    References:
        - https://github.com/llvm/llvm-project/blob/0008bd051a5ae7b613fc3416df3cb7363afa4220/clang/include/clang/Basic/DiagnosticDriverKinds.td (err_drv_no_rocm_device_lib)
        - https://github.com/llvm/llvm-project/blob/main/clang/lib/Driver/ToolChains/AMDGPU.cpp (RocmInstallationDetector: the paths searched)
        - https://clang.llvm.org/docs/HIPSupport.html (--rocm-path, --rocm-device-lib-path, HIP_DEVICE_LIB_PATH)
    """
    told = catalogued(f, _DEVICE_LIBS)
    if told:
        s = told[0]
        target = f" for {s['target']}" if s.get("target") else ""
        yield Hit(message=(f"clang found no ROCm device library{target} (line {s.get('line')}: \"{told_text(s)}\"): the "
                           "bitcode every GPU code object links (ocml, ockl) is not where clang searches "
                           "(--rocm-device-lib-path, HIP_DEVICE_LIB_PATH, <rocm>/amdgcn/bitcode)"),
                  fix=_DEVICE_LIBS_FIX, evidence=told_evidence(s))
        return
    said = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "prose:rocm-device-lib-not-found-said"), None)
    if said is not None:
        yield Hit(message=(f"the user says hipcc does not find the ROCm device library (line {said.get('line')}: "
                           f"\"{told_text(said)}\"); clang's own message is not in the paste, but that is what clang "
                           "reports when the bitcode is outside the paths it searches"),
                  fix=_DEVICE_LIBS_FIX, evidence=told_evidence(said), severity="info")
