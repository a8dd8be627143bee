"""``torch.__config__.show()``: what a torch build was compiled with."""

from __future__ import annotations

import re
from typing import Any, Dict


def parse_config(text: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    settings: Dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip().lstrip("-").strip()
        if line.startswith("Build settings:"):
            # "KEY=value, KEY=value, ..." where some values (CXX_FLAGS) contain spaces but no ", K="
            body = line[len("Build settings:"):]
            for m in re.finditer(r"([A-Z][A-Z0-9_]*)=(.*?)(?=, [A-Z][A-Z0-9_]*=|,?\s*$)", body):
                settings[m.group(1)] = m.group(2).strip()
        elif line.startswith("CPU capability usage:"):
            out["cpu_capability"] = line.split(":", 1)[1].strip()
        elif "MKL-DNN v" in line or "oneDNN v" in line:
            m = re.search(r"v(\d+[\d.]*)", line)
            out["onednn"] = m.group(1) if m else line
        elif "Math Kernel Library Version" in line:
            m = re.search(r"Version (\S+)", line)
            out["mkl"] = m.group(1) if m else line
        elif line.startswith("OpenMP"):
            out["openmp"] = line
        elif line.startswith("CUDA Runtime"):
            out["cuda_runtime"] = line.split()[-1]
        elif line.startswith("CuDNN"):
            out["cudnn"] = line.split()[1] if len(line.split()) > 1 else line
        elif line.startswith("NVCC architecture flags:"):
            out["nvcc_arch_flags"] = line.split(":", 1)[1].strip()
        elif line.startswith("HIP Runtime"):
            out["hip_runtime"] = line.split()[-1]
        elif "Arm Compute Library" in line or line.startswith("ACL"):
            out["acl_line"] = line
    if settings:
        out["build_settings"] = settings
        out["blas"] = settings.get("BLAS_INFO")
        out["lapack"] = settings.get("LAPACK_INFO")
        for key in ("USE_CUDA", "USE_ROCM", "USE_MKLDNN", "USE_MKLDNN_ACL", "USE_NCCL", "USE_OPENMP", "USE_MKL"):
            if key in settings:
                out[key.lower()] = settings[key].upper() in ("ON", "1", "TRUE", "YES")
    return out
