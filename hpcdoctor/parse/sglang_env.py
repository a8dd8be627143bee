"""sglang's ``python3 -m sglang.check_env``: one "Key: value" per line, GPUs grouped by model with
their compute capabilities, nvcc, the driver, torch and the packages sglang imported, the topology.
``parse_collect_env`` hands such a report here, so a paste of either is read by one call."""

from __future__ import annotations

import re
import textwrap
from typing import Any, Dict, List

from hpcdoctor.parse.pasted_report import BOOL as _BOOL
from hpcdoctor.parse.pasted_report import dedent_paste


def is_sglang(text: str) -> bool:
    return bool(re.search(r"^(CUDA|ROCM) available: ", text, re.M)) and bool(re.search(r"^PyTorch: \S", text, re.M))


_SGLANG_KEY = re.compile(r"^[^:\s][^:]*:(?:\s|$)")
# sglang 0.2's check_env printed nvcc -V whole as the value of "NVCC:" (sgl-project/sglang#831): its
# lines after the first are that value, not a broken line.
_NVCC_V_LINE = re.compile(r"^(?:Copyright \(c\) \d{4}-\d{4} NVIDIA Corporation|Built on \S+$|Cuda compilation tools, release |Build cuda_)")
_SGLANG_NOT_PACKAGES = ("CUDA_HOME", "ROCM_HOME", "MUSA_HOME", "HIPCC", "MCC")


def parse_sglang_check_env(text: str) -> Dict[str, Any]:
    """``python3 -m sglang.check_env``: GPUs grouped by model ("GPU 0,1,2,3: NVIDIA H100 ..."),
    their compute capabilities, nvcc, the driver, torch and package versions, the topology."""
    text = dedent_paste(text)
    torch: Dict[str, Any] = {}
    names: Dict[int, str] = {}
    caps: Dict[int, str] = {}
    packages: Dict[str, str] = {}
    topo_lines: List[str] = []
    in_topo = False
    lines = text.split("\n")
    values_seen = set()
    in_nvcc = False
    for n, line in enumerate(lines):
        if in_topo:
            if re.match(r"^(Hypervisor vendor|ulimit soft): ", line):
                in_topo = False
            else:
                topo_lines.append(line)
                continue
        following = lines[n + 1] if n + 1 < len(lines) else ""
        before = lines[n - 1].strip() if n else ""
        if _NVCC_V_LINE.match(line) and (in_nvcc or (before.startswith("NVCC:"))):
            in_nvcc = True
            m = re.match(r"^Cuda compilation tools, release [\d.]+, V(\d+\.\d+\.\d+)\s*$", line)
            if m:
                torch["system_cuda_runtime"] = m.group(1)
            continue
        in_nvcc = False
        if line.startswith("NVCC:") and _NVCC_V_LINE.match(following):
            in_nvcc = True
            continue
        if before and not _SGLANG_KEY.match(lines[n - 1]) and before not in values_seen and not topo_lines:
            continue  # the tail of a broken line ("Capability: 8.6" after "GPU 0,1 Compute"), no key
        # (Early check_env printed the driver once per GPU, each on a line of its own.)
        if (_SGLANG_KEY.match(line) and following.strip() and not _SGLANG_KEY.match(following)
                and not re.match(r"^[^:]*Topology:", line) and following.strip() != line.partition(":")[2].strip()):
            # check_env prints one "Key: value" per line: one running on to a line that is no key
            # was broken (a terminal, a mail client, OCR), and its value may be cut; the rest of
            # it, on the next line, matches no key and is passed over too.
            torch.setdefault("lines_cut", []).append(line.strip()[:60])
            continue
        m = re.match(r"^GPU ([\d,]+) Compute Capability: (\d+\.\d+)\s*$", line)
        if m:
            for i in m.group(1).split(","):
                caps[int(i)] = m.group(2)
            continue
        m = re.match(r"^GPU ([\d,]+): (.+?)\s*$", line)
        if m:
            for i in m.group(1).split(","):
                names[int(i)] = m.group(2)
            continue
        m = re.match(r"^([^:]+):(?:\s+(.*))?$", line)
        if not m:
            continue
        key, value = m.group(1), (m.group(2) or "").strip()
        values_seen.add(value)
        if key in ("CUDA available", "ROCM available"):
            # check_env prints this key only for a CUDA (or a ROCm) build of torch.
            torch["cuda_available"] = _BOOL.get(value, value)
            torch["platform"] = "rocm" if key.startswith("ROCM") else "cuda"
        elif key == "PyTorch":
            torch["version"] = value.split()[0]
        elif key in ("CUDA Driver Version", "ROCM Driver Version") and value != "Not Available":
            torch["driver_version"] = value.split(",")[0].strip()
        elif key == "NVCC":
            m = re.search(r"V(\d+\.\d+\.\d+)", value)
            if m:
                torch["system_cuda_runtime"] = m.group(1)
        elif key.endswith("Topology"):
            in_topo = True
            if value:
                topo_lines.append(value)
        elif key == "Python":
            torch["python_version"] = value.split()[0]
        elif key in _SGLANG_NOT_PACKAGES:
            continue
        elif re.fullmatch(r"[A-Za-z0-9_.\-]+", key) and value and value != "Module Not Found":
            packages[key.lower().replace("_", "-")] = value
    if names:
        torch["gpu_models"] = [names[i] for i in sorted(names)]
    if caps:
        torch["compute_capabilities"] = {str(i): caps[i] for i in sorted(caps)}
    # The official wheels' local version names their CUDA ("2.3.1+cu121" was built with CUDA 12.1).
    m = re.search(r"\+cu(\d+)(\d)$", str(torch.get("version", "")))
    if m:
        torch["cuda"] = f"{m.group(1)}.{m.group(2)}"
        torch["cuda_from_version_tag"] = True
    m = re.search(r"\+rocm(\d+(?:\.\d+)*)$", str(torch.get("version", "")))
    if m:
        torch["hip"] = m.group(1)
    # What sglang imported, by module name: kept where pip's list goes, with nothing added to it.
    torch["pip"] = packages
    out: Dict[str, Any] = {"recognised": "version" in torch, "format": "sglang", "torch": torch}
    topo = "\n".join(topo_lines).strip("\n")
    if topo.strip():
        out["gpu_topology"] = textwrap.dedent(topo) + "\n"
    return out
