"""gpu-driver-unusable on AMD nodes: ROCm's tools saying the amdgpu kernel driver is not loaded
(rocminfo, rocm-smi, amd-smi), on verbatim lines of real public threads (tests/fixtures/pastes), read
through the real paste path."""

from __future__ import annotations

from rulekit import PASTES, fired, paste_facts


def _paste(tmp_path, name):
    return paste_facts(tmp_path, (PASTES / name).read_text(encoding="utf-8"))


def test_the_module_checks_alone_are_not_the_driver(tmp_path):
    # rocminfo's "ROCk module is NOT loaded" and rocm-smi's "amdgpu not found in modules" test for amdgpu
    # the module: a node without the driver (ROCm/ROCm#1498, #2767) and one with amdgpu built into the
    # kernel (blind sets G and U: ROCm/rocminfo#42, ROCm/amdsmi#172, healthy) print the same words
    from pathlib import Path
    fixtures = Path(__file__).resolve().parents[1] / "fixtures"
    for path in (PASTES / "rocm-1498-rocminfo-rocm-smi-no-amdgpu.txt",
                 PASTES / "rocm-2767-rocm-smi-amdgpu-initstate-missing.txt",
                 fixtures / "tickets_blind_g/rocminfo-42-builtin-amdgpu-lsmod-check-healthy.txt",
                 fixtures / "tickets_blind_u/amdsmi-172-amdgpu-built-into-kernel-healthy.txt"):
        g = paste_facts(tmp_path, path.read_text(encoding="utf-8"))
        assert not fired("gpu-driver-unusable", g), path.name
        read = [s for s in g["facts"]["ticket"]["symptoms"] if "built into the kernel" in str(s.get("means"))]
        assert read, path.name   # read, with what it may mean


def test_amd_smi_status_driver_not_loaded(tmp_path):
    # amd-smi's exception text (amdsmi_exception.py's format, filled in: no public paste found)
    text = "amdsmi.amdsmi_exception.AmdSmiLibraryException: Error code:\n\t34 | AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded\n"
    assert fired("gpu-driver-unusable", paste_facts(tmp_path, text))


def test_a_healthy_rocminfo_listing_is_not_the_driver(tmp_path):
    assert not fired("gpu-driver-unusable", _paste(tmp_path, "sd-rocm-1-rocminfo-module-loaded-healthy.txt"))
