"""AMD GPU reports: ``amd-smi static --json`` (ROCm 6 list form and ROCm 7 ``{"gpu_data": ...}``,
also behind the non-root permission banner) and ``rocm-smi --json`` (a card-keyed dict)."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List

from hpcdoctor.facts import Unknown
from hpcdoctor.jsonbound import depth_over

GTS_TO_GEN = {2.5: 1, 5.0: 2, 8.0: 3, 16.0: 4, 32.0: 5, 64.0: 6}


def extract_json(text: str) -> Any:
    """The JSON document in a tool's output, skipping any banner printed before it."""
    # A few starts at most, each decoded in place: slicing the rest of the text at every "[" line
    # and decoding it was quadratic in a recording of many such lines.
    decoder = json.JSONDecoder()
    for n, m in enumerate(re.finditer(r"^\s*[\[{]", text, re.M)):
        if n >= 16:
            break
        try:
            value, _ = decoder.raw_decode(text, m.end() - 1)
        except (ValueError, RecursionError):
            continue
        if depth_over(value):
            raise ValueError("the JSON document nests deeper than any tool's output")
        return value
    raise ValueError("no JSON document in the output")


def _na(v: Any) -> bool:
    return v is None or (isinstance(v, str) and v.strip().upper() in ("N/A", "NA", ""))


def _value(v: Any, what: str) -> Any:
    if isinstance(v, dict) and "value" in v:
        v = v["value"]
    return Unknown(f"amd-smi reports {what} as N/A") if _na(v) else v


def _gen(speed_gts: Any, iface: Any) -> Any:
    if isinstance(iface, int) and not isinstance(iface, bool) and 1 <= iface <= 7:
        return iface  # the Python API gives the generation as a number
    if isinstance(iface, str):
        m = re.search(r"Gen\s*(\d)", iface)
        if m:
            return int(m.group(1))
    try:
        return GTS_TO_GEN[float(speed_gts)]
    except (TypeError, ValueError, KeyError):
        return Unknown("PCIe generation not reported")


def parse_amdsmi_static(text: str) -> Dict[str, Any]:
    return normalise_static(extract_json(text))


