"""lspci and lshw as users paste them (tests/fixtures/pastes/SOURCES.md), and the PCI bus read from
sysfs (tests/fixtures/pci_sysfs/README.md): the GPUs on the bus and the driver bound to each."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import FIXTURES, NODES, report_of
from hpcdoctor import pipeline
from hpcdoctor.facts import Unknown
from hpcdoctor.parse import lshw, lspci
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot

PASTES = FIXTURES / "pastes"
TICKETS_F = FIXTURES / "tickets_blind_f"
SYSFS = FIXTURES / "pci_sysfs" / "kvm-2core-no-gpu"


def _one(path, mod=lspci):
    (dev,) = mod.parse((PASTES / path).read_text())["devices"]
    return dev


def test_nnk_indented_gives_ids_name_driver_and_modules():
    d = _one("lspci-nnk-gtx1650-nvidia-bound.txt")  # the audio function (0403) is not a GPU
    assert (d["address"], d["class_id"], d["vendor"], d["vendor_id"], d["device_id"]) == (
        "0000:01:00.0", "0300", "nvidia", "10de", "1f91")
    assert d["name"] == "TU117M [GeForce GTX 1650 Mobile / Max-Q]" and d["rev"] == "a1"
    assert d["driver"] == "nvidia" and d["bound"] is True
    assert d["modules"] == ["nouveau", "nvidia_drm", "nvidia"]
    assert d["subsystem"] == "Hewlett-Packard Company Device [103c:85fc]"


def test_nnk_with_its_indentation_lost_reads_the_same():
    d = _one("lspci-nnk-rtx3080-unindented.txt")
    assert d["address"] == "0000:3e:00.0" and d["device_id"] == "2206" and d["name"] == "GA102 [GeForce RTX 3080]"
    assert d["driver"] == "nvidia" and d["modules"][0] == "nouveau"


def test_verbose_block_nouveau_bound():
    d = _one("lspci-vv-gtx970-nouveau-bound.txt")
    assert d["vendor"] == "nvidia" and d["device_id"] is None  # no -nn: no ids printed
    assert d["name"] == "GM204 [GeForce GTX 970]" and d["driver"] == "nouveau" and d["bound"] is True


def test_grep_filtered_driver_line_is_read():
    d = _one("lspci-k-grep-vfio-rtx3060.txt")
    assert d["driver"] == "vfio-pci" and d["name"] == "GA106 [GeForce RTX 3060 Lite Hash Rate]"


def test_plain_lspci_with_numeric_device_and_domain_leaves_the_driver_unknown():
    devs = lspci.parse((PASTES / "lspci-grep-nvidia-v100-nvrm-probe-cut.txt").read_text())["devices"]
    first = devs[0]
    assert first["address"] == "0000:5a:00.0" and first["class_id"] == "0302"
    assert (first["vendor"], first["vendor_id"], first["device_id"], first["name"]) == ("nvidia", "10de", "1db6", None)
    assert all(isinstance(d["bound"], Unknown) for d in devs)


def test_old_spelling_without_space_before_rev_and_grep_subsystems():
    devs = lspci.parse((PASTES / "lspci-vnn-grep-gtx780ti-x3.txt").read_text())["devices"]
    assert [d["address"] for d in devs] == ["0000:01:00.0", "0000:02:00.0", "0000:03:00.0"]
    assert {d["device_id"] for d in devs} == {"100a"} and {d["rev"] for d in devs} == {"a1"}
    assert {d["name"] for d in devs} == {"GK110B [GeForce GTX 780 Ti]"}
    assert all(isinstance(d["bound"], Unknown) for d in devs)  # grep kept no kernel line


def test_verbose_block_cut_before_its_kernel_lines_is_unknown_not_unbound():
    d = _one("lspci-vvvv-quadro2000-pi5-cut.txt")
    assert d["name"] == "GF106GL [Quadro 2000]" and isinstance(d["bound"], Unknown)


def test_link_capability_and_status():
    d = _one("lspci-vv-gt730-link-2.5gts-blog.txt")
    assert d["link"] == {"speed_gts": 2.5, "width": 8, "max_speed_gts": 5.0, "max_width": 8, "downgraded": False}
    assert d["driver"] == "nvidia"


def test_verbose_with_driver_and_no_modules_line():
    d = _one("lspci-vnn-kata-gt1030-nvidia-bound.txt")
    assert d["device_id"] == "1d01" and d["driver"] == "nvidia" and d["modules"] is None


def test_accelerator_without_names():
    d = _one("lspci-vvv-tenstorrent-processing-accelerator-cut.txt")
    assert (d["class_id"], d["vendor_id"], d["device_id"], d["name"]) == ("1200", "1e52", "b140", None)
    assert d["vendor"] == "vendor 1e52"


def test_lshw_nouveau_from_the_ticket():
    d = _one(TICKETS_F / "nvidia-htop-23-nouveau-bound-no-nvidia-driver.txt", lshw)
    assert (d["address"], d["vendor"], d["name"], d["driver"], d["bound"]) == (
        "0000:03:00.0", "nvidia", "G98 [GeForce 9300 GS]", "nouveau", True)


def test_lshw_unclaimed_is_unbound_even_when_cut():
    d = _one("lshw-unclaimed-gtx1050ti-mobile-cut.txt", lshw)
    assert d["bound"] is False and d["driver"] is None and d["class_id"] == "0302"
    assert d["vendor"] is None  # the vendor line was cut off: not guessed


def test_lshw_two_displays_one_without_product():
    intel, nv = lshw.parse((PASTES / "lshw-display-i915-and-nvidia-no-product.txt").read_text())["devices"]
    assert intel["driver"] == "i915" and intel["address"] == "0000:00:02.0"
    assert nv["address"] == "0000:23:00.0" and nv["driver"] == "nvidia" and nv["vendor"] == "nvidia" and nv["name"] is None


@pytest.mark.parametrize("mod,text", [(lspci, ""), (lspci, "Kernel driver in use: nvidia\n"), (lshw, "display\n")])
def test_not_the_tool(mod, text):
    with pytest.raises(ValueError):
        mod.parse(text)


def _snapshot(tmp_path, sysfs):
    snap = tmp_path / "snap"
    (snap / "cmd").mkdir(parents=True)
    (snap / "cmd" / "index.json").write_text("[]")
    shutil.copytree(sysfs, snap / "fs" / "sys", dirs_exist_ok=True)
    return snap


def test_sysfs_of_a_machine_without_gpus(tmp_path):
    facts = pipeline.gather(ReplaySysRoot(_snapshot(tmp_path, SYSFS / "sys")), Options())["facts"]
    assert facts["pci"] == {"source": "sysfs", "gpus": []}


def test_sysfs_driver_from_uevent(tmp_path):
    # The H100 fixture's class, vendor and device files, with this machine's recorded uevents: the
    # host bridge's (no driver bound) and a virtio device's (DRIVER=virtio-pci).
    h100 = NODES / "h100-kvm-1gpu" / "fs" / "sys" / "bus" / "pci" / "devices" / "0000:00:06.0"
    snap = _snapshot(tmp_path, SYSFS / "sys")
    devices = snap / "fs" / "sys" / "bus" / "pci" / "devices"
    for addr, uevent_of in (("0000:00:00.0", "0000:00:00.0"), ("0000:00:01.0", "0000:00:01.0")):
        for name in ("class", "vendor", "device"):
            shutil.copy(h100 / name, devices / addr / name)
        assert (devices / addr / "uevent").read_text() == (SYSFS / "sys/bus/pci/devices" / uevent_of / "uevent").read_text()
    g = pipeline.gather(ReplaySysRoot(snap), Options())
    unbound, bound = g["facts"]["pci"]["gpus"]
    assert (unbound["address"], unbound["vendor"], unbound["device_id"], unbound["bound"]) == ("0000:00:00.0", "nvidia", "2330", False)
    assert bound["driver"] == "virtio-pci" and bound["bound"] is True


def test_check_names_the_gpu_no_driver_holds(tmp_path):
    h100 = NODES / "h100-kvm-1gpu" / "fs" / "sys" / "bus" / "pci" / "devices" / "0000:00:06.0"
    snap = _snapshot(tmp_path, SYSFS / "sys")
    for name in ("class", "vendor", "device"):
        shutil.copy(h100 / name, snap / "fs" / "sys" / "bus" / "pci" / "devices" / "0000:00:00.0" / name)
    doc = report_of("check", "--from", str(snap))
    (hit,) = [x for x in doc["findings"] if x["symbol"] == "gpu-driver-unusable"]
    assert hit["message"].startswith("NVIDIA GPU at 0000:00:00.0 has no kernel driver bound") and "(from sysfs)" in hit["message"]
    assert hit["subject"] == "GPU at 0000:00:00.0" and "modprobe nvidia" in hit["fix"]


def test_recorded_snapshot_without_uevent_leaves_the_driver_unknown():
    g = pipeline.gather(ReplaySysRoot(NODES / "h100-kvm-1gpu"), Options())
    (d,) = g["facts"]["pci"]["gpus"]
    assert d["address"] == "0000:00:06.0" and d["bound"] is None
    assert "uevent" in g["unknown"]["pci.gpus.0.bound"]


def test_pasted_lspci_replayed(tmp_path):
    snap = tmp_path / "snap"
    (snap / "cmd").mkdir(parents=True)
    shutil.copy(PASTES / "lspci-vv-gtx970-nouveau-bound.txt", snap / "cmd" / "lspci.txt")
    (snap / "cmd" / "index.json").write_text(json.dumps([{"argv": ["lspci"], "rc": 0, "stdout": "lspci.txt", "stderr": ""}]))
    pci = pipeline.gather(ReplaySysRoot(snap), Options())["facts"]["pci"]
    assert pci["source"] == "lspci" and pci["gpus"][0]["driver"] == "nouveau"
