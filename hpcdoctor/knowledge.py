"""Hardware and site knowledge as data: TOML files shipped in ``hpcdoctor/knowledge``."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any, Dict, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on the oldest supported Python in CI
    import tomli as tomllib

KNOWLEDGE_DIR = Path(__file__).parent / "knowledge"


@functools.lru_cache(maxsize=None)
def load(name: str) -> Dict[str, Any]:
    with open(KNOWLEDGE_DIR / f"{name}.toml", "rb") as fh:
        return tomllib.load(fh)


def reference_title(ref: str) -> str:
    """Human title of a reference item ('001_....txt (section)' or a URL)."""
    key = ref.split()[0]
    seed = load("sources").get("seeds", {}).get(key)
    if seed:
        rest = ref[len(key):].strip()
        return f"{seed['title']} {rest}".strip()
    return ref


def gpu_sku(name: str) -> Optional[Dict[str, Any]]:
    """The datasheet ([[sku]] or site [[gpu]]) entry for a GPU product name, or None; matched by
    tokens in hpcdoctor.gpus, which also answers for GPUs known without a datasheet."""
    from hpcdoctor import gpus

    return gpus.datasheet(name)


def compute_capability(name: str) -> Optional[str]:
    """CUDA compute capability for an NVIDIA product name (hpcdoctor.gpus.compute_capability)."""
    from hpcdoctor import gpus

    return gpus.compute_capability(name)


def wheel_arch_list(torch_version: str) -> Optional[Dict[str, Any]]:
    """Arch list of the official wheel a "2.6.0+cu124"-style version names, or None."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import InvalidVersion, Version

    m = re.match(r"^(\d+\.\d+(?:\.\d+)?)[^+]*\+cu(\d+)(\d)$", torch_version or "")
    if not m:
        return None
    try:
        release = Version(m.group(1))
    except InvalidVersion:
        return None
    cuda = f"{int(m.group(2))}.{m.group(3)}"
    for w in load("torch_wheels").get("wheel", []):
        if w["cuda"] == cuda and release in SpecifierSet(w["torch"]):
            return {"arch": list(w["arch"]), "cuda": cuda}
    return None

