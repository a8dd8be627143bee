"""Helpers shared by the GPU checks (the loader skips _modules: this is not a check): the PCI
bus, GPU locality, reading a vendor tool's output, and what a source's failure means."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Sequence

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


# Why a source gave nothing: the vendor's tools or libraries are not there at all, or the source
# is not there to consult (a recording without it, or a text form never run on a live node).
TOOL_ABSENT = ("not installed", "Library Not Found", "cannot be imported")
NOT_CONSULTED = ("was not recorded", "only read from recordings")


def not_consulted(error: str) -> bool:
    return any(a in error for a in NOT_CONSULTED)


def ran_and_failed(error: str) -> bool:
    """A source that was there and failed (a driver mismatch, a hung tool), not one that was absent."""
    return not not_consulted(error) and not any(a in error for a in TOOL_ABSENT)


def tool_hung(errors: Sequence[str]) -> bool:
    """A vendor tool that was started and never answered: a driver in trouble, even when no GPU
    shows on the bus (a GPU that fell off it), so never read as "no GPUs"."""
    return any(e.endswith(" timed out") for e in errors)


def driver_stack_absent(errors: Sequence[str]) -> bool:
    """Every source that could be consulted failed only because the vendor's tools and libraries
    are not installed: the job has no usable GPU of that vendor."""
    consulted = [e for e in errors if not not_consulted(e)]
    return bool(consulted) and all(any(a in e for a in TOOL_ABSENT) for e in consulted)


def tool_output(root: SysRoot, argv: List[str], parse: Callable[[str], Dict[str, Any]],
                live: bool = True) -> Dict[str, Any]:
    """A vendor tool's output parsed, tagged with its source; Missing with the reason otherwise.
    ``live=False``: a text form only read where someone recorded or pasted it."""
    res = root.run(argv, timeout=10.0, live=live)
    if not res.ok:
        raise Missing(res.why_failed())
    try:
        data = parse(res.stdout)
    except (ValueError, KeyError, TypeError) as exc:
        raise Missing(f"{' '.join(argv)}: {exc}") from None
    data["source"] = " ".join(argv)
    return data
