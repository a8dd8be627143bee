"""``nvidia-smi -q`` (and ``-a``) text: what users paste. Into the same GPU dicts as the XML.

The report is an indented tree of "Key : Value" lines and section headings; it is read into
nested dicts by indentation, then each fact is looked up by path, so a report cut short yields
the GPUs and fields that were pasted and Unknowns for the rest.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor.facts import Unknown
from hpcdoctor.parse import MAX_GPUS
from hpcdoctor.parse.nvsmi_xml import _int, _num, _yes

HEADER = re.compile(r"^=+\s*NVSMI LOG\s*=+\s*$", re.M)
GPU_LINE = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
NA = ("N/A", "[N/A]", "Unknown Error", "Not Supported", "[Not Supported]", "Requested functionality has been deprecated")


def looks_like_nvsmi_q(text: str) -> bool:
    return bool(HEADER.search(text))


def _tree(lines: List[str]) -> Dict[str, Any]:
    root: Dict[str, Any] = {}
    stack: List[Tuple[int, Dict[str, Any]]] = [(-1, root)]
    for raw in lines:
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        key, sep, value = raw.strip().partition(":")
        # Bus ids and times contain colons: the separator is the " : " column.
        m = re.match(r"^(.*?)\s+:\s?(.*)$", raw.strip())
        if m:
            key, value, sep = m.group(1), m.group(2), ":"
        key = key.strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else root
        if sep and value.strip():
            parent[key] = value.strip()
        else:
            node: Dict[str, Any] = {}
            if key in parent and isinstance(parent[key], dict):
                node = parent[key]
            parent[key] = node
            stack.append((indent, node))
    return root


def _get(tree: Dict[str, Any], path: str) -> Optional[str]:
    node: Any = tree
    for part in path.split("/"):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, str) else None


def _val(tree, paths, convert, what: str) -> Any:
    raw = None
    for p in paths if isinstance(paths, (list, tuple)) else [paths]:
        raw = _get(tree, p)
        if raw is not None:
            break
    if raw is None:
        return Unknown(f"the nvidia-smi -q text has no {what}")
    if raw in NA:
        return Unknown(f"nvidia-smi reports {what} as {raw}")
    try:
        return convert(raw)
    except (ValueError, TypeError):
        return Unknown(f"nvidia-smi {what} {raw!r} is not understood")


def parse(text: str) -> Dict[str, Any]:
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    top: List[str] = []
    blocks: List[Tuple[str, List[str]]] = []
    for line in lines:
        m = GPU_LINE.match(line.strip()) if not line.startswith(" ") else None
        if m:
            blocks.append((m.group(1), []))
        elif blocks:
            blocks[-1][1].append(line)
        else:
            top.append(line)
    if len(blocks) > MAX_GPUS:
        raise ValueError(f"nvidia-smi -q lists {len(blocks)} GPUs, more than any node holds ({MAX_GPUS})")
    head = _tree([l for l in top if not HEADER.match(l)])
    if not blocks and not head.get("Driver Version"):
        raise ValueError("no GPU section and no driver version: not nvidia-smi -q output")
    driver = head.get("Driver Version") or Unknown("no driver version in the pasted report")
    gpus = [_gpu(i, bus, _tree(body), driver) for i, (bus, body) in enumerate(blocks)]
    return {"driver_version": driver, "cuda_driver_version": head.get("CUDA Version") or Unknown("no CUDA version"),
            "gpus": gpus, "attached": _int(head["Attached GPUs"]) if str(head.get("Attached GPUs", "")).isdecimal() else None}


def _ecc(t, kind: str) -> Any:
    node = t.get("ECC Errors", {}).get(kind) if isinstance(t.get("ECC Errors"), dict) else None
    if not isinstance(node, dict):
        return Unknown(f"no {kind.lower()} ECC counters in the pasted report")
    total, seen = 0, False
    for key, value in node.items():
        if isinstance(value, str) and "Uncorrectable" in key and value.strip().isdecimal():
            total += int(value)
            seen = True
        elif isinstance(value, dict) and key.startswith("Double Bit"):
            v = value.get("Total")
            if isinstance(v, str) and v.isdecimal():
                total += int(v)
                seen = True
    return total if seen else Unknown(f"{kind.lower()} uncorrectable ECC errors are N/A")


def _remapped(t) -> Any:
    node = t.get("Remapped Rows")
    if not isinstance(node, dict):
        return Unknown("nvidia-smi reports remapped rows as N/A")
    return {
        "correctable": _val(node, "Correctable Error", _int, "remapped rows (correctable)"),
        "uncorrectable": _val(node, "Uncorrectable Error", _int, "remapped rows (uncorrectable)"),
        "pending": _val(node, "Pending", _yes, "remap pending"),
        "failed": _val(node, "Remapping Failure Occurred", _yes, "remap failure"),
    }


def _retired(t) -> Tuple[Any, Any]:
    node = t.get("Retired Pages")
    if not isinstance(node, dict):
        return Unknown("no retired pages section"), Unknown("no retired pages section")
    counts = []
    for key in ("Single Bit ECC", "Double Bit ECC"):
        v = node.get(key)
        if isinstance(v, dict):
            v = v.get("Retired Count") or v.get("Count")
        counts.append(v)
    count = sum(int(c) for c in counts) if all(isinstance(c, str) and c.isdecimal() for c in counts) else \
        Unknown("retired pages are N/A (row remapping replaces them on Ampere and later)")
    pending = _val(node, ["Pending Page Blacklist", "Pending Retirement"], _yes, "retired pages pending")
    return count, pending


def _events(t) -> Any:
    node = t.get("Clocks Event Reasons") or t.get("Clocks Throttle Reasons")
    if not isinstance(node, dict):
        return Unknown("no clock event reasons in the pasted report")
    names = {"Idle": "gpu_idle", "Applications Clocks Setting": "applications_clocks_setting",
             "SW Power Cap": "sw_power_cap", "HW Slowdown": "hw_slowdown", "HW Thermal Slowdown": "hw_thermal_slowdown",
             "HW Power Brake Slowdown": "hw_power_brake_slowdown", "Sync Boost": "sync_boost",
             "SW Thermal Slowdown": "sw_thermal_slowdown", "Display Clock Setting": "display_clocks_setting"}
    active = []

    def walk(d):
        for k, v in d.items():
            if isinstance(v, dict):
                walk(v)
            elif v.strip() == "Active" and k in names:
                active.append(names[k])

    walk(node)
    return active


def _gpu(index: int, bus: str, t: Dict[str, Any], driver: Any) -> Dict[str, Any]:
    link = "PCI/GPU Link Info"
    procs = t.get("Processes")
    processes: List[Dict[str, Any]] = []
    if isinstance(procs, dict):
        for key, p in procs.items():
            if isinstance(p, dict) and "Process ID" in p:
                used = p.get("Used GPU Memory", "")
                processes.append({"pid": int(p["Process ID"]) if p["Process ID"].isdecimal() else None,
                                  "name": p.get("Name"), "type": p.get("Type"),
                                  "used_mib": int(_num(used)) if used[:1].isdecimal() else None})
    mig = t.get("MIG Mode") if isinstance(t.get("MIG Mode"), dict) else {}
    count, pending = _retired(t)
    return {
        "index": index,
        "name": _val(t, "Product Name", str, "product name"),
        "architecture": _val(t, "Product Architecture", str, "architecture"),
        "uuid": _val(t, "GPU UUID", str, "UUID"),
        "serial": _val(t, "Serial Number", str, "serial"),
        "pci_bus_id": bus,
        "memory_total_mib": _val(t, "FB Memory Usage/Total", _int, "memory total"),
        "memory_used_mib": _val(t, "FB Memory Usage/Used", _int, "memory used"),
        "compute_capability": Unknown("nvidia-smi -q text gives no compute capability"),
        "persistence_mode": _val(t, "Persistence Mode", _yes, "persistence mode"),
        "compute_mode": _val(t, "Compute Mode", str, "compute mode"),
        "ecc_enabled": _val(t, "ECC Mode/Current", _yes, "ECC mode"),
        "ecc_pending": _val(t, "ECC Mode/Pending", _yes, "pending ECC mode"),
        "ecc_uncorrectable_volatile": _ecc(t, "Volatile"),
        "ecc_uncorrectable_aggregate": _ecc(t, "Aggregate"),
        "retired_pages": count,
        "retired_pages_pending": pending,
        "remapped_rows": _remapped(t),
        "clocks": {
            "sm_mhz": _val(t, "Clocks/SM", _int, "SM clock"),
            "sm_max_mhz": _val(t, "Max Clocks/SM", _int, "max SM clock"),
            "mem_mhz": _val(t, "Clocks/Memory", _int, "memory clock"),
            "mem_max_mhz": _val(t, "Max Clocks/Memory", _int, "max memory clock"),
        },
        "clock_event_reasons": _events(t),
        "power_draw_w": _val(t, ["GPU Power Readings/Power Draw", "GPU Power Readings/Instantaneous Power Draw",
                                 "Power Readings/Power Draw"], _num, "power draw"),
        "power_limit_w": _val(t, ["GPU Power Readings/Current Power Limit", "Power Readings/Enforced Power Limit",
                                  "Power Readings/Power Limit"], _num, "power limit"),
        "power_default_limit_w": _val(t, ["GPU Power Readings/Default Power Limit", "Power Readings/Default Power Limit"],
                                      _num, "default power limit"),
        "temperature_c": _val(t, "Temperature/GPU Current Temp", _int, "temperature"),
        "pcie_gen": _val(t, f"{link}/PCIe Generation/Current", _int, "PCIe generation"),
        "pcie_gen_max": _val(t, f"{link}/PCIe Generation/Max", _int, "max PCIe generation"),
        "pcie_width": _val(t, f"{link}/Link Width/Current", _int, "PCIe width"),
        "pcie_width_max": _val(t, f"{link}/Link Width/Max", _int, "max PCIe width"),
        "mig_enabled": (mig.get("Current") == "Enabled") if isinstance(mig.get("Current"), str) else False,
        "mig_pending": (mig.get("Pending") == "Enabled") if isinstance(mig.get("Pending"), str) else False,
        "processes": processes,
        "driver_version": driver,
    }
