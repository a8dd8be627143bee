"""The version banners of nvcc and gcc (`nvcc --version`, `gcc --version`): pure functions of text."""

from __future__ import annotations

import re
from typing import Any, Dict, Optional

# nvcc: "Cuda compilation tools, release 13.5, V13.5.37" (every release since CUDA 7).
_NVCC = re.compile(r"^Cuda compilation tools, release (?P<release>\d{1,2}\.\d{1,2}), V(?P<version>\d{1,2}\.\d{1,2}\.\d{1,4})",
                   re.M)
# gcc: its first line ends with the version, "gcc (Debian 12.2.0-14+deb12u1) 12.2.0"; a clang
# installed as gcc (macOS) names itself and is not GNU's.
_GCC = re.compile(r"^(?P<prog>\S{1,40}) (?:\([^)\n]{0,120}\) )?(?P<version>(?P<major>\d{1,3})\.\d{1,3}(?:\.\d{1,3})?)\b")


def parse_nvcc_version(text: str) -> Optional[Dict[str, Any]]:
    m = _NVCC.search(text[:8192])
    return {"release": m.group("release"), "version": m.group("version")} if m else None


def parse_gcc_version(text: str) -> Optional[Dict[str, Any]]:
    head = text[:8192]
    first = head.splitlines()[0] if head.strip() else ""
    if "clang" in head.lower():
        return None
    m = _GCC.match(first)
    if not m:
        return None
    return {"version": m.group("version"), "major": int(m.group("major"))}
