"""``lshw`` (``sudo lshw -C display``, ``lshw -c video``, or the whole tree) as users paste it: the
display nodes, their PCI address and the kernel driver bound to each.

The grammar is lshw's own (src/core/print.cc print(), src/core/pci.cc scan_sysfs, lshw commit
ad4f7aaa, B.02.20-12): a node line ``*-ID`` indented by its depth, with `` DISABLED`` and
`` UNCLAIMED`` after it; then ``key: value`` lines (description, product, vendor, physical id, bus
info, version, width, clock, capabilities, configuration, resources), two columns deeper. A PCI
device is claimed, and gets ``configuration: driver=NAME``, exactly when sysfs shows a driver bound to
it (pci.cc: ``if exists(<dev>/driver)`` sets "driver" then ``device->claim()``): ``UNCLAIMED``, or a
complete node without ``driver=``, means no driver is bound. Display nodes have the id ``display``
(``display:0``, ``display:1`` when there are several).
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.lspci import CLASS_NAMES, VENDOR_IDS, VENDORS

MAX_LINE = 2000
MAX_NODES = 65536

NODE = re.compile(r"^(?P<indent>[ \t]{0,64})\*-(?P<id>[A-Za-z0-9_.:-]{1,64})(?P<flags>(?: (?:DISABLED|UNCLAIMED)){0,2})[ \t]*$")
FIELD = re.compile(r"^[ \t]{1,80}(?P<key>description|product|vendor|physical id|bus info|version|configuration|capabilities|logical name):"
                   r"[ \t]?(?P<value>[^\n]{0,1500})$")
_BUS = re.compile(r"^pci@(?P<addr>(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])$")
_ID_IN_PRODUCT = re.compile(r"\[(?P<v>[0-9a-fA-F]{4}):(?P<d>[0-9a-fA-F]{4})\]$")


def is_node_line(line: str) -> bool:
    return bool(NODE.match(line[:MAX_LINE]))


def parse(text: str) -> Dict[str, Any]:
    """{"devices": [...]}: each display node with address, class, vendor, name, driver, bound.
    Raises ValueError when no lshw node line is found."""
    nodes: List[Dict[str, Any]] = []
    current: Optional[Dict[str, Any]] = None
    for raw in text.replace("\r\n", "\n").split("\n"):
        line = raw[:MAX_LINE]
        m = NODE.match(line)
        if m:
            if len(nodes) >= MAX_NODES:
                raise ValueError(f"more than {MAX_NODES} lshw nodes")
            if current is not None:
                current["complete"] = True
            current = {"id": m.group("id"), "flags": m.group("flags").split(), "fields": {}, "complete": False}
            nodes.append(current)
            continue
        if current is None or current["complete"]:
            continue
        f = FIELD.match(line)
        if f:
            current["fields"].setdefault(f.group("key"), f.group("value").strip())
            current["last"] = f.group("key")
        elif line.strip() and not line[:1].isspace():
            current["complete"] = True  # prose or a fence after the output: what was printed is whole
        elif not line.strip():
            continue
    if not nodes:
        raise ValueError("no lshw node line ('*-display')")
    by_address: Dict[Any, Dict[str, Any]] = {}
    for n, node in enumerate(nodes):
        if node["id"].split(":")[0] == "display":
            d = _device(node)
            key = d["address"] if isinstance(d["address"], str) else n  # the same display in two outputs pasted together
            seen = by_address.get(key)
            if seen is None or not isinstance(d["bound"], Unknown):
                by_address[key] = d
    return {"devices": list(by_address.values()), "all_nodes": len(nodes)}


def _config(value: str) -> Dict[str, str]:
    return dict(kv.split("=", 1) for kv in value.split() if "=" in kv)


def _device(node: Dict[str, Any]) -> Dict[str, Any]:
    fields = node["fields"]
    bus = _BUS.match(fields.get("bus info", ""))
    addr = bus.group("addr").lower() if bus else None
    if addr and addr.count(":") == 1:
        addr = "0000:" + addr
    vendor_name = fields.get("vendor")
    vendor_id = next((vid for name, vid, _ in VENDORS if vendor_name == name), None)
    product = fields.get("product")
    device_id = None
    ids = _ID_IN_PRODUCT.search(product or "")
    if ids:
        vendor_id, device_id = vendor_id or ids.group("v").lower(), ids.group("d").lower()
        product = product[:ids.start()].strip()
    description = fields.get("description")
    dev: Dict[str, Any] = {"address": addr or Unknown("lshw shows no PCI bus info for this display"),
                           "class": description, "class_id": CLASS_NAMES.get(description or "", "03"),
                           "vendor_name": vendor_name, "vendor_id": vendor_id, "device_id": device_id, "name": product,
                           "vendor": VENDOR_IDS.get(vendor_id or "", vendor_name), "subsystem": None, "rev": fields.get("version")}
    config = _config(fields.get("configuration", ""))
    dev["modules"] = [config["module"]] if "module" in config else None
    if "driver" in config:
        dev["driver"], dev["bound"] = config["driver"], True
    elif "UNCLAIMED" in node["flags"] or (node["complete"] and "configuration" in fields):
        dev["driver"], dev["bound"] = None, False
    else:
        dev["driver"] = None
        dev["bound"] = Unknown("the lshw output pasted stops before this display's configuration line")
    if dev["vendor"] is None and dev["driver"] in ("nvidia", "nouveau", "nova_core"):
        # lshw leaves out product and vendor where its pci.ids lacks the device (new GPUs): the
        # NVIDIA-only drivers bound to it say whose it is.
        dev["vendor"] = "nvidia"
    return dev
