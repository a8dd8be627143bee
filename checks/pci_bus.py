"""The GPUs and accelerators on the PCI bus and the kernel driver bound to each, whatever the
vendor tools say: "is my GPU there, and is the NVIDIA driver the one holding it?"

Live (and in snapshots) from sysfs: each device's class and vendor files, and its uevent, where the
driver core writes ``DRIVER=<name>`` only while a driver is bound (Linux drivers/base/core.c
dev_uevent; pci_uevent in drivers/pci/pci-driver.c adds PCI_ID and PCI_SLOT_NAME). No lspci is run.
In a pasted ticket, from the ``lspci`` or ``lshw`` output pasted, in the same shape.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

from hpcdoctor.checks._gpu import PCI
from hpcdoctor.facts import Unknown
from hpcdoctor.parse import lshw, lspci
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "pci_bus"
TIMEOUT = 3.0
PROVIDES = ("pci",)

# Display controllers (class 03xx) and processing accelerators (12xx), as sysfs's class file
# writes them ("0x030200").
_CLASS = re.compile(r"^0x(?P<cls>(?:03|12)[0-9a-f]{2})[0-9a-f]{2}$")
# The lshw argv a pasted lshw output stands for: -C display and -c video list the same nodes.
LSHW_ARGV = ["lshw", "-C", "display"]


def _from_sysfs(root: SysRoot) -> List[Dict[str, Any]]:
    names = root.listdir(PCI)
    found = []
    for addr in sorted(names)[:lspci.MAX_DEVICES]:
        m = _CLASS.match((root.read_or(f"{PCI}/{addr}/class") or "").strip().lower())
        if not m:
            continue
        vendor_id = (root.read_or(f"{PCI}/{addr}/vendor") or "").strip().lower().removeprefix("0x") or None
        device_id = (root.read_or(f"{PCI}/{addr}/device") or "").strip().lower().removeprefix("0x") or None
        dev: Dict[str, Any] = {"address": addr.lower(), "class_id": m.group("cls"), "vendor_id": vendor_id,
                               "device_id": device_id, "vendor": lspci.VENDOR_IDS.get(vendor_id or "", f"vendor {vendor_id}"),
                               "name": None, "modules": None}
        uevent = root.read_or(f"{PCI}/{addr}/uevent")
        if uevent is None:
            dev["driver"] = None
            dev["bound"] = Unknown(f"{PCI}/{addr}/uevent unreadable or not recorded")
        else:
            driver = re.search(r"^DRIVER=(\S{1,64})$", uevent, re.M)
            dev["driver"] = driver.group(1) if driver else None
            dev["bound"] = bool(driver)
        found.append(dev)
    return found


def _from_text(root: SysRoot, argv: List[str], parse) -> List[Dict[str, Any]]:
    res = root.run(argv, timeout=5.0, live=False)
    if not res.ok:
        raise Missing(res.why_failed())
    try:
        return parse(res.stdout)["devices"]
    except ValueError as exc:
        raise Missing(f"{' '.join(argv)}: {exc}") from None


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    errors = []
    for source, get in (("sysfs", _from_sysfs), ("lspci", lambda r: _from_text(r, ["lspci"], lspci.parse)),
                        (" ".join(LSHW_ARGV), lambda r: _from_text(r, LSHW_ARGV, lshw.parse))):
        try:
            devices = get(root)
        except Missing as exc:
            errors.append(str(exc))
            continue
        return {"pci": {"source": source, "gpus": devices}}
    return {"pci": {"source": None, "gpus": Unknown("; ".join(errors))}}
