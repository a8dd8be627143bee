"""RDMA and fabric tools: ``ibstat``, ``ibstatus``, ``ibv_devinfo`` (the same facts sysfs holds),
``fi_info -p cxi``."""

from __future__ import annotations

import re
from typing import Any, Dict, List


def port_state(text: str) -> str:
    """ "4: ACTIVE" / "Active" / "LinkUp" -> "ACTIVE", "LINKUP"."""
    word = text.split(":", 1)[-1].strip() if ":" in text else text.strip()
    return word.upper()


def rate_gbps(text: str) -> Any:
    m = re.match(r"\s*(\d+(?:\.\d+)?)", text)
    return float(m.group(1)) if m else None


# Port attribute names in each tool's spelling -> the fact they fill.
_FIELDS = {"state": "state", "physical state": "phys_state", "phys state": "phys_state", "rate": "rate_gbps",
           "link layer": "link_layer", "link_layer": "link_layer"}


def _port_line(cur: Dict[str, Any], line: str) -> None:
    key, sep, value = line.partition(":")
    field = _FIELDS.get(key.strip().lower()) if sep else None
    if field in ("state", "phys_state"):
        cur[field] = port_state(value)
    elif field == "rate_gbps":
        cur[field] = rate_gbps(value)
    elif field == "link_layer":
        cur[field] = value.strip()


def _device_ports(text: str, device: str, port: str, on_line, **blank: Any) -> List[Dict[str, Any]]:
    """Ports of tools that print a device line, then per port a header and "key: value" lines."""
    ports: List[Dict[str, Any]] = []
    name = None
    cur: Dict[str, Any] = {}
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(device, line)
        if m:
            name, cur = m.group(1), {}
            continue
        m = re.match(port, line)
        if m and name:
            cur = {"device": name, "port": int(m.group(1)), **blank}
            ports.append(cur)
        elif cur:
            on_line(cur, line)
    return ports


def parse_ibstat(text: str) -> List[Dict[str, Any]]:
    """One entry per port: device, port, state, physical state, rate (Gb/s), link layer."""
    return _device_ports(text, r"^CA '([^']+)'", r"^Port (\d+):$", _port_line)


def parse_ibstatus(text: str) -> List[Dict[str, Any]]:
    ports: List[Dict[str, Any]] = []
    cur: Dict[str, Any] = {}
    for raw in text.splitlines():
        line = raw.strip()
        m = re.match(r"^Infiniband device '([^']+)' port (\d+) status:", line)
        if m:
            cur = {"device": m.group(1), "port": int(m.group(2))}
            ports.append(cur)
        elif cur:
            _port_line(cur, line)
    return ports


def _devinfo_line(cur: Dict[str, Any], line: str) -> None:
    key, sep, value = line.partition(":")
    if sep and key == "state":  # "PORT_ACTIVE (4)"
        cur["state"] = value.split("(")[0].strip().upper().replace("PORT_", "")
    elif sep and key == "link_layer":
        cur["link_layer"] = value.strip()


def parse_ibv_devinfo(text: str) -> List[Dict[str, Any]]:
    """``ibv_devinfo`` (without -v): per port its state and link layer. It gives no physical
    state and no rate: those stay None rather than guessed."""
    return _device_ports(text, r"^hca_id:\s*(\S+)", r"^port:\s*(\d+)$", _devinfo_line, phys_state=None, rate_gbps=None)


def parse_fi_info(text: str) -> List[Dict[str, str]]:
    """Provider blocks of ``fi_info``: [{provider, fabric, domain, ...}]."""
    blocks: List[Dict[str, str]] = []
    for raw in text.splitlines():
        key, sep, value = raw.strip().partition(":")
        if not sep:
            continue
        key = key.strip()
        if key == "provider":
            blocks.append({"provider": value.strip()})
        elif blocks:
            blocks[-1][key] = value.strip()
    return blocks
