"""NVIDIA GPU facts: replayed XML against what NVML said live, public nvidia-smi reports, NVML
paths (NotSupported, no library, driver/library mismatch)."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import NODES, PUBLIC, report_of
from hpcdoctor import pipeline
from hpcdoctor.facts import Unknown
from hpcdoctor.parse import nvsmi_topo, nvsmi_xml
from hpcdoctor.probes import nvml, revive
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import Missing, ReplaySysRoot

REF = json.loads((NODES / "h100-kvm-1gpu" / "reference.json").read_text())["nvml"]
MIB = 1024 * 1024


def test_h100_replay_matches_live_nvml():
    doc = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"))
    (g,) = doc["facts"]["gpus"]
    (r,) = REF["devices"]
    assert g["name"] == r["name"] and g["uuid"] == r["uuid"] and g["serial"] == r["serial"]
    assert g["memory_total_mib"] == r["mem_total"] // MIB
    assert g["compute_capability"] == "%d.%d" % tuple(r["cc"])
    assert g["persistence_mode"] is bool(r["persistence"])
    assert g["compute_mode"] == "Default" and r["compute_mode"] == 0
    assert [g["ecc_enabled"], g["ecc_pending"]] == [bool(x) for x in r["ecc"]]
    assert g["ecc_uncorrectable_volatile"] == r["ecc_uncorr_volatile"]
    assert g["ecc_uncorrectable_aggregate"] == r["ecc_uncorr_aggregate"]
    for k in ("pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max"):
        assert g[k] == r[k], k
    assert g["power_limit_w"] * 1000 == r["power_limit_mw"]
    assert g["power_default_limit_w"] * 1000 == r["power_default_mw"]
    assert g["clocks"]["sm_max_mhz"] == r["sm_clock_max"] and g["clocks"]["mem_max_mhz"] == r["mem_clock_max"]
    assert [g["mig_enabled"], g["mig_pending"]] == [bool(x) for x in r["mig"]]
    rows = g["remapped_rows"]
    assert [rows["correctable"], rows["uncorrectable"], rows["pending"], rows["failed"]] == [
        r["remapped_rows"][0], r["remapped_rows"][1], bool(r["remapped_rows"][2]), bool(r["remapped_rows"][3])]
    assert g["clock_event_reasons"] == nvml.decode_clock_events(r["throttle"]) == ["gpu_idle"]
    assert g["driver_version"] == REF["driver"]
    assert doc["facts"]["nvidia"]["cuda_driver_version"] == "13.0" and REF["cuda_driver"] == 13000
    # NVML said NotSupported for these there: they are Unknown here too, with a reason.
    assert "NotSupported" in r["retired_pending"] and g["retired_pages_pending"] is None
    assert "gpus.0.retired_pages_pending" in doc["unknown"]
    assert "NotSupported" in r["numa_node"] and g["numa_node"] is None
    assert g["local_cpus"] == list(range(16))


def test_public_a100_mig_report():
    d = nvsmi_xml.parse((PUBLIC / "nvsmi" / "telegraf_a100-sxm4-80gb_mig_v12.xml").read_text())
    (g,) = d["gpus"]
    assert g["name"] == "NVIDIA A100-SXM4-80GB"
    assert g["mig_enabled"] is True and g["mig_devices"] == 4
    assert isinstance(g["remapped_rows"], Unknown)  # N/A under MIG
    assert d["driver_version"] == "535.54.03"


@pytest.mark.parametrize("name,width", [("telegraf_a10g_pcie_x8_of_x16_remapped_rows.xml", 8),
                                        ("telegraf_tesla-t4_x8_of_x16_retired_pages.xml", 8)])
def test_public_narrow_links(name, width):
    (g,) = nvsmi_xml.parse((PUBLIC / "nvsmi" / name).read_text())["gpus"]
    assert g["pcie_width"] == width and g["pcie_width_max"] == 16


def test_public_t4_pre_ampere_retired_pages_and_processes():
    (g,) = nvsmi_xml.parse((PUBLIC / "nvsmi" / "telegraf_tesla-t4_x8_of_x16_retired_pages.xml").read_text())["gpus"]
    assert g["retired_pages"] == 0 and g["retired_pages_pending"] is False
    assert [p["pid"] for p in g["processes"]] == [675, 5762]
    assert g["clock_event_reasons"] == []  # older schema: clocks_throttle_reasons, none active


def test_public_8x_v100s():
    d = nvsmi_xml.parse((PUBLIC / "nvsmi" / "datakit_8x_v100s-pcie-32gb.xml").read_text())
    assert len(d["gpus"]) == 8 and {g["name"] for g in d["gpus"]} == {"Tesla V100S-PCIE-32GB"}
    assert all(g["ecc_uncorrectable_aggregate"] == 0 for g in d["gpus"])


def test_xml_entity_bomb_refused():
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><nvidia_smi_log>&b;</nvidia_smi_log>'
    with pytest.raises(nvsmi_xml.NvsmiXmlError, match="entity"):
        nvsmi_xml.parse(bomb)


def test_xml_garbage():
    for bad in ("", "<html></html>", "<nvidia_smi_log><gpu>", "\x00\x01"):
        with pytest.raises(nvsmi_xml.NvsmiXmlError):
            nvsmi_xml.parse(bad)


def test_topology_dgx_a100_and_dgx1_and_ansi():
    d = nvsmi_topo.parse((PUBLIC / "topo" / "gengwg_dgxa100_topo_m_12nics.txt").read_text())
    assert len(d["gpus"]) == 8 and len(d["nics"]) == 12
    assert d["devices"]["GPU0"]["links"]["GPU7"] == "NV12"
    assert d["devices"]["GPU0"]["links"]["mlx5_0"] == "PXB"
    assert d["devices"]["GPU4"]["numa_affinity"] == 7
    assert d["devices"]["GPU4"]["cpu_affinity"][0] == 112
    mp = nvsmi_topo.parse((PUBLIC / "topo" / "gengwg_dgx1_topo_mp.txt").read_text())
    assert mp["devices"]["GPU0"]["links"]["GPU1"] == "PIX"
    one = nvsmi_topo.parse((NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi_topo.txt").read_text())
    assert one["gpus"] == ["GPU0"] and one["devices"]["GPU0"]["numa_affinity"] == 0


def test_topology_pasted_with_spaces_and_collapsed_header():
    text = (PUBLIC / "topo" / "gengwg_dgxa100_topo_m_12nics.txt").read_text()
    first, rest = text.split("\n", 1)
    pasted = first.replace("\t", "").replace("mlx5_10mlx5_11", "mlx5_10mlx5_11") + "\n" + rest.replace("\t", "   ")
    d = nvsmi_topo.parse(pasted)
    assert len(d["gpus"]) == 8 and d["devices"]["GPU0"]["links"]["GPU1"] == "NV12"


# --- NVML ------------------------------------------------------------------------------------------


def test_nvml_missing_library_is_a_reason_not_a_crash():
    # The real nvidia-ml-py on a machine without libnvidia-ml: NVML's own words come back.
    with pytest.raises(Missing, match="NVML"):
        nvml.query()


class FakeNVML:
    """pynvml's interface answering with the values NVML gave live on the recorded H100
    (reference.json), NotSupported where it said NotSupported there."""

    class NVMLError(Exception):
        pass

    class NVMLError_NotSupported(NVMLError):
        pass

    NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC = 1, 0, 1
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 0, 1
    NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_TEMPERATURE_GPU, NVML_NVLINK_MAX_LINKS = 1, 2, 0, 18

    def __init__(self, ref):
        self.r = ref
        self.d = ref["devices"][0]

    def _ns(self, *a):
        raise self.NVMLError_NotSupported("Not Supported")

    def __getattr__(self, name):
        d, r = self.d, self.r
        Mem = type("Mem", (), {"total": d["mem_total"], "used": d["mem_used"]})
        Pci = type("Pci", (), {"busId": d["pci"]})
        table = {
            "nvmlSystemGetDriverVersion": lambda: r["driver"], "nvmlSystemGetNVMLVersion": lambda: r["nvml"],
            "nvmlSystemGetCudaDriverVersion": lambda: r["cuda_driver"], "nvmlDeviceGetCount": lambda: 1,
            "nvmlDeviceGetHandleByIndex": lambda i: i, "nvmlDeviceGetName": lambda h: d["name"],
            "nvmlDeviceGetUUID": lambda h: d["uuid"], "nvmlDeviceGetSerial": lambda h: d["serial"],
            "nvmlDeviceGetPciInfo": lambda h: Pci, "nvmlDeviceGetMemoryInfo": lambda h: Mem,
            "nvmlDeviceGetCudaComputeCapability": lambda h: tuple(d["cc"]),
            "nvmlDeviceGetPersistenceMode": lambda h: d["persistence"],
            "nvmlDeviceGetComputeMode": lambda h: d["compute_mode"], "nvmlDeviceGetEccMode": lambda h: tuple(d["ecc"]),
            "nvmlDeviceGetTotalEccErrors": lambda h, t, c: d["ecc_uncorr_volatile"] if c == 0 else d["ecc_uncorr_aggregate"],
            "nvmlDeviceGetRetiredPagesPendingStatus": self._ns, "nvmlDeviceGetRetiredPages": self._ns,
            "nvmlDeviceGetRemappedRows": lambda h: tuple(d["remapped_rows"]),
            "nvmlDeviceGetClockInfo": lambda h, c: d["sm_clock"] if c == 1 else d["mem_clock_max"],
            "nvmlDeviceGetMaxClockInfo": lambda h, c: d["sm_clock_max"] if c == 1 else d["mem_clock_max"],
            "nvmlDeviceGetCurrentClocksEventReasons": lambda h: d["throttle"],
            "nvmlDeviceGetPowerUsage": lambda h: d["power_mw"], "nvmlDeviceGetEnforcedPowerLimit": lambda h: d["power_limit_mw"],
            "nvmlDeviceGetPowerManagementDefaultLimit": lambda h: d["power_default_mw"],
            "nvmlDeviceGetTemperature": lambda h, s: d["temp"],
            "nvmlDeviceGetCurrPcieLinkGeneration": lambda h: d["pcie_gen"], "nvmlDeviceGetMaxPcieLinkGeneration": lambda h: d["pcie_gen_max"],
            "nvmlDeviceGetCurrPcieLinkWidth": lambda h: d["pcie_width"], "nvmlDeviceGetMaxPcieLinkWidth": lambda h: d["pcie_width_max"],
            "nvmlDeviceGetNvLinkState": self._ns, "nvmlDeviceGetMigMode": lambda h: tuple(d["mig"]),
            "nvmlDeviceGetComputeRunningProcesses": lambda h: [], "nvmlDeviceGetNumaNodeId": self._ns,
        }
        if name in table:
            return table[name]
        raise AttributeError(name)


def test_nvml_query_against_live_values_agrees_with_xml(tmp_path):
    raw = nvml._query(FakeNVML(REF))
    json.dumps(raw)  # the probe must be storable in a snapshot
    from_nvml = revive(raw)["gpus"][0]
    from_xml = nvsmi_xml.parse((NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi_qx.txt").read_text())["gpus"][0]
    for key in ("name", "uuid", "serial", "memory_total_mib", "persistence_mode", "compute_mode", "ecc_enabled",
                "ecc_pending", "ecc_uncorrectable_volatile", "ecc_uncorrectable_aggregate", "remapped_rows",
                "pcie_gen", "pcie_gen_max", "pcie_width", "pcie_width_max", "power_limit_w",
                "power_default_limit_w", "mig_enabled", "mig_pending", "clock_event_reasons"):
        assert from_nvml[key] == from_xml[key], key
    assert from_nvml["compute_capability"] == "9.0"
    assert isinstance(from_nvml["retired_pages_pending"], Unknown)
    assert "not supported" in from_nvml["retired_pages_pending"].reason
    assert from_nvml["nvlinks"] == []


def _snapshot_with_failing_driver(tmp_path, message):
    snap = tmp_path / "snap"
    shutil.copytree(NODES / "h100-kvm-1gpu", snap)
    (snap / "probes").mkdir()
    (snap / "probes" / "nvml.json").write_text(json.dumps({"__missing__": f"NVML init failed: {message}"}))
    index = json.loads((snap / "cmd" / "index.json").read_text())
    for e in index:
        if e["argv"][:1] == ["nvidia-smi"]:
            e.update(rc=18, stdout="fail.txt", stderr="")
    (snap / "cmd" / "fail.txt").write_text(f"Failed to initialize NVML: {message}\n")
    (snap / "cmd" / "index.json").write_text(json.dumps(index))
    return snap


def test_driver_library_mismatch_is_an_unknown_with_the_reason(tmp_path):
    snap = _snapshot_with_failing_driver(tmp_path, "Driver/library version mismatch")
    g = pipeline.gather(ReplaySysRoot(snap), Options())
    assert g["facts"]["gpus"] is None
    reason = g["unknown"]["gpus"]
    assert "1 NVIDIA GPU(s) on the PCI bus" in reason and "Driver/library version mismatch" in reason
    assert g["facts"]["nvidia"]["pci_devices"] == 1


def test_cpu_node_has_no_gpus():
    g = pipeline.gather(ReplaySysRoot(NODES / "cpu-kvm-2core"), Options())
    assert g["facts"]["gpus"] == []
    assert "not installed" in g["facts"]["nvidia"]["error"]


def test_container_without_pci_access_or_driver_stack_has_no_gpus():
    """/sys/bus/pci unreadable (a container) and no NVIDIA library or tool: no usable GPU, for
    both vendors alike. Text forms that are only read from recordings must not count as tried."""
    import time

    from hpcdoctor.checks import gpu_amd, gpu_nvidia
    from hpcdoctor.runner import CheckContext
    from hpcdoctor.sysroot import LiveSysRoot

    class NoPci(LiveSysRoot):
        def listdir(self, path):
            if path.startswith("/sys/bus/pci"):
                raise Missing(f"{path}: permission denied")
            return super().listdir(path)

    ctx = CheckContext(Options(), time.monotonic() + 30)
    assert gpu_nvidia.collect(NoPci(), ctx)["gpus"] == []
    assert gpu_amd.collect(NoPci(), ctx)["gpus"] == []
