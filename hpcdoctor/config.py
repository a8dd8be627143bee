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
    data["_path"] = path
    return data


def find(explicit: Optional[str]) -> Optional[Dict[str, Any]]:
    path = explicit or os.environ.get("HPCDOCTOR_CONFIG")
    if path:
        return load(path)
    if os.path.isfile(SYSTEM_CONFIG):
        return load(SYSTEM_CONFIG)
    return None
