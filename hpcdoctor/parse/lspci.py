"""``lspci`` as users paste it (plain, ``-nn``, ``-k``/``-nnk``, ``-v``/``-vv``/``-vvv``, often through
``grep``): the display and accelerator devices on the PCI bus and the kernel driver bound to each.

The grammar is pciutils' own (lspci.c show_terse/show_verbose, ls-kernel.c show_kernel, ls-caps.c
cap_express_link, lib/names.c format_name_pair; pciutils commit 0f5b941a, v3.14.0-22):
- a device line: ``[DOMAIN:]BB:DD.F CLASS[ [cccc]]: VENDOR DEVICE[ [vvvv:dddd]][ (rev xx)][ (prog-if xx [name])]``;
  a name pci.ids lacks prints as ``Device dddd`` (``Device vvvv:dddd`` when the vendor is unknown too);
- under it, with -k or -v: ``\\tSubsystem: ...``, ``\\tKernel driver in use: DRIVER`` (only when a driver
  is bound: sysfs's driver link), then ``\\tKernel modules: a, b`` (modules whose alias matches);
  ``\\tDriver in use:`` where pciutils was built without libkmod;
- with -vv as root: ``\\t\\tLnkCap:\\tPort #N, Speed 16GT/s, Width x16, ...`` and
  ``\\t\\tLnkSta:\\tSpeed 2.5GT/s (downgraded), Width x16, ...``;
- with -v, a blank line after each device.

Whether a driver is bound is only said where the paste shows it: a device whose block shows its
kernel section (the modules line, printed after the driver line) or ends complete (the blank line
of -v, or the next device where other devices of the same output show theirs) without a driver
line has none bound; plain ``lspci``, or a block cut by grep or by the paste, leaves it unknown.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from hpcdoctor.facts import Unknown

# PCI class codes of GPUs and accelerators (pci.ids "C 03 Display controller": 00 VGA compatible
# controller, 02 3D controller, 80 Display controller; "C 12 Processing accelerators"), by the names
# lspci prints for them.
CLASS_NAMES = {
    "VGA compatible controller": "0300", "XGA compatible controller": "0301", "3D controller": "0302",
    "Display controller": "0380", "Processing accelerators": "1200",
}
# pci.ids vendor lines: "10de  NVIDIA Corporation", "1002  Advanced Micro Devices, Inc. [AMD/ATI]",
# "8086  Intel Corporation"; older pci.ids spelled NVIDIA "nVidia Corporation" and AMD's graphics
# "ATI Technologies Inc".
VENDORS = (("NVIDIA Corporation", "10de", "nvidia"), ("nVidia Corporation", "10de", "nvidia"),
           ("Advanced Micro Devices, Inc. [AMD/ATI]", "1002", "amd"), ("ATI Technologies Inc", "1002", "amd"),
           ("Intel Corporation", "8086", "intel"))
VENDOR_IDS = {"10de": "nvidia", "1002": "amd", "8086": "intel"}

MAX_LINE = 600
MAX_DEVICES = 4096

DEVICE = re.compile(r"^[ \t]{0,4}(?:(?P<domain>[0-9a-fA-F]{4,8}):)?(?P<bus>[0-9a-fA-F]{2}):(?P<dev>[0-9a-fA-F]{2})\.(?P<fn>[0-7])"
                    r" (?P<cls>[^:\n\[]{1,80}?)(?: \[(?P<clsid>[0-9a-fA-F]{4})\])?: (?P<rest>[^\n]{1,500})$")
_TAIL = re.compile(r"\s*\((?:rev [0-9a-fA-F]{2}|prog-if [0-9a-fA-F]{2}(?: \[[^\]\n]{0,80}\])?)\)\s*$")
_REV = re.compile(r"\(rev (?P<rev>[0-9a-fA-F]{2})\)")
_IDS = re.compile(r"\s*\[(?P<v>[0-9a-fA-F]{4}):(?P<d>[0-9a-fA-F]{4})\]$")
_NUMERIC = re.compile(r"^Device (?:(?P<v>[0-9a-fA-F]{4}):)?(?P<d>[0-9a-fA-F]{4})$")
_KEY = re.compile(r"^[ \t]*(?P<key>Subsystem|Kernel driver in use|Driver in use|Kernel modules|LnkCap|LnkSta):[ \t]*(?P<value>[^\n]{0,400})$")
_VERBOSE = re.compile(r"^[ \t]+(Flags|Control|Status|Latency|Interrupt|Region \d|Memory at|I/O ports at|Capabilities|Physical Slot|NUMA node|Expansion ROM)\b")
_SPEED = re.compile(r"Speed (?P<speed>[0-9.]{1,5})GT/s(?P<down> \(downgraded\))?")
_WIDTH = re.compile(r"Width x(?P<width>[0-9]{1,2})(?P<down> \(downgraded\))?")


def is_device_line(line: str) -> bool:
    return bool(DEVICE.match(line[:MAX_LINE]))


def _name(rest: str) -> Dict[str, Any]:
    """Vendor and device of a device line's text after the class."""
    out: Dict[str, Any] = {"rev": None}
    rev = _REV.search(rest)
    if rev:
        out["rev"] = rev.group("rev").lower()
    # "(rev a1)" and "(prog-if ...)" at the end, in either order; older lspci printed "](rev a1)".
    for _ in range(3):
        rest = _TAIL.sub("", rest)
    ids = _IDS.search(rest)
    vendor_id = device_id = None
    if ids:
        vendor_id, device_id = ids.group("v").lower(), ids.group("d").lower()
        rest = rest[:ids.start()]
    rest = rest.strip()
    vendor_name = None
    for name, vid, _key in VENDORS:
        if rest == name or rest.startswith(name + " "):
            vendor_name = name
            vendor_id = vendor_id or vid
            rest = rest[len(name):].strip()
            break
    numeric = _NUMERIC.match(rest)
    if numeric:
        vendor_id = vendor_id or (numeric.group("v") or "").lower() or None
        device_id = device_id or numeric.group("d").lower()
        rest = ""
    elif rest.startswith("Device [") or rest == "Device":
        rest = ""
    out.update(vendor_name=vendor_name, vendor_id=vendor_id, device_id=device_id, name=rest or None)
    out["vendor"] = VENDOR_IDS.get(vendor_id or "", vendor_name or (f"vendor {vendor_id}" if vendor_id else None))
    return out


