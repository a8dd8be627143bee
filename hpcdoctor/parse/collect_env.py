"""``python -m torch.utils.collect_env``: the report users paste into tickets.

Also reads vLLM's copy (torch's first part, then vLLM's version, build flags, ``nvidia-smi topo
-m`` or ``rocm-smi --showtopo`` and a filtered environment; since 2025 in a "Key   : value" layout
under ``=====`` banners) and sglang's ``python3 -m sglang.check_env`` (one "Key: value" per line,
with compute capabilities). Reports may be cut off anywhere or indented as a whole by a Markdown
paste: every field is optional, and only what the text says is returned.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor.facts import Unknown
from hpcdoctor.parse import MAX_GPUS
from hpcdoctor.parse.pasted_report import BOOL as _BOOL
from hpcdoctor.parse.pasted_report import dedent_paste
from hpcdoctor.parse.sglang_env import is_sglang, parse_sglang_check_env

# The commands whose output this is: how snapshots and pastes file it, and how checks ask for it.
ARGV = ["python3", "-m", "torch.utils.collect_env"]
SGLANG_ARGV = ["python3", "-m", "sglang.check_env"]

_NA = ("N/A", "Could not collect", "None", "No CUDA", "")
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
# Keys collect_env prints that nothing here reads (torch 2.13.0 wheel, torch/utils/collect_env.py,
# env_info_fmt, lines 786-802, read 2026-11-25): still keys, so the line above them is whole and
# not a value broken by a terminal.
_UNREAD_KEYS = frozenset(("Clang version", "CMake version", "Caching allocator config"))
# vLLM's additions after the library list.
_VLLM_KEYS = {"ROCM Version": "rocm_version", "Neuron SDK Version": "neuron_sdk", "vLLM Version": "version"}
# vLLM's report lists every variable under these prefixes, from its first version with an
# environment section (vllm-project/vllm#9293, Nov 2024) on, except names holding these words;
# later versions add prefixes, and vLLM's own variables only where vllm.envs defines them.
VLLM_ENV_PREFIXES = ("TORCH", "NCCL", "PYTORCH", "CUDA", "CUBLAS", "CUDNN", "OMP_", "MKL_", "NVIDIA")
VLLM_ENV_HIDDEN = ("secret", "token", "api", "access", "password")
_BANNER = re.compile(r"^={10,}\s*$")
_ENV_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def looks_like_collect_env(text: str) -> bool:
    return bool(re.search(r"^\s*(PyTorch version\s*(?::|\s+\d)|Collecting environment information|Versions of relevant libraries:\s*$)",
                          text, re.M))


def parse_collect_env(text: str) -> Dict[str, Any]:
    text = dedent_paste(text)
    if is_sglang(text):
        return parse_sglang_check_env(text)
    # Old vLLM reports lost a newline after an empty conda list: "[conda] Could not collectROCM Version: ...".
    text = re.sub(r"(?m)^(\[conda\].*?\S)(ROCM Version: )", r"\1\n\2", text)
    lines = text.split("\n")
    torch: Dict[str, Any] = {}
    pip: Dict[str, str] = {}
    conda: Dict[str, Dict[str, str]] = {}
    cpu_lines: List[str] = []
    topo_lines: List[str] = []
    env: Dict[str, str] = {}
    vllm: Dict[str, Any] = {}
    section: Optional[str] = None
    last_library: Optional[Tuple[str, str]] = None
    cut_libraries: List[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        title = _banner_title(lines, i)
        if title is not None:
            section = {"CPU Info": "cpu", "Versions of relevant libraries": "libs", "vLLM Info": "vllm",
                       "Environment Variables": "env"}.get(title)
            i += 3
            continue
        if _BANNER.match(line):
            i += 1
            continue
        if line.startswith("CPU:") and not line[4:].strip():
            section = "cpu"
            i += 1
            continue
        if line.startswith("Versions of relevant libraries"):
            section = "libs"
            i += 1
            continue
        if section == "cpu" and line.strip():
            if not _is_key_line(line):
                cpu_lines.append(line)
                i += 1
                continue
            section = None
        if section == "libs" and line.strip().startswith("```"):
            # A Markdown fence closing the pasted report: the last package line was whole.
            section, last_library = None, None
            i += 1
            continue
        if section == "libs" and not _VLLM_KEY.match(line):
            if line.strip() and not line.lstrip().startswith("[") and last_library:
                # A package line running on to the next one was broken: its version may be cut.
                (pip if last_library[0] == "pip" else conda).pop(last_library[1], None)
                cut_libraries.append(last_library[1])
            last_library = _library_line(line, pip, conda)
            i += 1
            continue
        if section == "topo":
            if line.strip() and (_ENV_LINE.match(line.strip()) and not line.startswith((" ", "\t"))):
                section = "env"  # old vLLM reports run the environment on after the topology
            else:
                topo_lines.append(line)
                i += 1
                continue
        if section == "env":
            m = _ENV_LINE.match(line.strip())
            if m:
                env[m.group(1)] = m.group(2)
            i += 1
            continue
        m = _VLLM_KEY.match(line)
        if m:
            section = "vllm"
            key, value = m.group(1).strip(), m.group(2).strip()
            if key == "vLLM Build Flags":
                flags = value or (lines[i + 1].strip() if i + 1 < len(lines) else "")
                vllm["build_flags"] = flags or None
                i += 1 if value else 2
                continue
            if key == "GPU Topology":
                section = "topo"
                if value:
                    topo_lines.append(value)
                i += 1
                continue
            field = _VLLM_KEYS[key]
            vllm[field] = None if value in _NA else value
            i += 1
            continue
        key, sep, value = line.partition(":")
        field = _KEYS.get(key.strip()) if sep else None
        if not field:
            # Early reports wrote some keys without a colon: "PyTorch version 1.0.0".
            m = _NO_COLON.match(line)
            if m:
                key, value, field = m.group(1), m.group(2), _KEYS[m.group(1)]
        if field:
            value = value.strip()
            # Multi-line values (GPU list, cuDNN candidates) continue on lines without a key.
            extra = []
            j = i + 1
            while (j < len(lines) and lines[j].strip() and not _is_key_line(lines[j]) and not _BANNER.match(lines[j])
                   and not _PY_WARNING.match(lines[j].strip())):
                extra.append(lines[j].strip())
                j += 1
            if field in ("gpu_models", "system_cudnn") and extra:
                value = "\n".join([value] + extra).strip()
                i = j - 1
                torch[field] = _convert(field, value, i - len(extra) + 1)
            elif extra and not _head_is_whole(field, value):
                # collect_env prints these on one line: text running on to the next line is a line
                # broken by a terminal, a mail client or OCR, and its value may be cut anywhere.
                torch[field] = _cut_value(line, extra[0], i + 1)
            else:
                torch[field] = _convert(field, value)
        i += 1
    # A library list pasted alone is still collect_env's: it says what pip and conda hold.
    out: Dict[str, Any] = {"recognised": "version" in torch or bool(pip or conda), "format": "vllm" if vllm else "torch"}
    if pip:
        torch["pip"] = pip
    if conda:
        torch["conda_list"] = conda
    if cut_libraries:
        torch["libraries_cut"] = cut_libraries
    if cpu_lines:
        out["lscpu"] = "\n".join(cpu_lines)
    topo = "\n".join(topo_lines).strip("\n")
    if topo.strip() and topo.strip() not in _NA:
        out["gpu_topology"] = textwrap.dedent(topo) + "\n"
    if vllm:
        out["vllm"] = vllm
    if env:
        out["env_vars"] = env
    out["torch"] = torch
    return out


_NO_COLON = re.compile(r"^(%s)\s+(\d\S*.*)$" % "|".join(re.escape(k) for k in _KEYS))
_VLLM_KEY = re.compile(r"^(ROCM Version|Neuron SDK Version|vLLM Version|vLLM Build Flags|GPU Topology)\s*:\s*(.*)$")


def _banner_title(lines: List[str], i: int) -> Optional[str]:
    """The title of a "=====" / title / "=====" banner starting at line i."""
    if i + 2 < len(lines) and _BANNER.match(lines[i]) and _BANNER.match(lines[i + 2]) and lines[i + 1].strip():
        return lines[i + 1].strip()
    return None


def _library_line(line: str, pip: Dict[str, str], conda: Dict[str, Dict[str, str]]) -> Optional[Tuple[str, str]]:
    """Files one package line; returns which list and name it went to."""
    # "[pip3] torch==2.1.0", and before 2019 "[pip] torch (1.0.0.dev20181022)".
    m = re.match(r"^\[pip\d?\]\s+(\S+?)(?:==(\S+)|\s+\((\S+)\))\s*$", line)
    if m:
        name = m.group(1).lower().replace("_", "-")
        pip[name] = m.group(2) or m.group(3)
        return ("pip", name)
    m = re.match(r"^\[conda\]\s+(\S+)\s+(\S+)\s+(\S+)(?:\s+(\S+))?", line)
    if m and line[len("[conda]"):].strip() not in _NA:  # "[conda] Could not collect" is no package
        # The channel column is empty for the defaults channel; "pypi" marks pip's installs.
        conda[m.group(1)] = {"version": m.group(2), "build": m.group(3), "channel": m.group(4) or "defaults"}
        return ("conda", m.group(1))
    return None


def _is_key_line(line: str) -> bool:
    key, sep, _ = line.partition(":")
    return bool(sep) and (key.strip() in _KEYS or key.strip() in _UNREAD_KEYS or line.startswith(("CPU:", "Versions of relevant"))
                          or bool(_VLLM_KEY.match(line)))


# A Python warning printed into the report (torch's CUDA-initialisation warnings, for one) is no
# continuation of the line above it.
_PY_WARNING = re.compile(r"^\S*\.py:\d+: \w*Warning: ")
# Fields read by their first word only ("3.10.13 (main, ...)"): a cut after that word loses nothing.
_HEAD_FIELDS = ("version", "python_version")


def _head_is_whole(field: str, value: str) -> bool:
    return field in _HEAD_FIELDS and len(value.split(None, 1)) == 2


def _rejoined_na(head: str, tail: str) -> bool:
    """Whether a value broken over two lines is one of collect_env's not-available words
    ("No" + "CUDA"), the break having eaten a space or not."""
    return bool(head) and (f"{head} {tail}".strip() in _NA or f"{head}{tail}".strip() in _NA)


def _cut_value(line: str, tail: str, number: int) -> Any:
    key, _, head = line.partition(":")
    if _rejoined_na(head.strip(), tail):
        return None
    return Unknown(f"collect_env line {number} ('{line.strip()[:60]}') runs on to the next line "
                   f"('{tail[:30]}'): a broken line, so its value was not read")


def _gpu_models(value: str, first_line: int) -> Any:
    """GPU names, one per "GPU n:" line (or one on the key's own line); a name whose line runs on
    to a line that is neither another GPU nor a MIG device under it was cut, and is Unknown."""
    models: List[Any] = []
    whole: List[bool] = []
    for n, part in enumerate(value.split("\n")):
        part = part.strip()
        m = re.match(r"^GPU (\d+):\s*(.+)$", part)
        if m or (n == 0 and part):
            name = m.group(2) if m else part
            # The name ends where nvidia-smi -L's "(UUID: ..." starts, cut or not.
            whole.append("(UUID:" in name)
            models.append(re.sub(r"\s*\(UUID:.*$", "", name).strip())
        elif re.match(r"^MIG\b", part) or not models:
            continue
        elif whole[-1]:
            continue
        elif n == 1 and len(models) == 1 and _rejoined_na(models[0], part):
            return None
        elif isinstance(models[-1], str) and models[-1] not in _NA:
            models[-1] = Unknown(f"the GPU name '{models[-1]}' at collect_env line {first_line + n - 1} runs on "
                                 f"to the next line ('{part[:30]}'): a broken line, so the name was not read")
    models = [m for m in models if not (isinstance(m, str) and m in _NA)]
    if len(models) > MAX_GPUS:
        return Unknown(f"collect_env lists {len(models)} GPUs, more than any node holds ({MAX_GPUS})")
    return models or None


def _convert(field: str, value: str, first_line: int = 0) -> Any:
    if value in _NA:
        return None
    if field in ("cuda_available", "debug_build", "xnnpack", "xpu_available"):
        return _BOOL.get(value, value)
    if field == "version":
        return value.split()[0]
    if field == "gpu_models":
        return _gpu_models(value, first_line)
    if field == "system_cudnn":
        parts = value.split("\n")
        # Every candidate after the first line is a path ("/usr/lib/.../libcudnn.so.8.9.7"): a line
        # that is none is a broken one, and which version was cut, or how many there were, is lost.
        if any(n and not p.lstrip().startswith("/") for n, p in enumerate(parts)):
            return Unknown(f"collect_env's cuDNN candidates run over broken lines: {value[:80]!r}")
        versions = sorted(set(re.findall(r"libcudnn\.so\.(\d+\.\d+\.\d+)$", value, re.M)))
        if versions:
            return versions[-1] if len(versions) == 1 else versions
        # A bare version, or a library named by its major alone ("libcudnn.so.7"); never a number
        # from elsewhere in a path ("/usr/local/cuda-9.0/...") or from a path cut across lines.
        m = re.fullmatch(r"(\d+\.\d+(?:\.\d+)?)", value.strip()) or re.search(r"libcudnn\.so\.(\d+)$", value.strip())
        if m:
            return m.group(1)
        return Unknown(f"no cuDNN version in collect_env's candidates: {value[:80]!r}") if "\n" in value else value
    if field == "python_version":
        return value.split()[0]
    return value
