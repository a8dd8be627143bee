"""``nvidia-smi -q -x``: the driver's XML report (DTD v10 to v13 seen), into GPU facts shaped
like the NVML probe's, so rules cannot tell which source they came from."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException
from typing import Any, Dict, List, Optional

from hpcdoctor.facts import Unknown

MAX_XML_BYTES = 32 * 1024 * 1024


class NvsmiXmlError(ValueError):
    pass


def _text(node: Optional[ET.Element], path: str) -> Optional[str]:
    if node is None:
        return None
    el = node.find(path)
    if el is None or el.text is None:
        return None
    t = el.text.strip()
    return t or None


def _val(node, path, convert, what: str) -> Any:
    """The converted value, or an Unknown saying why: absent in this schema, N/A, unparsable."""
    raw = _text(node, path)
    if raw is None:
        return Unknown(f"nvidia-smi XML has no {what}")
    if raw in ("N/A", "[N/A]", "Not Supported", "[Not Supported]", "Unknown Error"):
        return Unknown(f"nvidia-smi reports {what} as {raw}")
    try:
        return convert(raw)
    except (ValueError, TypeError):
        return Unknown(f"nvidia-smi {what} {raw!r} is not understood")


def _num(raw: str) -> float:
    m = re.match(r"^\s*(-?[0-9]+(?:\.[0-9]+)?)", raw)
    if not m:
        raise ValueError(raw)
    return float(m.group(1))


def _int(raw: str) -> int:
    return int(_num(raw))


def _yes(raw: str) -> bool:
    low = raw.strip().lower()
    if low in ("yes", "enabled", "active", "true"):
        return True
    if low in ("no", "disabled", "not active", "false", "none"):
        return False
    raise ValueError(raw)


def _first(g, paths: List[str], convert, what: str) -> Any:
    result: Any = None
    for p in paths:
        result = _val(g, p, convert, what)
        if not isinstance(result, Unknown):
            return result
    return result


def parse(text: str) -> Dict[str, Any]:
    """Parse the whole report: {"driver_version", "cuda_driver_version", "gpus": [...]}."""
    if len(text) > MAX_XML_BYTES:
        raise NvsmiXmlError("nvidia-smi XML is larger than any real report")
    from hpcdoctor.parse import MAX_GPUS

    # Counted before the tree is built: an element costs hundreds of bytes in it.
    if len(re.findall(r"<gpu[\s/>]", text)) > MAX_GPUS:
        raise NvsmiXmlError(f"nvidia-smi XML lists more than {MAX_GPUS} GPUs, more than any node holds")
    # nvidia-smi's DOCTYPE names an external DTD and declares no entities; a document that does
    # is not from nvidia-smi and could be an entity-expansion bomb. The parser itself refuses
    # entity declarations and external references, whatever encoding expat detects (a regular
    # expression over the decoded text missed UTF-16 without a byte-order mark).
    try:
        root = SafeET.fromstring(text.strip().encode("utf-8", "replace"), forbid_dtd=False,
                                 forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise NvsmiXmlError(f"nvidia-smi XML with entity declarations refused ({exc.__class__.__name__})") from None
    except ET.ParseError as exc:
        raise NvsmiXmlError(f"nvidia-smi XML does not parse: {exc}") from None
    except (LookupError, UnicodeError) as exc:  # an XML declaration naming an encoding Python lacks
        raise NvsmiXmlError(f"nvidia-smi XML cannot be decoded: {exc}") from None
    if root.tag != "nvidia_smi_log":
        raise NvsmiXmlError(f"not an nvidia-smi report (root element <{root.tag}>)")
    from hpcdoctor.parse import MAX_GPUS

    count = sum(1 for _ in root.iterfind("gpu"))
    if count > MAX_GPUS:
        raise NvsmiXmlError(f"nvidia-smi XML lists {count} GPUs, more than any node holds ({MAX_GPUS})")
    driver = _val(root, "driver_version", str, "driver version")
    cuda = _val(root, "cuda_version", str, "CUDA version")
    gpus = [_gpu(i, g, driver) for i, g in enumerate(root.findall("gpu"))]
    return {"driver_version": driver, "cuda_driver_version": cuda, "gpus": gpus}


def _gpu(index: int, g: ET.Element, driver: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {
        "index": index,
        "name": _val(g, "product_name", str, "product name"),
        "architecture": _val(g, "product_architecture", str, "architecture"),
        "uuid": _val(g, "uuid", str, "UUID"),
        "serial": _val(g, "serial", str, "serial"),
        "pci_bus_id": g.get("id") or _val(g, "pci/pci_bus_id", str, "PCI bus id"),
        "memory_total_mib": _val(g, "fb_memory_usage/total", _int, "memory total"),
        "memory_used_mib": _val(g, "fb_memory_usage/used", _int, "memory used"),
        "compute_capability": _val(g, "compute_cap", lambda s: s if re.match(r"^\d+\.\d+$", s) else _bad(s),
                                   "compute capability"),
        "persistence_mode": _val(g, "persistence_mode", _yes, "persistence mode"),
        "compute_mode": _val(g, "compute_mode", str, "compute mode"),
        "ecc_enabled": _val(g, "ecc_mode/current_ecc", _yes, "ECC mode"),
        "ecc_pending": _val(g, "ecc_mode/pending_ecc", _yes, "pending ECC mode"),
        "ecc_uncorrectable_volatile": _ecc_sum(g, "volatile"),
        "ecc_uncorrectable_aggregate": _ecc_sum(g, "aggregate"),
        "retired_pages_pending": _val(g, "retired_pages/pending_retirement", _yes, "retired pages pending"),
        "retired_pages": _retired_count(g),
        "remapped_rows": _remapped(g),
        "clocks": {
            "sm_mhz": _val(g, "clocks/sm_clock", _int, "SM clock"),
            "sm_max_mhz": _val(g, "max_clocks/sm_clock", _int, "max SM clock"),
            "mem_mhz": _val(g, "clocks/mem_clock", _int, "memory clock"),
            "mem_max_mhz": _val(g, "max_clocks/mem_clock", _int, "max memory clock"),
        },
        "clock_event_reasons": _clock_events(g),
        "power_draw_w": _first(g, ["gpu_power_readings/power_draw", "gpu_power_readings/instant_power_draw",
                                   "gpu_power_readings/average_power_draw", "power_readings/power_draw"],
                               _num, "power draw"),
        "power_limit_w": _first(g, ["gpu_power_readings/current_power_limit", "power_readings/enforced_power_limit",
                                    "power_readings/power_limit"], _num, "power limit"),
        "power_default_limit_w": _first(g, ["gpu_power_readings/default_power_limit",
                                            "power_readings/default_power_limit"], _num, "default power limit"),
        "temperature_c": _val(g, "temperature/gpu_temp", _int, "temperature"),
        "pcie_gen": _val(g, "pci/pci_gpu_link_info/pcie_gen/current_link_gen", _int, "PCIe generation"),
        "pcie_gen_max": _val(g, "pci/pci_gpu_link_info/pcie_gen/max_link_gen", _int, "max PCIe generation"),
        "pcie_width": _val(g, "pci/pci_gpu_link_info/link_widths/current_link_width", _int, "PCIe width"),
        "pcie_width_max": _val(g, "pci/pci_gpu_link_info/link_widths/max_link_width", _int, "max PCIe width"),
        "mig_enabled": _mig(g, "current_mig"),
        "mig_pending": _mig(g, "pending_mig"),
        "mig_devices": len(g.findall("mig_devices/mig_device")),
        "processes": _processes(g),
        "driver_version": driver,
    }
    return out


def _bad(s: str) -> str:
    raise ValueError(s)


def _mig(g, field: str) -> Any:
    value = _text(g, f"mig_mode/{field}")
    if value in (None, "N/A"):
        return False  # GPUs without MIG support report N/A: MIG is then certainly off
    return value.lower() == "enabled"


def _ecc_sum(g, kind: str) -> Any:
    node = g.find(f"ecc_errors/{kind}")
    if node is None:
        return Unknown(f"nvidia-smi XML has no {kind} ECC counters")
    total, seen = 0, False
    for child in node:
        if "uncorrectable" in child.tag and child.text and child.text.strip().isdecimal():
            total += int(child.text.strip())
            seen = True
        # older schemas nest per-location counters under single_bit/double_bit
        if child.tag == "double_bit":
            t = _text(child, "total")
            if t and t.isdecimal():
                total += int(t)
                seen = True
    return total if seen else Unknown(f"nvidia-smi reports {kind} uncorrectable ECC errors as N/A")


def _retired_count(g) -> Any:
    counts = [_text(g, f"retired_pages/{k}/retired_count") for k in
              ("multiple_single_bit_retirement", "double_bit_retirement")]
    if all(c is not None and c.isdecimal() for c in counts):
        return sum(int(c) for c in counts)  # type: ignore[arg-type]
    return Unknown("nvidia-smi reports retired pages as N/A (row remapping replaces them on Ampere and later)")


def _remapped(g) -> Any:
    node = g.find("remapped_rows")
    if node is None or len(node) == 0:
        return Unknown("nvidia-smi reports remapped rows as N/A")
    return {
        "correctable": _val(node, "remapped_row_corr", _int, "remapped rows (correctable)"),
        "uncorrectable": _val(node, "remapped_row_unc", _int, "remapped rows (uncorrectable)"),
        "pending": _val(node, "remapped_row_pending", _yes, "remap pending"),
        "failed": _val(node, "remapped_row_failure", _yes, "remap failure"),
    }


def _clock_events(g) -> Any:
    for tag, prefix in (("clocks_event_reasons", "clocks_event_reason_"),
                        ("clocks_throttle_reasons", "clocks_throttle_reason_")):
        node = g.find(tag)
        if node is None:
            continue
        active = []
        for child in node:
            if child.tag.startswith(prefix) and (child.text or "").strip() == "Active":
                active.append(child.tag[len(prefix):])
        return active
    return Unknown("nvidia-smi XML has no clock event reasons")


def _processes(g) -> List[Dict[str, Any]]:
    out = []
    for p in g.findall("processes/process_info"):
        pid = _text(p, "pid")
        used = _text(p, "used_memory")
        out.append({
            "pid": int(pid) if pid and pid.isdecimal() else None,
            "name": _text(p, "process_name"),
            "type": _text(p, "type"),
            "used_mib": int(_num(used)) if used and used[0].isdecimal() else None,
        })
    return out