def _link(value: str) -> Dict[str, Any]:
    speed, width = _SPEED.search(value), _WIDTH.search(value)
    return {"speed_gts": float(speed.group("speed")) if speed else None,
            "width": int(width.group("width")) if width else None,
            "downgraded": bool((speed and speed.group("down")) or (width and width.group("down")))}


def parse(text: str) -> Dict[str, Any]:
    """{"devices": [...], "all_devices": n}: each display-class (03xx) or accelerator (12xx)
    device with address, class, vendor, ids, name, subsystem, driver, bound, modules, link. Raises
    ValueError when no device line is found."""
    # Blank lines at the very end are not -v's block end: a paste that stops there may be cut.
    lines = text.replace("\r\n", "\n").rstrip().split("\n")
    blocks: List[Dict[str, Any]] = []
    current: Optional[Dict[str, Any]] = None
    for raw in lines:
        line = raw[:MAX_LINE]
        m = DEVICE.match(line)
        if m:
            if len(blocks) >= MAX_DEVICES:
                raise ValueError(f"more than {MAX_DEVICES} PCI devices: not one machine's lspci")
            if current is not None:
                current["end"] = "next device"
            current = {"m": m, "keys": {}, "verbose": False, "end": "cut"}
            blocks.append(current)
            continue
        if current is None or current["end"] != "cut":
            continue
        if not line.strip():
            current["end"] = "blank line"
            continue
        k = _KEY.match(line)
        if k:
            key = "Kernel driver in use" if k.group("key") == "Driver in use" else k.group("key")
            current["keys"].setdefault(key, k.group("value").strip())
            continue
        if _VERBOSE.match(line):
            current["verbose"] = True
            continue
        if not line[:1].isspace() and not line.startswith("[ ... ]"):
            current["end"] = "other text"  # a prompt, a fence, prose: the output stopped here
    if not blocks:
        raise ValueError("no lspci device line ('BB:DD.F CLASS: VENDOR DEVICE')")
    # A run: blocks that follow one another with nothing between them, one lspci output (a blank
    # line, prose or a prompt ends it). Where any block of a run shows its kernel lines, lspci ran
    # with -k and printed each block whole.
    shown = [False] * len(blocks)
    start = 0
    for n, b in enumerate(blocks):
        if b["end"] != "next device" or n == len(blocks) - 1:
            run = range(start, n + 1)
            seen = any({"Kernel driver in use", "Kernel modules"} & blocks[i]["keys"].keys() for i in run)
            for i in run:
                shown[i] = seen
            start = n + 1
    devices = [_device(b, shown[n]) for n, b in enumerate(blocks)]
    # The same device in two outputs pasted together (plain lspci, then lspci -k): the one that
    # shows its driver wins.
    by_address: Dict[str, Dict[str, Any]] = {}
    for d in devices:
        if d["class_id"][:2] in ("03", "12"):
            seen = by_address.get(d["address"])
            if seen is None or not isinstance(d["bound"], Unknown):
                by_address[d["address"]] = d
    return {"devices": list(by_address.values()), "all_devices": len(devices)}


def _device(block: Dict[str, Any], kernel_shown: bool) -> Dict[str, Any]:
    m, keys = block["m"], block["keys"]
    cls = m.group("cls").strip()
    class_id = (m.group("clsid") or CLASS_NAMES.get(cls) or "").lower()
    domain = (m.group("domain") or "0000")[-4:].lower()
    dev: Dict[str, Any] = {"address": f"{domain}:{m.group('bus')}:{m.group('dev')}.{m.group('fn')}".lower(),
                           "class": cls, "class_id": class_id}
    dev.update(_name(m.group("rest")))
    dev["subsystem"] = keys.get("Subsystem")
    driver = keys.get("Kernel driver in use")
    modules = keys.get("Kernel modules")
    dev["modules"] = [x.strip() for x in modules.split(",") if x.strip()] if modules is not None else None
    if driver:
        dev["driver"], dev["bound"] = driver.split()[0], True
    elif modules is not None or (block["end"] == "blank line" and block["verbose"]) or (
            block["end"] == "next device" and kernel_shown):
        # ls-kernel.c prints the driver line before the modules line, and -v prints the kernel
        # section before its blank line: a complete block without it has no driver bound.
        dev["driver"], dev["bound"] = None, False
    else:
        dev["driver"] = None
        dev["bound"] = Unknown("the lspci output pasted does not show this device's kernel driver (lspci without -k, "
                               "or its lines cut by grep or the paste)")
    if "LnkCap" in keys or "LnkSta" in keys:
        cap, sta = _link(keys.get("LnkCap", "")), _link(keys.get("LnkSta", ""))
        dev["link"] = {"speed_gts": sta["speed_gts"], "width": sta["width"], "max_speed_gts": cap["speed_gts"],
                       "max_width": cap["width"], "downgraded": sta["downgraded"]}
    return dev
