#!/usr/bin/env python3
"""Every CUDA error name and message as the installed libraries print them, as JSON.

    python bench/cuda_error_strings.py > cuda_error_strings.json

Asks libcudart (cudaGetErrorName / cudaGetErrorString) and libcuda (cuGetErrorName /
cuGetErrorString) through ctypes, for every code from 0 to 1999; neither call needs a GPU. The
libraries are the ones this interpreter's packages ship (nvidia-cuda-runtime, torch's lib folder)
or the system loader finds. tests/knowledge/test_cuda_error_strings.py holds the catalogues
(knowledge/messages/cuda.toml, cuda_driver.toml) against such a recording.
"""

from __future__ import annotations

import ctypes
import glob
import json
import os
import site
import sys
from typing import Any, Dict, List, Optional

CODES = range(0, 2000)


def _candidates(stem: str) -> List[str]:
    roots = [p for p in sys.path if os.path.isdir(p)] + list(site.getsitepackages())
    found: List[str] = []
    for root in dict.fromkeys(roots):
        for pattern in (f"nvidia/*/lib/{stem}.so*", f"nvidia/cu*/lib/{stem}.so*", f"torch/lib/{stem}*.so*"):
            found += sorted(glob.glob(os.path.join(root, pattern)))
    return found + [f"{stem}.so", f"{stem}.so.1", f"{stem}.so.13", f"{stem}.so.12"]


def _load(stem: str) -> Optional[ctypes.CDLL]:
    for path in _candidates(stem):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        lib._hpcdoctor_path = path  # type: ignore[attr-defined]
        return lib
    return None


def runtime() -> Dict[str, Any]:
    lib = _load("libcudart")
    if lib is None:
        return {"error": "no libcudart could be loaded"}
    lib.cudaGetErrorName.restype = ctypes.c_char_p
    lib.cudaGetErrorString.restype = ctypes.c_char_p
    version = ctypes.c_int(0)
    lib.cudaRuntimeGetVersion(ctypes.byref(version))
    unknown = lib.cudaGetErrorName(ctypes.c_int(1_000_000)).decode()
    codes = {}
    for code in CODES:
        name = lib.cudaGetErrorName(ctypes.c_int(code)).decode()
        if name != unknown:
            codes[str(code)] = {"name": name, "message": lib.cudaGetErrorString(ctypes.c_int(code)).decode()}
    return {"library": lib._hpcdoctor_path, "cudaRuntimeGetVersion": version.value,  # type: ignore[attr-defined]
            "unknown_name": unknown, "codes": codes}


def driver() -> Dict[str, Any]:
    lib = _load("libcuda")
    if lib is None:
        return {"error": "no libcuda could be loaded"}
    version = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(version))
    codes = {}
    for code in CODES:
        name, message = ctypes.c_char_p(), ctypes.c_char_p()
        # CUDA_ERROR_INVALID_VALUE (1) for a code the driver does not define.
        if lib.cuGetErrorName(ctypes.c_int(code), ctypes.byref(name)) != 0:
            continue
        lib.cuGetErrorString(ctypes.c_int(code), ctypes.byref(message))
        codes[str(code)] = {"name": (name.value or b"").decode(), "message": (message.value or b"").decode()}
    return {"library": lib._hpcdoctor_path, "cuDriverGetVersion": version.value,  # type: ignore[attr-defined]
            "codes": codes}


def main() -> int:
    json.dump({"runtime": runtime(), "driver": driver()}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
