"""gpu-driver-unusable on AMD nodes: ROCm's tools saying the amdgpu kernel driver is not loaded
(rocminfo, rocm-smi, amd-smi), on verbatim lines of real public threads (tests/fixtures/pastes), read
through the real paste path."""

from __future__ import annotations

from rulekit import PASTES, fired, paste_facts


def _paste(tmp_path, name):
    return paste_facts(tmp_path, (PASTES / name).read_text(encoding="utf-8"))


def test_rocminfo_and_rocm_smi_without_amdgpu_are_the_driver_not_loaded(tmp_path):
    hits = fired("gpu-driver-unusable", _paste(tmp_path, "rocm-1498-rocminfo-rocm-smi-no-amdgpu.txt"))
    assert len(hits) == 1
    hit = hits[0]
    assert "amdgpu kernel driver is not loaded" in hit.message
    assert "ROCk module is NOT loaded" in hit.message   # the line quoted
    for step in ("lsmod | grep amdgpu", "sudo modprobe amdgpu", "dmesg | grep -i amdgpu | tail",
                 "--device /dev/kfd --device /dev/dri"):
        assert step in hit.fix
    assert "nvidia" not in hit.fix.lower()


def test_rocm_smi_alone_is_the_driver_not_loaded(tmp_path):
    hits = fired("gpu-driver-unusable", _paste(tmp_path, "rocm-2767-rocm-smi-amdgpu-initstate-missing.txt"))
    assert hits and "amdgpu not found in modules" in hits[0].message


def test_amd_smi_status_driver_not_loaded(tmp_path):
    # amd-smi's exception text (amdsmi_exception.py's format, filled in: no public paste found)
    text = "amdsmi.amdsmi_exception.AmdSmiLibraryException: Error code:\n\t34 | AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded\n"
    assert fired("gpu-driver-unusable", paste_facts(tmp_path, text))


def test_a_healthy_rocminfo_listing_is_not_the_driver(tmp_path):
    assert not fired("gpu-driver-unusable", _paste(tmp_path, "sd-rocm-1-rocminfo-module-loaded-healthy.txt"))
