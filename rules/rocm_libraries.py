"""ROCm's math libraries failing to find their own data at run time: rocBLAS without its Tensile
kernel library (knowledge/messages/rocblas.toml, from rocBLAS's tensile_host.cpp)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
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
        does not support the GPU); "Could not load" is a file from another rocBLAS release.

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
