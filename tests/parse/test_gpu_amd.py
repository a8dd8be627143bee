"""AMD GPU facts from real amd-smi and rocm-smi outputs (see fixtures/public/SOURCES.md)."""

from __future__ import annotations

import json
import shutil

from conftest import PUBLIC
from hpcdoctor import pipeline
from hpcdoctor.facts import Unknown
from hpcdoctor.parse import amdsmi
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot

AMD = PUBLIC / "amd"


def test_amdsmi_static_rocm7_root():
    d = amdsmi.parse_amdsmi_static((AMD / "delai_8xMI300X_amd-smi_static_json_root.json").read_text())
    assert len(d["gpus"]) == 8
    g = d["gpus"][0]
    assert g["name"] == "AMD Instinct MI300X" and g["gfx_target"] == "gfx942"
    assert g["memory_total_mib"] == 196592 and g["pcie_gen_max"] == 5 and g["pcie_width_max"] == 16
    assert g["ecc_enabled"] is True and d["driver_version"] == "6.16.13"


def test_amdsmi_static_behind_nonroot_banner():
    d = amdsmi.parse_amdsmi_static((AMD / "delai_8xMI300X_amd-smi_static_json_nonroot_banner.txt").read_text())
    assert len(d["gpus"]) == 8
    g = d["gpus"][0]
    assert isinstance(g["name"], Unknown) and "N/A" in g["name"].reason  # not invented
    assert g["pci_bus_id"] == "0000:1b:00.0"


def test_amdsmi_version():
    v = amdsmi.parse_amdsmi_version((AMD / "delai_amd-smi_version_json_root.json").read_text())
    assert v["rocm_version"] == "7.2.1"


def test_rocm_smi_json_mi100_nodes():
    six = amdsmi.parse_rocm_smi_json((AMD / "telegraf_rocm-smi_json_6xMI100_rocm571.json").read_text())
    four = amdsmi.parse_rocm_smi_json((AMD / "telegraf_rocm-smi_json_4xMI100_rocm602.json").read_text())
    assert len(six["gpus"]) == 6 and len(four["gpus"]) == 4
    assert six["gpus"][0]["memory_total_mib"] == 34342961152 // (1024 * 1024)
    assert six["gpus"][0]["pcie_gen"] == 3 and four["gpus"][0]["pcie_gen"] == 4
    assert four["gpus"][0]["numa_node_reported"] == 1


def test_amd_node_replay(tmp_path):
    snap = tmp_path / "mi300x"
    (snap / "cmd").mkdir(parents=True)
    shutil.copy(AMD / "delai_8xMI300X_amd-smi_static_json_root.json", snap / "cmd" / "static.txt")
    shutil.copy(AMD / "delai_amd-smi_version_json_root.json", snap / "cmd" / "version.txt")
    (snap / "cmd" / "index.json").write_text(json.dumps([
        {"argv": ["amd-smi", "static", "--json"], "rc": 0, "stdout": "static.txt", "stderr": ""},
        {"argv": ["amd-smi", "version", "--json"], "rc": 0, "stdout": "version.txt", "stderr": ""},
        {"argv": ["nvidia-smi", "-q", "-x"], "rc": 127, "stdout": None, "stderr": "command not found"},
    ]))
    g = pipeline.gather(ReplaySysRoot(snap), Options())
    gpus = g["facts"]["gpus"]
    assert len(gpus) == 8 and {x["sku"] for x in gpus} == {"mi300x"}
    amd = g["facts"]["amd"]
    assert amd["packages"] == 8 and amd["devices"] == 8 and amd["rocm_version"] == "7.2.1"


def test_garbage_is_refused():
    import pytest

    for bad in ("", "Permission needed\n", "[1, 2"):
        with pytest.raises(ValueError):
            amdsmi.parse_amdsmi_static(bad)


