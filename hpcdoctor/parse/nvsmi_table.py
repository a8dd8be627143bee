"""The default ``nvidia-smi`` table: the most pasted GPU summary of all."""

from __future__ import annotations

import re
from typing import Any, Dict, List

from hpcdoctor.facts import Unknown
from hpcdoctor.parse import MAX_GPUS

HEAD = re.compile(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s+(\S+)\s+CUDA Version:\s+(\S+)")
ROW1 = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(On|Off)\s+\|\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s+(On|Off)\s+\|\s*(\S*)\s*\|")
ROW2 = re.compile(r"^\|\s*(\S+)\s+(\S+?)C?\s+(P\d+)\s+(?:(\S+?)W\s*/\s*(\S+?)W)?.*?\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(\S+)%?\s+(\S.*?)\s*\|")
PROC = re.compile(r"^\|\s+(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(.+?)\s+(\d+)MiB\s*\|")


def _int(v: str) -> Any:
    return int(v) if v and v.isdecimal() else Unknown(f"nvidia-smi table shows {v!r}")


def parse(text: str) -> Dict[str, Any]:
    lines = text.replace("\r\n", "\n").split("\n")
    head = next((HEAD.search(l) for l in lines if HEAD.search(l)), None)
    if head is None and not any(ROW1.match(l) for l in lines):
        raise ValueError("no 'NVIDIA-SMI ... Driver Version' header: not the nvidia-smi table")
    # A table pasted from its column headings down (the banner cut off above) still lists the GPUs;
    # the driver and CUDA versions it no longer shows stay unknown.
    cut = Unknown("the nvidia-smi table was pasted without its NVIDIA-SMI header line")
    driver = head.group(2) if head else cut
    gpus: List[Dict[str, Any]] = []
    for i, line in enumerate(lines):
        m = ROW1.match(line)
        if not m:
            continue
        if len(gpus) >= MAX_GPUS:
            raise ValueError(f"the nvidia-smi table lists more than {MAX_GPUS} GPUs, more than any node holds")
        name = m.group(2).strip()
        g: Dict[str, Any] = {
            "index": int(m.group(1)),
            # Narrow tables cut long names with "...": such a name is not a model to look up.
            "name": name if not name.endswith("...") else Unknown(f"name truncated in the table: {name}"),
            "persistence_mode": m.group(3) == "On",
            "pci_bus_id": m.group(4),
            "ecc_uncorrectable_volatile": _int(m.group(6)) if m.group(6) not in ("", "N/A") else Unknown("ECC N/A"),
            "driver_version": driver,
        }
        m2 = ROW2.match(lines[i + 1]) if i + 1 < len(lines) else None
        if m2:
            g["temperature_c"] = _int(m2.group(2))
            if m2.group(4):
                g["power_draw_w"] = float(m2.group(4)) if re.match(r"^\d+(\.\d+)?$", m2.group(4)) else Unknown("N/A")
                g["power_limit_w"] = float(m2.group(5)) if re.match(r"^\d+(\.\d+)?$", m2.group(5)) else Unknown("N/A")
            g["memory_used_mib"] = int(m2.group(6))
            g["memory_total_mib"] = int(m2.group(7))
            g["compute_mode"] = m2.group(9).strip()
        m3 = lines[i + 2] if i + 2 < len(lines) else ""
        mig = re.search(r"\|\s*(Enabled|Disabled|N/A)\s*\|\s*$", m3)
        g["mig_enabled"] = bool(mig and mig.group(1) == "Enabled")
        gpus.append(g)
    procs = [PROC.match(l) for l in lines]
    for p in filter(None, procs):
        idx = int(p.group(1))
        for g in gpus:
            if g["index"] == idx:
                g.setdefault("processes", []).append({"pid": int(p.group(4)), "type": p.group(5),
                                                       "name": p.group(6).strip(), "used_mib": int(p.group(7))})
    for g in gpus:
        g.setdefault("processes", [])
    return {"driver_version": driver, "cuda_driver_version": head.group(3) if head else cut, "gpus": gpus}
