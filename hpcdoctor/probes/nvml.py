"""NVML, read-only. Only nvmlDeviceGet*/nvmlSystemGet* queries are called here: hpcdoctor never
changes a GPU setting (tests enforce that no setter is referenced)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from hpcdoctor.probes import marker
from hpcdoctor.sysroot import Missing

# NVML clock event (throttle) reason bits, named as nvidia-smi -q -x names them.
CLOCK_EVENT_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clocks_setting",
}
COMPUTE_MODES = {0: "Default", 1: "Exclusive_Thread", 2: "Prohibited", 3: "Exclusive_Process"}


def decode_clock_events(mask: int) -> List[str]:
    names = [name for bit, name in CLOCK_EVENT_BITS.items() if mask & bit]
    # Newer drivers add reasons (NVML's docs list BoardLimit and Reliability; nvidia-ml-py
    # 13.615.71 gives no bit for them): an active bit we cannot name is kept, never dropped.
    rest = mask & ~sum(CLOCK_EVENT_BITS)
    names += [f"unknown_reason_{1 << b:#x}" for b in range(64) if rest >> b & 1]
    return names


def _s(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _why(exc: Exception) -> str:
    name = type(exc).__name__.replace("NVMLError_", "")
    if name == "NotSupported":
        return "not supported by the driver for this GPU"
    if name == "NoPermission":
        return "NVML denied permission"
    return f"NVML: {exc}"


def query() -> Dict[str, Any]:
    """Everything hpcdoctor wants from NVML, as plain data. Raises Missing when NVML itself is
    unusable, with NVML's own words (they are the diagnosis: "Driver/library version mismatch")."""
    try:
        import pynvml
    except Exception as exc:  # nvidia-ml-py absent or broken
        raise Missing(f"pynvml cannot be imported: {exc}") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise Missing(f"NVML init failed: {exc}") from None
    try:
        return _query(pynvml)
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass


def _query(nv) -> Dict[str, Any]:
    def get(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except nv.NVMLError as exc:
            return marker(_why(exc))

    out: Dict[str, Any] = {
        "driver_version": get(lambda: _s(nv.nvmlSystemGetDriverVersion())),
        "nvml_version": get(lambda: _s(nv.nvmlSystemGetNVMLVersion())),
        "cuda_driver_version": get(lambda: _cuda_version(nv.nvmlSystemGetCudaDriverVersion())),
    }
    gpus = []
    for i in range(nv.nvmlDeviceGetCount()):
        h = nv.nvmlDeviceGetHandleByIndex(i)
        g: Dict[str, Any] = {"index": i}
        g["name"] = get(lambda: _s(nv.nvmlDeviceGetName(h)))
        g["uuid"] = get(lambda: _s(nv.nvmlDeviceGetUUID(h)))
        g["serial"] = get(lambda: _s(nv.nvmlDeviceGetSerial(h)))
        g["pci_bus_id"] = get(lambda: _s(nv.nvmlDeviceGetPciInfo(h).busId))
        mem = get(lambda: nv.nvmlDeviceGetMemoryInfo(h))
        g["memory_total_mib"] = mem if isinstance(mem, dict) else mem.total // (1024 * 1024)
        g["memory_used_mib"] = mem if isinstance(mem, dict) else mem.used // (1024 * 1024)
        cc = get(lambda: nv.nvmlDeviceGetCudaComputeCapability(h))
        g["compute_capability"] = cc if isinstance(cc, dict) else f"{cc[0]}.{cc[1]}"
        g["persistence_mode"] = get(lambda: nv.nvmlDeviceGetPersistenceMode(h) == 1)
        g["compute_mode"] = get(lambda: COMPUTE_MODES.get(nv.nvmlDeviceGetComputeMode(h), "Unknown"))
        ecc = get(lambda: nv.nvmlDeviceGetEccMode(h))
        g["ecc_enabled"] = ecc if isinstance(ecc, dict) else bool(ecc[0])
        g["ecc_pending"] = ecc if isinstance(ecc, dict) else bool(ecc[1])
        g["ecc_uncorrectable_volatile"] = get(lambda: int(nv.nvmlDeviceGetTotalEccErrors(
            h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC)))
        g["ecc_uncorrectable_aggregate"] = get(lambda: int(nv.nvmlDeviceGetTotalEccErrors(
            h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_AGGREGATE_ECC)))
        g["retired_pages_pending"] = get(lambda: nv.nvmlDeviceGetRetiredPagesPendingStatus(h) == 1)
        g["retired_pages"] = get(lambda: sum(len(nv.nvmlDeviceGetRetiredPages(h, cause)) for cause in (
            nv.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
            nv.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)))
        rows = get(lambda: nv.nvmlDeviceGetRemappedRows(h))
        g["remapped_rows"] = rows if isinstance(rows, dict) else {
            "correctable": int(rows[0]), "uncorrectable": int(rows[1]),
            "pending": bool(rows[2]), "failed": bool(rows[3])}
        g["clocks"] = {
            "sm_mhz": get(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
            "sm_max_mhz": get(lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
            "mem_mhz": get(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM)),
            "mem_max_mhz": get(lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_MEM)),
        }
        events = get(lambda: clock_events(nv, h))
        g["clock_event_reasons"] = events if isinstance(events, dict) else decode_clock_events(events)
        g["power_draw_w"] = get(lambda: nv.nvmlDeviceGetPowerUsage(h) / 1000.0)
        g["power_limit_w"] = get(lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0)
        g["power_default_limit_w"] = get(lambda: nv.nvmlDeviceGetPowerManagementDefaultLimit(h) / 1000.0)
        g["temperature_c"] = get(lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))
        g["pcie_gen"] = get(lambda: nv.nvmlDeviceGetCurrPcieLinkGeneration(h))
        g["pcie_gen_max"] = get(lambda: nv.nvmlDeviceGetMaxPcieLinkGeneration(h))
        g["pcie_width"] = get(lambda: nv.nvmlDeviceGetCurrPcieLinkWidth(h))
        g["pcie_width_max"] = get(lambda: nv.nvmlDeviceGetMaxPcieLinkWidth(h))
        g["nvlinks"] = _nvlinks(nv, h)
        mig = get(lambda: nv.nvmlDeviceGetMigMode(h))
        g["mig_enabled"] = mig if isinstance(mig, dict) else bool(mig[0])
        g["mig_pending"] = mig if isinstance(mig, dict) else bool(mig[1])
        g["processes"] = get(lambda: compute_processes(nv, h))
        g["numa_node_nvml"] = get(lambda: nv.nvmlDeviceGetNumaNodeId(h))
        gpus.append(g)
    out["gpus"] = gpus
    return out


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def clock_events(nv, h) -> int:
    """The clock event reason mask (older nvidia-ml-py calls the query ...ThrottleReasons)."""
    fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
    return int(fn(h))


def compute_processes(nv, h) -> List[Dict[str, Any]]:
    """The compute processes on a GPU: pid and the MiB it holds (None where NVML does not say)."""
    return [{"pid": int(p.pid), "used_mib": (int(p.usedGpuMemory) // (1024 * 1024)) if p.usedGpuMemory else None}
            for p in nv.nvmlDeviceGetComputeRunningProcesses(h)]


def _nvlinks(nv, h) -> Any:
    links = []
    for link in range(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            links.append({"link": link, "active": nv.nvmlDeviceGetNvLinkState(h, link) == 1})
        except nv.NVMLError as exc:
            if "NotSupported" in type(exc).__name__ or "InvalidArgument" in type(exc).__name__:
                break  # no NVLink, or past the last link
            return marker(_why(exc))
    return links
