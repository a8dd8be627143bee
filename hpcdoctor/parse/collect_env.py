"""``python -m torch.utils.collect_env``: the report users paste into tickets.

Also accepts vLLM's and sglang's copies (same first part) and reports cut off anywhere: every
field is optional, and only what the text says is returned.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

# The command whose output this is: how snapshots and pastes file it, and how checks ask for it.
ARGV = ["python3", "-m", "torch.utils.collect_env"]

_NA = ("N/A", "Could not collect", "None", "")
_KEYS = {
    "PyTorch version": "version",
    "Is debug build": "debug_build",
    "CUDA used to build PyTorch": "cuda",
    "ROCM used to build PyTorch": "hip",
    "OS": "os",
    "GCC version": "gcc",
    "Libc version": "libc",
    "Python version": "python_version",
    "Python platform": "python_platform",
    "Is CUDA available": "cuda_available",
    "CUDA runtime version": "system_cuda_runtime",
    "CUDA_MODULE_LOADING set to": "cuda_module_loading",
    "GPU models and configuration": "gpu_models",
    "Nvidia driver version": "driver_version",
    "cuDNN version": "system_cudnn",
    "HIP runtime version": "hip_runtime",
    "MIOpen runtime version": "miopen",
    "Is XNNPACK available": "xnnpack",
    "Is XPU available": "xpu_available",
}
_BOOL = {"True": True, "False": False, "Yes": True, "No": False}


def looks_like_collect_env(text: str) -> bool:
    return bool(re.search(r"^(PyTorch version|Collecting environment information)", text, re.M))


def parse_collect_env(text: str) -> Dict[str, Any]:
    text = text.replace("\r\n", "\n")
    out: Dict[str, Any] = {"recognised": False}
    torch: Dict[str, Any] = {}
    lines = text.split("\n")
    i = 0
    pip: Dict[str, str] = {}
    conda: Dict[str, Dict[str, str]] = {}
    cpu_lines: List[str] = []
    section = None
    while i < len(lines):
        line = lines[i]
        if line.startswith("CPU:"):
            section = "cpu"
            i += 1
            continue
        if line.startswith("Versions of relevant libraries:"):
            section = "libs"
            i += 1
            continue
        if section == "cpu" and line.strip():
            if re.match(r"^[A-Za-z][A-Za-z0-9 ()/_.-]*:", line) and line.split(":", 1)[0] in _KEYS:
                section = None
            else:
                cpu_lines.append(line)
                i += 1
                continue
        if section == "libs":
            m = re.match(r"^\[pip\d?\]\s+(\S+?)==(\S+)", line)
            if m:
                pip[m.group(1).lower().replace("_", "-")] = m.group(2)
            m = re.match(r"^\[conda\]\s+(\S+)\s+(\S+)\s+(\S+)", line)
            if m:
                conda[m.group(1)] = {"version": m.group(2), "build": m.group(3)}
            i += 1
            continue
        key, sep, value = line.partition(":")
        field = _KEYS.get(key.strip()) if sep else None
        if field:
            value = value.strip()
            # Multi-line values (GPU list, cuDNN candidates) continue on lines without a key.
            extra = []
            j = i + 1
            while j < len(lines) and lines[j].strip() and not _is_key_line(lines[j]):
                extra.append(lines[j].strip())
                j += 1
            if field in ("gpu_models", "system_cudnn") and extra:
                value = "\n".join([value] + extra).strip()
                i = j - 1
            torch[field] = _convert(field, value)
        i += 1
    if "version" in torch:
        out["recognised"] = True
    if pip:
        torch["pip"] = pip
    if conda:
        torch["conda_list"] = conda
    if cpu_lines:
        out["lscpu"] = "\n".join(cpu_lines)
    out["torch"] = torch
    return out


def _is_key_line(line: str) -> bool:
    key, sep, _ = line.partition(":")
    return bool(sep) and (key.strip() in _KEYS or line.startswith(("CPU:", "Versions of relevant")))


def _convert(field: str, value: str) -> Any:
    if value in _NA:
        return None
    if field in ("cuda_available", "debug_build", "xnnpack", "xpu_available"):
        return _BOOL.get(value, value)
    if field == "version":
        return value.split()[0]
    if field == "gpu_models":
        models = []
        for part in value.split("\n"):
            m = re.match(r"^GPU (\d+):\s*(.+?)(?:\s*\(UUID:.*\))?$", part.strip())
            if m:
                models.append(m.group(2).strip())
            elif part.strip() and not models:
                models.append(part.strip())
        return models
    if field == "system_cudnn":
        versions = sorted(set(re.findall(r"libcudnn\.so\.(\d+\.\d+\.\d+)", value)))
        if versions:
            return versions[-1] if len(versions) == 1 else versions
        return _first_version(value) or value
    if field == "python_version":
        return value.split()[0]
    return value


def _first_version(text: str) -> Optional[str]:
    m = re.search(r"\d+\.\d+(?:\.\d+)?", text)
    return m.group(0) if m else None
