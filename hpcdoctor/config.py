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
    [knowledge]                    # what the site knows better than the shipped tables
    index_url = "https://pypi-mirror.site/torch"   # wheel index base; /cu128 etc. is appended
    [[knowledge.wheel]]            # an extra or overriding wheel arch list (checked first)
    torch = ">=2.12,<2.13"
    cuda = "13.0"
    arch = ["sm_80", "sm_90", "sm_100", "sm_120"]
    cpu = "x86_64"                 # or "aarch64"; os = "linux" or "windows"
    source = "torch.cuda.get_arch_list() on our 2.12.0+cu130, 2026-11-20"
    python = ["3.11", "3.12"]     # optional: the Pythons these wheels exist for
    [[knowledge.rocm_wheel]]       # an extra or overriding ROCm wheel gfx list (checked first)
    torch = ">=2.13,<2.14"
    rocm = "7.2"
    gfx = ["gfx90a", "gfx942"]
    source = "torch.cuda.get_arch_list() on our 2.13.0+rocm7.2"
    [knowledge.release_driver]     # toolkit -> the driver it needs (before CUDA 11)
    "10.2" = "440.33"

The file is ``--config FILE``, else ``$HPCDOCTOR_CONFIG``, else ``/etc/hpcdoctor/config.toml`` when it
exists. A mistake names the file and the line.
"""

from __future__ import annotations

import math
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
    "knowledge": {"index_url": (str,), "wheel": (list,), "rocm_wheel": (list,), "release_driver": (dict,)},
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
            # TOML has nan and inf, and a count or a threshold below zero expects nothing: either
            # would pass or fail every node silently.
            if isinstance(value, (int, float)) and not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"{where}: '{key}' must be a finite number of at least 0, not {value!r}")
            if section == "health" and key == "unknown_gpu" and value not in ("drain", "warn"):
                raise ConfigError(f"{where}: unknown_gpu must be \"drain\" or \"warn\", not {value!r}")
            if key == "gpu_model":
                try:
                    re.compile(value)
                except re.error as exc:
                    raise ConfigError(f"{where}: gpu_model is not a valid pattern ({exc})") from None
    if site_gpus is not None:
        data["gpu"] = gpu_entries(path, text, site_gpus)
    _check_knowledge(path, text, data.get("knowledge") or {})
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
    """The site's [[gpu]] tables, checked, as entries hpcdoctor.knowledge.gpus matches before its own."""
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
            numbers = value if isinstance(value, list) else [value]
            if any(isinstance(x, (int, float)) and not isinstance(x, bool) and not (math.isfinite(x) and x >= 0)
                   for x in numbers):
                raise ConfigError(f"{label}: '{key}' must hold finite numbers of at least 0, not {value!r}")
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
# python: the CPython versions ("3.12") the site's wheels exist for; without it a release the shipped
# [[python]] table lacks is not offered to a node whose Python is known.
WHEEL_KEYS = {"torch": str, "cuda": str, "arch": list, "os": str, "cpu": str, "source": str, "python": list}
# rocm and gfx are checked by their own messages (rocm must be like "7.2", gfx must be a list).
ROCM_WHEEL_KEYS = {"torch": object, "rocm": object, "gfx": object, "source": object, "python": list}


def _nth_line(text: str, header: str, n: int) -> int:
    seen = 0
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip().replace(" ", "") == header:
            if seen == n:
                return i
            seen += 1
    return 0


