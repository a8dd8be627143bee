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
    """The [[sku]] entry whose pattern matches a GPU product name, or None for an unknown GPU."""
    for sku in load("gpus").get("sku", []):
        if re.search(sku["match"], name or "", re.I):
            return sku
    return None


def compute_capability(name: str) -> Optional[str]:
    """CUDA compute capability for an NVIDIA product name, from the SKU table or the cc table."""
    sku = gpu_sku(name)
    if sku and sku.get("cc"):
        return str(sku["cc"])
    for entry in load("gpus").get("cc", []):
        if re.search(entry["match"], name or "", re.I):
            return str(entry["cc"])
    return None


def wheel_arch_list(torch_version: str, os_name: str = "linux", cpu: str = "x86_64") -> Optional[Dict[str, Any]]:
    """Arch list of the official wheel a "2.6.0+cu124"-style version names, or None (hpcdoctor.wheels)."""
    from hpcdoctor import wheels

    return wheels.wheel_arch_list(torch_version, os_name, cpu)