class FakeAmdSmi:
    """amdsmi's Python interface answering with the values of the real 8x MI300X amd-smi static
    --json recording; pcie_info fails the way a VF guest can."""

    class AmdSmiException(Exception):
        pass

    def __init__(self, data):
        self.gpus = data["gpu_data"]

    def amdsmi_init(self):
        pass

    def amdsmi_shut_down(self):
        pass

    def amdsmi_get_processor_handles(self):
        return list(range(len(self.gpus)))

    def amdsmi_get_gpu_asic_info(self, h):
        return self.gpus[h]["asic"]

    def amdsmi_get_gpu_device_bdf(self, h):
        return self.gpus[h]["bus"]["bdf"]

    def amdsmi_get_pcie_info(self, h):
        raise self.AmdSmiException("AMDSMI_STATUS_NOT_SUPPORTED")

    def amdsmi_get_gpu_vram_info(self, h):
        return {"vram_size": self.gpus[h]["vram"]["size"]["value"]}

    def amdsmi_get_gpu_driver_info(self, h):
        return {"driver_name": "amdgpu", "driver_version": self.gpus[h]["driver"]["version"]}

    def amdsmi_get_gpu_board_info(self, h):
        return self.gpus[h]["board"]

    def amdsmi_get_gpu_total_ecc_count(self, h):
        return {"correctable_count": 0, "uncorrectable_count": 2 if h == 3 else 0}


def test_amdsmi_api_agrees_with_the_json_of_the_same_node():
    from hpcdoctor.probes import amdsmi_api

    raw = json.loads((AMD / "delai_8xMI300X_amd-smi_static_json_root.json").read_text())
    data = amdsmi_api._query(FakeAmdSmi(raw), FakeAmdSmi.AmdSmiException)
    json.dumps(data)  # storable as a snapshot probe
    api = amdsmi.normalise_static(data)["gpus"]
    ref = amdsmi.parse_amdsmi_static((AMD / "delai_8xMI300X_amd-smi_static_json_root.json").read_text())["gpus"]
    for a, r in zip(api, ref):
        for key in ("name", "gfx_target", "pci_bus_id", "memory_total_mib", "serial", "driver_version"):
            assert a[key] == r[key], key
    assert isinstance(api[0]["pcie_gen_max"], Unknown)  # the failed call is Unknown, not invented
    assert api[3]["ecc_uncorrectable_volatile"] == 2


def test_amdsmi_missing_is_a_reason():
    from hpcdoctor.probes import amdsmi_api
    from hpcdoctor.sysroot import Missing
    import pytest

    with pytest.raises(Missing, match="amdsmi cannot be imported"):
        amdsmi_api.query()


def test_mi250x_gcd_accounting(tmp_path):
    """No public recording of an MI250X node was found; this takes the real 4x MI100 rocm-smi
    --json recording's structure, renames the model to MI250X and lists 8 devices, as rocm-smi
    lists one per GCD on a 4-package LUMI-G node. Only the accounting is under test here."""
    data = json.loads((AMD / "telegraf_rocm-smi_json_4xMI100_rocm602.json").read_text())
    cards = {}
    for i in range(8):
        card = dict(data["card0"])
        card["Card series"] = "AMD Instinct MI250X"
        card["VRAM Total Memory (B)"] = str(64 * 1024 ** 3)
        cards[f"card{i}"] = card
    snap = tmp_path / "lumi"
    (snap / "cmd").mkdir(parents=True)
    (snap / "cmd" / "r.txt").write_text(json.dumps(dict(cards, system=data["system"])))
    (snap / "cmd" / "index.json").write_text(json.dumps([
        {"argv": ["rocm-smi", "--showallinfo", "--json"], "rc": 0, "stdout": "r.txt"},
        {"argv": ["amd-smi", "static", "--json"], "rc": 127, "stdout": None}]))
    g = pipeline.gather(ReplaySysRoot(snap), Options())
    assert len(g["facts"]["gpus"]) == 8 and g["facts"]["amd"]["packages"] == 4
    assert {x["gcds_per_package"] for x in g["facts"]["gpus"]} == {2}
    assert {x["memory_total_mib"] for x in g["facts"]["gpus"]} == {64 * 1024}