def normalise_static(data: Any) -> Dict[str, Any]:
    devices = data.get("gpu_data") if isinstance(data, dict) else data
    if not isinstance(devices, list):
        raise ValueError("amd-smi JSON holds no GPU list")
    gpus: List[Dict[str, Any]] = []
    driver = None
    for d in devices:
        if not isinstance(d, dict) or "gpu" not in d:
            continue
        asic = d.get("asic") if isinstance(d.get("asic"), dict) else {}
        bus = d.get("bus") if isinstance(d.get("bus"), dict) else {}
        vram = d.get("vram") if isinstance(d.get("vram"), dict) else {}
        drv = d.get("driver") if isinstance(d.get("driver"), dict) else {}
        board = d.get("board") if isinstance(d.get("board"), dict) else {}
        ras = d.get("ras") if isinstance(d.get("ras"), dict) else {}
        numa = d.get("numa") if isinstance(d.get("numa"), dict) else {}
        if not _na(drv.get("version")):
            driver = drv.get("version")
        size = _value(vram.get("size"), "VRAM size")
        unit = vram.get("size", {}).get("unit", "MB") if isinstance(vram.get("size"), dict) else "MB"
        ecc_state = (ras.get("ecc_block_state") or {}) if isinstance(ras.get("ecc_block_state"), dict) else {}
        umc = ecc_state.get("UMC", ecc_state.get("umc"))
        gpus.append({
            "index": int(d["gpu"]) if str(d["gpu"]).isdecimal() else len(gpus),
            "vendor": "amd",
            "name": _value(asic.get("market_name"), "market name"),
            "gfx_target": _value(asic.get("target_graphics_version"), "graphics target"),
            "compute_units": _value(asic.get("num_compute_units"), "compute units"),
            "serial": _value(board.get("product_serial"), "serial"),
            "pci_bus_id": _value(bus.get("bdf"), "PCI address"),
            "memory_total_mib": (int(size) if unit.upper() in ("MB", "MIB") else int(size) // (1024 * 1024))
            if isinstance(size, (int, float)) else size,
            "pcie_gen_max": _gen(_value(bus.get("max_pcie_speed"), "max PCIe speed"), bus.get("pcie_interface_version")),
            "pcie_width_max": _value(bus.get("max_pcie_width"), "max PCIe width"),
            "ecc_enabled": (umc == "ENABLED") if isinstance(umc, str) else Unknown("amd-smi reports no UMC ECC state"),
            "numa_node_reported": _value(numa.get("node"), "NUMA node"),
            "driver_version": drv.get("version") if not _na(drv.get("version")) else Unknown("driver version N/A"),
        })
        metric = d.get("pcie_metric") if isinstance(d.get("pcie_metric"), dict) else None
        if metric:  # only the API reports the link as it is now
            gpus[-1]["pcie_width"] = _value(metric.get("pcie_width"), "PCIe width")
            speed = _value(metric.get("pcie_speed"), "PCIe speed")
            gpus[-1]["pcie_gen"] = GTS_TO_GEN.get(speed / 1000.0 if isinstance(speed, (int, float)) and speed > 100 else speed,
                                                  Unknown("PCIe speed not understood")) if not isinstance(speed, Unknown) else speed
        ecc = d.get("ecc_count") if isinstance(d.get("ecc_count"), dict) else None
        if ecc and isinstance(ecc.get("uncorrectable_count"), int):
            gpus[-1]["ecc_uncorrectable_volatile"] = ecc["uncorrectable_count"]
    return {"gpus": gpus, "driver_version": driver}


def parse_amdsmi_version(text: str) -> Dict[str, Any]:
    data = extract_json(text)
    entry = data[0] if isinstance(data, list) and data else data
    if not isinstance(entry, dict):
        raise ValueError("amd-smi version JSON not understood")
    return {"rocm_version": entry.get("rocm_version"), "amdgpu_version": entry.get("amdgpu_version"),
            "tool_version": entry.get("version")}


_PCIE_LEVEL = re.compile(r"\(([\d.]+)GT/s x(\d+)\)")


def parse_rocm_smi_json(text: str) -> Dict[str, Any]:
    return normalise_rocm(extract_json(text))


def normalise_rocm(data: Any) -> Dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("rocm-smi JSON is not an object")
    gpus = []
    for key in sorted((k for k in data if re.match(r"^card\d+$", k)), key=lambda k: int(k[4:])):
        c = data[key]
        if not isinstance(c, dict):
            continue
        vram = c.get("VRAM Total Memory (B)")
        used = c.get("VRAM Total Used Memory (B)")
        m = _PCIE_LEVEL.search(str(c.get("pcie clock level", "")))
        node = c.get("(Topology) Numa Node")
        gpus.append({
            "index": int(key[4:]),
            "vendor": "amd",
            "name": c.get("Card series") or c.get("Device Name") or Unknown("rocm-smi gives no product name"),
            "pci_bus_id": (c.get("PCI Bus") or "").lower() or Unknown("no PCI bus"),
            "memory_total_mib": int(vram) // (1024 * 1024) if str(vram).isdecimal() else Unknown("VRAM size not reported"),
            "memory_used_mib": int(used) // (1024 * 1024) if str(used).isdecimal() else Unknown("VRAM use not reported"),
            "pcie_gen": GTS_TO_GEN.get(float(m.group(1)), Unknown("unknown PCIe speed")) if m else Unknown("PCIe level not reported"),
            "pcie_width": int(m.group(2)) if m else Unknown("PCIe level not reported"),
            "numa_node_reported": int(node) if str(node).lstrip("-").isdecimal() and int(node) >= 0 else Unknown("no NUMA node"),
            "serial": c.get("Serial Number") or Unknown("no serial"),
        })
    system = data.get("system") if isinstance(data.get("system"), dict) else {}
    return {"gpus": gpus, "driver_version": system.get("Driver version")}


# --- text forms, turned into the JSON shapes above -------------------------------------------------

_UNIT = re.compile(r"^(-?\d+(?:\.\d+)?)\s*([A-Za-z/%°]+.*)$")


def _text_value(raw: str) -> Any:
    raw = raw.strip()
    m = _UNIT.match(raw)
    if m:
        num = float(m.group(1))
        return {"value": int(num) if num.is_integer() else num, "unit": m.group(2).strip()}
    if raw.isdecimal():
        return int(raw)
    return raw


def parse_amdsmi_static_text(text: str) -> Dict[str, Any]:
    """``amd-smi static`` text: "GPU: n" blocks of indented "KEY: value" lines."""
    devices: List[Dict[str, Any]] = []
    stack: List[Any] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        if not raw.strip():
            continue
        m = re.match(r"^(GPU|CPU): (\d+)\s*$", raw)
        if m:
            if m.group(1) == "GPU":
                devices.append({"gpu": int(m.group(2))})
                stack = [(-1, devices[-1])]
            else:
                stack = []
            continue
        if not stack:
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        key, sep, value = raw.strip().partition(":")
        if not sep:
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if not stack:
            continue
        parent = stack[-1][1]
        if value.strip():
            parent[key.strip().lower()] = _text_value(value)
        else:
            node: Dict[str, Any] = {}
            parent[key.strip().lower()] = node
            stack.append((indent, node))
    if not devices:
        raise ValueError("no 'GPU: n' section: not amd-smi static output")
    return normalise_static(devices)


def parse_rocm_smi_text(text: str) -> Dict[str, Any]:
    """``rocm-smi -a`` ("GPU[n] : Key: value" lines) or the plain concise table."""
    cards: Dict[str, Dict[str, Any]] = {}
    system: Dict[str, Any] = {}
    for raw in text.replace("\r\n", "\n").split("\n"):
        m = re.match(r"^GPU\[(\d+)\]\s*:\s*([^:]+?):\s*(.*)$", raw)
        if m:
            cards.setdefault(f"card{m.group(1)}", {}).setdefault(m.group(2).strip(), m.group(3).strip())
            continue
        m = re.match(r"^Driver version:\s*(\S+)", raw)
        if m:
            system["Driver version"] = m.group(1)
    if not cards:
        lines = text.replace("\r\n", "\n").split("\n")
        for i, line in enumerate(lines):
            m = re.match(r"^(\d+)\s+\[0x[0-9a-fA-F]+\s*:\s*0x[0-9a-fA-F]+\]", line)
            if m and i + 1 < len(lines) and lines[i + 1].startswith(" ") and lines[i + 1].strip():
                cards[f"card{m.group(1)}"] = {"Card series": lines[i + 1].strip()}
    if not cards and re.search(r"^GPU\s+Temp", text, re.M):
        # ROCm 4/5's concise table: "0    35.0c  90.0W  800Mhz ...", devices unnamed.
        for line in text.replace("\r\n", "\n").split("\n"):
            m = re.match(r"^(\d+)\s+[\d.]+c\s", line)
            if m:
                cards[f"card{m.group(1)}"] = {}
    if not cards:
        raise ValueError("no GPU lines: not rocm-smi output")
    data: Dict[str, Any] = dict(cards)
    data["system"] = system
    return normalise_rocm(data)
