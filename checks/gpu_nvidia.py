"""NVIDIA GPUs: NVML first, ``nvidia-smi -q -x`` when NVML cannot be used, the PCI bus to tell
"no GPU" from "a GPU the driver cannot reach".

Each GPU's NUMA node and local CPUs come from sysfs (NVML often answers NotSupported for them in
VMs). ``nvidia-smi topo -m`` is read on multi-GPU nodes for GPU-GPU and GPU-NIC links.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from hpcdoctor.knowledge import gpus as gpu_table
from hpcdoctor.checks._gpu import (add_locality, driver_stack_absent, gpus_on_bus, ran_and_failed, tool_hung,
                                   tool_output)
from hpcdoctor.checks._report import environment_report
from hpcdoctor.facts import Unknown
from hpcdoctor.parse import nvsmi_q, nvsmi_table, nvsmi_topo, nvsmi_xml
from hpcdoctor.probes import revive
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "gpu_nvidia"
TIMEOUT = 15.0
PROVIDES = ("gpus", "nvidia")
NVIDIA_VENDOR = "0x10de"


def _fill_knowledge(gpu: Dict[str, Any], site: Sequence[Dict[str, Any]] = ()) -> None:
    cc = gpu.get("compute_capability")
    name = gpu.get("name")
    if isinstance(name, str) and (cc is None or isinstance(cc, Unknown)):
        known = gpu_table.compute_capability(name, site)
        gpu["compute_capability"] = known or Unknown(f"neither the source nor hpcdoctor's knowledge gives the compute capability of {name}")
        if known:
            gpu["compute_capability_source"] = "knowledge"
    sku = gpu_table.datasheet(name, site) if isinstance(name, str) else None
    gpu["sku"] = sku["id"] if sku else None


def _from_nvml(root: SysRoot) -> Dict[str, Any]:
    from hpcdoctor.probes import nvml

    raw = root.probe("nvml", nvml.query)
    data = revive(raw)
    for g in data["gpus"]:
        g["driver_version"] = data.get("driver_version")
    data["source"] = "nvml"
    return data


def _from_nvsmi(root: SysRoot) -> Dict[str, Any]:
    return tool_output(root, ["nvidia-smi", "-q", "-x"], nvsmi_xml.parse)


def _from_nvsmi_text(root: SysRoot) -> Dict[str, Any]:
    # Slower and less precise than the XML: only read where someone recorded or pasted it.
    return tool_output(root, ["nvidia-smi", "-q"], nvsmi_q.parse, live=False)


def _from_nvsmi_table(root: SysRoot) -> Dict[str, Any]:
    return tool_output(root, ["nvidia-smi"], nvsmi_table.parse, live=False)


def _from_collect_env(root: SysRoot) -> Dict[str, Any]:
    """GPU models and the driver as an environment report lists them (collect_env: names only;
    sglang's check_env adds compute capabilities), the rest Unknown."""
    _, parsed = environment_report(root)
    t = parsed.get("torch", {})
    source = "sglang check_env" if parsed.get("format") == "sglang" else "collect_env"
    models = t.get("gpu_models") or []
    if not models:
        raise Missing(f"{source} lists no GPU model")
    if t.get("hip") or t.get("platform") == "rocm" or "+rocm" in str(t.get("version") or ""):
        raise Missing(f"{source} lists ROCm devices, not NVIDIA GPUs")
    if isinstance(t.get("hip"), Unknown):
        raise Missing(f"{source}'s ROCm line is broken, so whose GPUs it lists is unknown")
    driver = t.get("driver_version") or Unknown(f"{source} gives no driver version")
    caps = t.get("compute_capabilities") or {}
    gpus = [{"index": i, "name": name, "driver_version": driver, **({"compute_capability": caps[str(i)]} if str(i) in caps else {})}
            for i, name in enumerate(models)]
    return {"gpus": gpus, "driver_version": driver, "cuda_driver_version": Unknown(f"{source} gives no driver CUDA version"),
            "source": source}


def _topology(root: SysRoot, n_gpus: int) -> Any:
    if n_gpus < 2 and root.mode != "replay":
        return None  # one GPU has no GPU-GPU links; skip the 0.3 s nvidia-smi call
    try:
        res = root.run(["nvidia-smi", "topo", "-m"], timeout=10.0)
    except Missing as exc:
        # A live one-GPU node never runs it (above), so its recording has none: not an unknown.
        return None if n_gpus < 2 else Unknown(str(exc))
    if not res.ok:
        return Unknown(res.why_failed())
    try:
        return nvsmi_topo.parse(res.stdout)
    except ValueError as exc:
        return Unknown(str(exc))


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    on_bus = gpus_on_bus(root, NVIDIA_VENDOR)
    errors: List[str] = []
    data: Optional[Dict[str, Any]] = None
    for source in (_from_nvml, _from_nvsmi, _from_nvsmi_text, _from_nvsmi_table, _from_collect_env):
        if source not in (_from_nvml, _from_nvsmi) and any(ran_and_failed(e) for e in errors):
            break  # the driver failed when asked: an older text must not paper over that
        try:
            data = source(root)
            break
        except Missing as exc:
            errors.append(str(exc))
    nvidia: Dict[str, Any] = {"pci_devices": len(on_bus) if isinstance(on_bus, list) else on_bus}
    if data is None:
        reason = "; ".join(errors)
        nvidia["error"] = reason
        if isinstance(on_bus, list) and not on_bus and not tool_hung(errors):
            return {"gpus": [], "nvidia": nvidia}  # no NVIDIA GPU here: a fact, not a failure
        if isinstance(on_bus, list) and not on_bus:
            return {"gpus": Unknown(f"no NVIDIA GPU on the PCI bus, but {reason}"), "nvidia": nvidia}
        if isinstance(on_bus, list):
            return {"gpus": Unknown(f"{len(on_bus)} NVIDIA GPU(s) on the PCI bus, but {reason}"), "nvidia": nvidia}
        # The bus could not be read (a container, or a snapshot of another kind). With no
        # driver stack at all the job has no usable NVIDIA GPU; anything else stays Unknown.
        if driver_stack_absent(errors):
            return {"gpus": [], "nvidia": nvidia}
        return {"gpus": Unknown(reason), "nvidia": nvidia}
    gpus = data["gpus"]
    for g in gpus:
        g["vendor"] = "nvidia"
        _fill_knowledge(g, ctx.options.site_gpus)
        add_locality(root, g)
    nvidia.update({
        "source": data["source"],
        "driver_version": data.get("driver_version"),
        "cuda_driver_version": data.get("cuda_driver_version"),
        "topology": _topology(root, len(gpus)),
    })
    if errors:
        nvidia["fallback_reason"] = errors[0]
    return {"gpus": gpus, "nvidia": nvidia}
