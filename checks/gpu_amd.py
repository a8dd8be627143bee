"""AMD GPUs: ``amd-smi static --json``, else ``rocm-smi --showallinfo --json``, and the PCI bus.

MI250X and MI250 packages hold two GCDs, each a separate device to ROCm and PyTorch: a 4-package
LUMI-G node shows 8 GPUs of 64 GiB. The facts list devices as the runtime sees them and account
packages separately, so a count check can compare like with like.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from hpcdoctor.knowledge import gpus as gpu_table
from hpcdoctor.checks._gpu import add_locality, driver_stack_absent, gpus_on_bus, tool_hung, tool_output
from hpcdoctor.facts import Unknown
from hpcdoctor.parse import amdsmi, rocm_topo
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "gpu_amd"
TIMEOUT = 15.0
PROVIDES = ("gpus", "amd")
AMD_VENDOR = "0x1002"


def _versions(root: SysRoot) -> Dict[str, Any]:
    try:
        return tool_output(root, ["amd-smi", "version", "--json"], amdsmi.parse_amdsmi_version)
    except Missing as exc:
        return {"rocm_version": Unknown(str(exc))}


def _topology(root: SysRoot) -> Any:
    """GPU links and NUMA nodes from a recorded or pasted ``rocm-smi --showtopo`` (else
    ``--showtoponuma``); never run for: sysfs gives a live node's NUMA nodes."""
    errors = []
    for argv in (["rocm-smi", "--showtopo"], ["rocm-smi", "--showtoponuma"]):
        try:
            return tool_output(root, argv, rocm_topo.parse, live=False)
        except Missing as exc:
            errors.append(str(exc))
    return Unknown("; ".join(dict.fromkeys(errors)))  # both commands' "rocm-smi is not installed" once


def _fill_numa(gpus: List[Dict[str, Any]], topology: Any) -> None:
    numa = topology.get("numa_node", {}) if isinstance(topology, dict) else {}
    for g in gpus:
        node = numa.get(str(g.get("index")))
        if isinstance(g.get("numa_node"), Unknown) and isinstance(node, int) and node >= 0:
            g["numa_node"] = node
            g["numa_node_source"] = "rocm-smi"


def _lockup_timeout(root: SysRoot) -> Any:
    """amdgpu's lockup_timeout module parameter as the kernel shows it (ms; "0" or empty: the kernel's
    default, which has shrunk to 2000 for all queues in the newest kernels); Unknown without amdgpu."""
    text = root.read_or("/sys/module/amdgpu/parameters/lockup_timeout")
    if text is None:
        return Unknown("/sys/module/amdgpu/parameters/lockup_timeout not readable (amdgpu not loaded, or not recorded)")
    return text.strip()[:80]


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    on_bus = gpus_on_bus(root, AMD_VENDOR)
    errors: List[str] = []
    data: Optional[Dict[str, Any]] = None
    sources = ((["amd-smi", "static", "--json"], amdsmi.parse_amdsmi_static, True),
               (["rocm-smi", "--showallinfo", "--json"], amdsmi.parse_rocm_smi_json, True),
               # Text forms: read where someone recorded or pasted them, never run for them.
               (["amd-smi", "static"], amdsmi.parse_amdsmi_static_text, False),
               (["rocm-smi", "-a"], amdsmi.parse_rocm_smi_text, False),
               (["rocm-smi"], amdsmi.parse_rocm_smi_text, False))
    try:
        from hpcdoctor.probes import amdsmi_api

        data = amdsmi.normalise_static(root.probe("amdsmi", amdsmi_api.query))
        data["source"] = "amdsmi"
    except (Missing, ValueError) as exc:
        errors.append(str(exc))
    for argv, parse, live in sources if data is None else ():
        try:
            data = tool_output(root, argv, parse, live)
            break
        except Missing as exc:
            errors.append(str(exc))
    amd: Dict[str, Any] = {"pci_devices": len(on_bus) if isinstance(on_bus, list) else on_bus,
                           "topology": _topology(root), "lockup_timeout": _lockup_timeout(root)}
    if data is None:
        amd["error"] = "; ".join(errors)
        if isinstance(on_bus, list) and on_bus:
            return {"gpus": Unknown(f"{len(on_bus)} AMD GPU(s) on the PCI bus, but {amd['error']}"), "amd": amd}
        if isinstance(on_bus, list) and not on_bus and tool_hung(errors):
            return {"gpus": Unknown(f"no AMD GPU on the PCI bus, but {amd['error']}"), "amd": amd}
        if (isinstance(on_bus, list) and not on_bus) or driver_stack_absent(errors):
            return {"gpus": [], "amd": amd}
        return {"gpus": Unknown(amd["error"]), "amd": amd}
    gpus = data["gpus"]
    packages: Any = 0.0
    for g in gpus:
        name = g.get("name")
        sku = gpu_table.datasheet(name, ctx.options.site_gpus) if isinstance(name, str) else None
        g["sku"] = sku["id"] if sku else None
        if not isinstance(name, str):
            # An unnamed device (ROCm 4/5's concise table) may be one GCD of an MI250X: unknown.
            g["gcds_per_package"] = packages = Unknown("the source does not name the devices")
        else:
            gcds = int(sku.get("gcds", 1)) if sku else 1
            g["gcds_per_package"] = gcds
            if not isinstance(packages, Unknown):
                packages += 1.0 / gcds
        add_locality(root, g)
    _fill_numa(gpus, amd["topology"])
    amd.update({
        "source": data["source"],
        "driver_version": data.get("driver_version"),
        "devices": len(gpus),
        "packages": packages if isinstance(packages, Unknown) else int(round(packages)),
    })
    amd.update(_versions(root))
    return {"gpus": gpus, "amd": amd}
