"""Site configuration: what a node of this site should look like, NHC-style.

    [expect]                       # the node's shape
    gpus = 4                       # GPUs per node, as the runtime counts them
    gpu_model = "H100"             # regular expression on the product name
    cpus = 288                     # logical CPUs
    memory_gib = 480               # at least
    min_pcie_gen = 5
    min_pcie_width = 16

    [rules]
    ignore = ["ENV004"]            # codes, prefixes or symbols
    select = []

    [knowledge]                    # what the site knows better than the shipped tables
    index_url = "https://pypi-mirror.site/torch"   # wheel index base; /cu128 etc. is appended
    [[knowledge.wheel]]            # an extra or overriding wheel arch list (checked first)
    torch = ">=2.12,<2.13"
    cuda = "13.0"
    arch = ["sm_80", "sm_90", "sm_100", "sm_120"]
    cpu = "x86_64"                 # or "aarch64"; os = "linux" or "windows"
    source = "torch.cuda.get_arch_list() on our 2.12.0+cu130, 2026-11-20"
    [knowledge.release_driver]     # toolkit -> the driver it needs (before CUDA 11)
    "10.2" = "440.33"

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
    "knowledge": {"index_url": (str,), "wheel": (list,), "release_driver": (dict,)},
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
            if key == "gpu_model":
                try:
                    re.compile(value)
                except re.error as exc:
                    raise ConfigError(f"{where}: gpu_model is not a valid pattern ({exc})") from None
    _check_knowledge(path, text, data.get("knowledge") or {})
    data["_path"] = path
    return data


WHEEL_KEYS = {"torch": str, "cuda": str, "arch": list, "os": str, "cpu": str, "source": str}


def _nth_line(text: str, header: str, n: int) -> int:
    seen = 0
    for i, line in enumerate(text.splitlines(), 1):
        if line.strip().replace(" ", "") == header:
            if seen == n:
                return i
            seen += 1
    return 0


def _check_knowledge(path: str, text: str, body: Dict[str, Any]) -> None:
    """The [knowledge] overrides the wheel resolver reads (hpcdoctor.wheels): each entry must be
    usable as the shipped ones are, or the file and line are named."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    url = body.get("index_url")
    if url is not None and not re.match(r"^(https?|file)://\S+$", url):
        raise ConfigError(f"{path}:{_line_of(text, 'index_url', 'knowledge') or '?'}: index_url must be an http(s):// or file:// URL")
    for n, w in enumerate(body.get("wheel") or []):
        where = f"{path}:{_nth_line(text, '[[knowledge.wheel]]', n) or '?'}"
        if not isinstance(w, dict):
            raise ConfigError(f"{where}: knowledge.wheel must be a [[knowledge.wheel]] table")
        for key, value in w.items():
            if key not in WHEEL_KEYS:
                raise ConfigError(f"{where}: unknown key '{key}' in [[knowledge.wheel]] (known: {', '.join(sorted(WHEEL_KEYS))})")
            if not isinstance(value, WHEEL_KEYS[key]):
                raise ConfigError(f"{where}: '{key}' must be {WHEEL_KEYS[key].__name__}, not {value!r}")
        missing = [k for k in ("torch", "cuda", "arch") if k not in w]
        if missing:
            raise ConfigError(f"{where}: [[knowledge.wheel]] lacks {', '.join(missing)}")
        try:
            SpecifierSet(w["torch"])
        except InvalidSpecifier:
            raise ConfigError(f"{where}: torch must be a version range like \">=2.12,<2.13\", not {w['torch']!r}") from None
        if not (re.search(r">=\s*[\d.]+", w["torch"]) and re.search(r"<\s*[\d.]+", w["torch"])):
            raise ConfigError(f"{where}: torch needs a lower and an upper bound (\">=2.12,<2.13\")")
        if not re.match(r"^\d+\.\d+$", w["cuda"]):
            raise ConfigError(f"{where}: cuda must be like \"13.0\", not {w['cuda']!r}")
        bad = [a for a in w["arch"] if not (isinstance(a, str) and re.match(r"^(sm|compute)_\d+[af]?$", a))]
        if bad:
            raise ConfigError(f"{where}: arch entries must be like \"sm_90\" or \"compute_120\", not {bad[0]!r}")
        if w.get("os", "linux") not in ("linux", "windows") or w.get("cpu", "x86_64") not in ("x86_64", "aarch64"):
            raise ConfigError(f"{where}: os must be linux or windows, cpu x86_64 or aarch64")
    drivers = body.get("release_driver") or {}
    for cuda, driver in drivers.items():
        if not (re.match(r"^\d+\.\d+$", cuda) and isinstance(driver, str) and re.match(r"^\d+(\.\d+)+$", driver)):
            line = _line_of(text, '"' + cuda + '"', "knowledge.release_driver") or "?"
            raise ConfigError(f"{path}:{line}: "
                              f"release_driver maps \"10.2\" = \"440.33\", not {cuda!r} = {driver!r}")


def find(explicit: Optional[str]) -> Optional[Dict[str, Any]]:
    path = explicit or os.environ.get("HPCDOCTOR_CONFIG")
    if path:
        return load(path)
    if os.path.isfile(SYSTEM_CONFIG):
        return load(SYSTEM_CONFIG)
    return None
