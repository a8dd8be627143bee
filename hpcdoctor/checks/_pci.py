"""PCI helpers shared by the GPU checks (the loader skips _modules: this is not a check)."""

from __future__ import annotations

from typing import Any, Dict, Sequence

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist
from hpcdoctor.sysroot import Missing, SysRoot

PCI = "/sys/bus/pci/devices"
# Display controllers: VGA (0x0300), 3D (0x0302, data-centre NVIDIA), other (0x0380, AMD Instinct).
GPU_CLASSES = ("0x0300", "0x0302", "0x0380")


def pci_address(bus_id: str) -> str:
    """NVML/nvidia-smi bus ids ("00000000:00:06.0") in sysfs form ("0000:00:06.0")."""
    bus_id = bus_id.strip().lower()
    domain, sep, rest = bus_id.partition(":")
    if sep and len(domain) > 4:
        domain = domain[-4:]
    return f"{domain}:{rest}" if sep else bus_id


def gpus_on_bus(root: SysRoot, vendor: str) -> Any:
    """Addresses of one vendor's GPUs on the PCI bus, whatever the driver's state."""
    try:
        names = root.listdir(PCI)
    except Missing as exc:
        return Unknown(str(exc))
    found = []
    for addr in sorted(names):
        v = root.read_or(f"{PCI}/{addr}/vendor")
        if v is None or v.strip().lower() != vendor:
            continue
        cls = (root.read_or(f"{PCI}/{addr}/class") or "").strip().lower()
        if cls[:6] in GPU_CLASSES:
            found.append(addr)
    return found


def add_locality(root: SysRoot, gpu: Dict[str, Any]) -> None:
    """The GPU's NUMA node and local CPUs, from sysfs (NVML and amd-smi often cannot say in VMs)."""
    bus = gpu.get("pci_bus_id")
    if not isinstance(bus, str):
        gpu["numa_node"] = gpu["local_cpus"] = Unknown("PCI bus id unknown")
        return
    base = f"{PCI}/{pci_address(bus)}"
    node = root.read_or(f"{base}/numa_node")
    if node is None:
        gpu["numa_node"] = Unknown(f"{base}/numa_node unreadable")
    else:
        n = int(node.strip()) if node.strip().lstrip("-").isdecimal() else -1
        # -1: the firmware reported no locality (single-node hosts and most VMs).
        gpu["numa_node"] = n if n >= 0 else Unknown("the platform reports no NUMA node for this GPU (-1)")
    cpus = root.read_or(f"{base}/local_cpulist")
    try:
        gpu["local_cpus"] = parse_cpulist(cpus) if cpus else Unknown(f"{base}/local_cpulist unreadable")
    except ListFormatError as exc:
        gpu["local_cpus"] = Unknown(str(exc))


def driver_stack_absent(errors: Sequence[str]) -> bool:
    """Every source failed only because the vendor's tools and libraries are not installed."""
    return bool(errors) and all(
        ("not installed" in e or "Library Not Found" in e or "cannot be imported" in e) for e in errors)
