"""Site configuration: what a node of this site should look like, NHC-style.

    [expect]                       # the node's shape
    gpus = 4                       # GPUs per node, as the runtime counts them
    gpu_model = "H100"             # regular expression on the product name
    cpus = 288                     # logical CPUs
    memory_gib = 480               # at least
    min_pcie_gen = 5
    min_pcie_width = 16

    [health]
    unknown_gpu = "drain"          # "warn": an unknown GPU (a hung nvidia-smi) does not drain in nhc

    [rules]
    ignore = ["ENV004"]            # codes, prefixes or symbols
    select = []

    [[gpu]]                        # a GPU hpcdoctor does not know yet, or a local correction
    names = ["H300 SXM"]           # matched by tokens, as knowledge/gpus.toml's names
    cc = "10.3"                    # or gfx = "gfx950" for AMD
    segment = "datacenter"         # datacenter | workstation | geforce | embedded
    bf16 = 2500                    # optional datasheet figures, as in gpus.toml

The file is ``--config FILE``, else ``$HPCDOCTOR_CONFIG``, else ``/etc/hpcdoctor/config.toml`` when it
exists. A mistake names the file and the line.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any, Dict, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the oldest supported Pythons
    import tomli as tomllib

SYSTEM_CONFIG = "/etc/hpcdoctor/config.toml"
SCHEMA: Dict[str, Dict[str, tuple]] = {
    "expect": {"gpus": (int,), "gpu_model": (str,), "cpus": (int,), "memory_gib": (int, float),
               "min_pcie_gen": (int,), "min_pcie_width": (int,)},
    "rules": {"ignore": (list,), "select": (list,)},
    "health": {"unknown_gpu": (str,)},
    "bench": {"min_gemm_bf16_tflops": (int, float), "min_gemm_tf32_tflops": (int, float),
              "min_d2d_gbs": (int, float), "min_h2d_gbs": (int, float), "min_allreduce_busbw_gbs": (int, float)},
}


class ConfigError(Exception):
    pass


def _line_of(text: str, key: str, section: Optional[str] = None) -> int:
    in_section = section is None
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            in_section = section is None or stripped.strip("[] ") == section
            if section is not None and stripped.strip("[] ") == key:
                return i
            continue
        if in_section and re.match(rf"^{re.escape(key)}\s*=", stripped):
            return i
    return 0


def load(path: str) -> Dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the site config ({exc.strerror or exc})") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise ConfigError(f"{path}:{m.group(1) if m else '?'}: not valid TOML ({exc})") from None
    site_gpus = data.pop("gpu", None)
    for section, body in data.items():
        if section not in SCHEMA:
            raise ConfigError(f"{path}:{_line_of(text, section, None) or '?'}: unknown section [{section}] "
                              f"(known: {', '.join(sorted(SCHEMA))})")
        if not isinstance(body, dict):
            raise ConfigError(f"{path}:{_line_of(text, section)}: {section} must be a [section]")
        for key, value in body.items():
            where = f"{path}:{_line_of(text, key, section) or '?'}"
            if key not in SCHEMA[section]:
                raise ConfigError(f"{where}: unknown key '{key}' in [{section}] (known: {', '.join(sorted(SCHEMA[section]))})")
            types = SCHEMA[section][key]
            if isinstance(value, bool) or not isinstance(value, types):
                raise ConfigError(f"{where}: '{key}' must be {' or '.join(t.__name__ for t in types)}, not {value!r}")
            if section == "health" and key == "unknown_gpu" and value not in ("drain", "warn"):
                raise ConfigError(f"{where}: unknown_gpu must be \"drain\" or \"warn\", not {value!r}")
            if key == "gpu_model":
                try:
                    re.compile(value)
                except re.error as exc:
                    raise ConfigError(f"{where}: gpu_model is not a valid pattern ({exc})") from None
    if site_gpus is not None:
        data["gpu"] = gpu_entries(path, text, site_gpus)
    data["_path"] = path
    return data


GPU_KEYS: Dict[str, tuple] = {
    "names": (list,), "id": (str,), "vendor": (str,), "cc": (str,), "gfx": (str,), "segment": (str,),
    "tensor_rate": (str,), "c2c": (bool,), "gcds": (int,), "memory_gib": (list,), "mem_bw_gbs": (int, float),
    "tdp_w": (int, float), "pcie_gen": (int,), "nvlink_gbs": (int, float), "xgmi_gbs": (int, float),
    "fp64": (int, float), "fp32": (int, float), "tf32": (int, float), "bf16": (int, float),
    "fp16": (int, float), "fp8": (int, float), "has_bf16": (bool,), "has_tf32": (bool,), "note": (str,),
    "source": (str,),
}
SEGMENTS = ("datacenter", "workstation", "geforce", "embedded")


def gpu_entries(path: str, text: str, entries: Any) -> list:
    """The site's [[gpu]] tables, checked, as entries hpcdoctor.gpus matches before its own."""
    headers = [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"^\s*\[\[\s*gpu\s*\]\]", line)]
    if not isinstance(entries, list):
        raise ConfigError(f"{path}:{_line_of(text, 'gpu') or '?'}: gpu must be [[gpu]] tables")
    out = []
    for i, e in enumerate(entries):
        label = f"{path}:{headers[i] if i < len(headers) else '?'}: [[gpu]]"
        for key, value in e.items():
            types = GPU_KEYS.get(key)
            if types is None:
                raise ConfigError(f"{label}: unknown key '{key}' (known: {', '.join(sorted(GPU_KEYS))})")
            if isinstance(value, bool) != (bool in types) or not isinstance(value, types):
                raise ConfigError(f"{label}: '{key}' must be {' or '.join(t.__name__ for t in types)}, not {value!r}")
        names = e.get("names")
        if not names or not all(isinstance(n, str) and n.strip() for n in names):
            raise ConfigError(f"{label}: needs names = [\"...\"], the GPU's product name(s)")
        if not e.get("cc") and not e.get("gfx"):
            raise ConfigError(f"{label}: needs cc = \"X.Y\" (NVIDIA) or gfx = \"gfxNNN\" (AMD)")
        if e.get("cc") and not re.match(r"^\d+\.\d+$", e["cc"]):
            raise ConfigError(f"{label}: cc must look like \"9.0\", not {e['cc']!r}")
        if e.get("segment") and e["segment"] not in SEGMENTS:
            raise ConfigError(f"{label}: segment must be one of {', '.join(SEGMENTS)}")
        entry = {"vendor": "amd" if e.get("gfx") else "nvidia", **e}
        entry.setdefault("id", f"site-{i + 1}")
        entry.setdefault("source", f"site config {path}")
        out.append(entry)
    return out


def find(explicit: Optional[str]) -> Optional[Dict[str, Any]]:
    path = explicit or os.environ.get("HPCDOCTOR_CONFIG")
    if path:
        return load(path)
    if os.path.isfile(SYSTEM_CONFIG):
        return load(SYSTEM_CONFIG)
    return None
