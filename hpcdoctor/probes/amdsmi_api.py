"""AMD SMI's Python API, read-only, shaped like ``amd-smi static --json`` so that one normaliser
(parse.amdsmi.normalise_static) serves the API, the JSON and the text forms."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from hpcdoctor.sysroot import Missing


def query() -> Dict[str, Any]:
    try:
        import amdsmi
    except Exception as exc:
        raise Missing(f"amdsmi cannot be imported: {exc}") from None
    error = getattr(amdsmi, "AmdSmiException", Exception)
    try:
        amdsmi.amdsmi_init()
    except error as exc:
        raise Missing(f"amdsmi init failed: {exc}") from None
    try:
        return _query(amdsmi, error)
    finally:
        try:
            amdsmi.amdsmi_shut_down()
        except error:
            pass


def _query(api, error) -> Dict[str, Any]:
    def get(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except error:
            return None  # absent in the record: the normaliser says N/A

    devices: List[Dict[str, Any]] = []
    for i, h in enumerate(api.amdsmi_get_processor_handles()):
        d: Dict[str, Any] = {"gpu": i}
        asic = get(lambda: api.amdsmi_get_gpu_asic_info(h))
        if isinstance(asic, dict):
            d["asic"] = asic
        bus: Dict[str, Any] = {}
        bdf = get(lambda: api.amdsmi_get_gpu_device_bdf(h))
        if bdf:
            bus["bdf"] = bdf
        pcie = get(lambda: api.amdsmi_get_pcie_info(h))
        if isinstance(pcie, dict):
            static = pcie.get("pcie_static") or {}
            metric = pcie.get("pcie_metric") or {}
            bus.update({k: static[k] for k in ("max_pcie_width", "max_pcie_speed", "pcie_interface_version") if k in static})
            d["pcie_metric"] = metric
        d["bus"] = bus
        vram = get(lambda: api.amdsmi_get_gpu_vram_info(h))
        if isinstance(vram, dict) and "vram_size" in vram:
            d["vram"] = {"size": {"value": vram["vram_size"], "unit": "MB"}}
        drv = get(lambda: api.amdsmi_get_gpu_driver_info(h))
        if isinstance(drv, dict):
            d["driver"] = {"name": drv.get("driver_name"), "version": drv.get("driver_version")}
        board = get(lambda: api.amdsmi_get_gpu_board_info(h))
        if isinstance(board, dict):
            d["board"] = board
        ecc = get(lambda: api.amdsmi_get_gpu_total_ecc_count(h))
        if isinstance(ecc, dict):
            d["ecc_count"] = ecc
        devices.append(d)
    return {"gpu_data": devices}