def _check_knowledge(path: str, text: str, body: Dict[str, Any]) -> None:
    """The [knowledge] overrides the wheel resolver reads (hpcdoctor.knowledge.wheels): each entry must be
    usable as the shipped ones are, or the file and line are named."""
    url = body.get("index_url")
    if url is not None and not re.match(r"^(https?|file)://\S+$", url):
        raise ConfigError(f"{path}:{_line_of(text, 'index_url', 'knowledge') or '?'}: index_url must be an http(s):// or file:// URL")
    for where, w in _wheel_entries(path, text, body, "wheel", WHEEL_KEYS, ("torch", "cuda", "arch"), ">=2.12,<2.13"):
        if not re.match(r"^\d+\.\d+$", w["cuda"]):
            raise ConfigError(f"{where}: cuda must be like \"13.0\", not {w['cuda']!r}")
        bad = [a for a in w["arch"] if not (isinstance(a, str) and re.match(r"^(sm|compute)_\d+[af]?$", a))]
        if bad:
            raise ConfigError(f"{where}: arch entries must be like \"sm_90\" or \"compute_120\", not {bad[0]!r}")
        if w.get("os", "linux") not in ("linux", "windows") or w.get("cpu", "x86_64") not in ("x86_64", "aarch64"):
            raise ConfigError(f"{where}: os must be linux or windows, cpu x86_64 or aarch64")
    for where, w in _wheel_entries(path, text, body, "rocm_wheel", ROCM_WHEEL_KEYS, ("torch", "rocm", "gfx"), ">=2.13,<2.14"):
        if not (isinstance(w["rocm"], str) and re.match(r"^\d+\.\d+(\.\d+)?$", w["rocm"])):
            raise ConfigError(f"{where}: rocm must be like \"7.2\", not {w['rocm']!r}")
        bad = [a for a in (w["gfx"] if isinstance(w["gfx"], list) else [w["gfx"]]) if not (isinstance(a, str) and re.match(r"^gfx[0-9a-f]+$", a))]
        if bad or not isinstance(w["gfx"], list):
            raise ConfigError(f"{where}: gfx must be a list like [\"gfx90a\", \"gfx942\"], not {(bad or [w['gfx']])[0]!r}")
    drivers = body.get("release_driver") or {}
    for cuda, driver in drivers.items():
        if not (re.match(r"^\d+\.\d+$", cuda) and isinstance(driver, str) and re.match(r"^\d+(\.\d+)+$", driver)):
            line = _line_of(text, '"' + cuda + '"', "knowledge.release_driver") or "?"
            raise ConfigError(f"{path}:{line}: "
                              f"release_driver maps \"10.2\" = \"440.33\", not {cuda!r} = {driver!r}")


def _wheel_entries(path: str, text: str, body: Dict[str, Any], table: str, keys: Dict[str, type],
                   required: tuple, example: str):
    """Each [[knowledge.<table>]] entry with where it is (file:line), after the checks both wheel
    tables share: a table, known keys of the right type, the required keys, and a torch range
    with both bounds. The caller checks what is its own (cuda and arch, or rocm and gfx)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    header = f"[[knowledge.{table}]]"
    for n, w in enumerate(body.get(table) or []):
        where = f"{path}:{_nth_line(text, header, n) or '?'}"
        if not isinstance(w, dict):
            raise ConfigError(f"{where}: knowledge.{table} must be a {header} table")
        for key, value in w.items():
            if key not in keys:
                raise ConfigError(f"{where}: unknown key '{key}' in {header} (known: {', '.join(sorted(keys))})")
            if not isinstance(value, keys[key]):
                raise ConfigError(f"{where}: '{key}' must be {keys[key].__name__}, not {value!r}")
        missing = [k for k in required if k not in w]
        if missing:
            raise ConfigError(f"{where}: {header} lacks {', '.join(missing)}")
        try:
            SpecifierSet(str(w["torch"]))
        except InvalidSpecifier:
            raise ConfigError(f"{where}: torch must be a version range like \"{example}\", not {w['torch']!r}") from None
        if not (re.search(r">=\s*[\d.]+", str(w["torch"])) and re.search(r"<\s*[\d.]+", str(w["torch"]))):
            raise ConfigError(f"{where}: torch needs a lower and an upper bound (\"{example}\")")
        yield where, w


def find(explicit: Optional[str]) -> Optional[Dict[str, Any]]:
    path = explicit or os.environ.get("HPCDOCTOR_CONFIG")
    if path:
        return load(path)
    if os.path.isfile(SYSTEM_CONFIG):
        return load(SYSTEM_CONFIG)
    return None
