"""GPU045 amd-gpu-not-enumerated: rocm-smi, amd-smi and rocminfo saying they see no AMD GPU, on verbatim
lines of real public threads (tests/fixtures/pastes), read through the real paste path; and the near
misses where the same words come from a working node."""

from __future__ import annotations

from pathlib import Path

from rulekit import PASTES, fired, paste_facts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _paste(tmp_path, path):
    return paste_facts(tmp_path, Path(path).read_text(encoding="utf-8"))


def test_no_amd_gpus_specified_on_a_named_v620_is_an_error(tmp_path):
    # rocminfo's "ROCk module is loaded" after modprobe answers its module check, not rocm-smi's
    # "No AMD GPUs specified", which comes after the module was found live
    (hit,) = fired("amd-gpu-not-enumerated", _paste(tmp_path, PASTES / "legacy-rocm-build-2995-v620-no-amd-gpus-specified.txt"))
    assert hit.severity == "error" and "V620" in hit.message and "No AMD GPUs specified" in hit.message
    assert "lsmod | grep -w amdgpu" in hit.fix and "--device=/dev/kfd --device=/dev/dri" in hit.fix


def test_driver_not_initialized_on_a_named_mi210_is_an_error(tmp_path):
    (hit,) = fired("amd-gpu-not-enumerated", _paste(tmp_path, PASTES / "legacy-rocm-build-4098-mi210-rock-module-not-loaded.txt"))
    assert hit.severity == "error" and "MI210X" in hit.message and "not loaded" in hit.message


def test_module_checks_with_no_gpu_named_are_a_warning(tmp_path):
    for name in ("rocm-1498-rocminfo-rocm-smi-no-amdgpu.txt", "rocm-2767-rocm-smi-amdgpu-initstate-missing.txt"):
        (hit,) = fired("amd-gpu-not-enumerated", _paste(tmp_path, PASTES / name))
        assert hit.severity == "warning", name


def test_amd_smi_no_gpu_devices_line(tmp_path):
    # amd-smi's line as ROCm/amdsmi#172 shows it, without that thread's built-in kernel
    text = "ERROR:root:Unable to detect any GPU devices, check amdgpu version and module status (sudo modprobe amdgpu)\n"
    (hit,) = fired("amd-gpu-not-enumerated", paste_facts(tmp_path, text))
    assert hit.severity == "warning" and "no AMD GPU is visible" in hit.message


def test_amdgpu_built_into_the_kernel_is_not_fired(tmp_path):
    # healthy controls of blind sets G and U: the module checks misread a built-in amdgpu
    for path in (FIXTURES / "tickets_blind_g/rocminfo-42-builtin-amdgpu-lsmod-check-healthy.txt",
                 FIXTURES / "tickets_blind_u/amdsmi-172-amdgpu-built-into-kernel-healthy.txt"):
        assert not fired("amd-gpu-not-enumerated", _paste(tmp_path, path)), path.name


def test_kfd_opened_answers_the_module_check(tmp_path):
    assert not fired("amd-gpu-not-enumerated", _paste(tmp_path, PASTES / "legacy-rocm-build-1227-rocminfo-kfd-opened.txt"))


def test_an_nvidia_allocation_polled_by_rocm_smi_is_not_fired(tmp_path):
    assert not fired("amd-gpu-not-enumerated", _paste(tmp_path, PASTES / "wandb-6757-rocm-smi-on-nvidia-allocation.txt"))


def test_a_healthy_rocminfo_header_is_not_fired(tmp_path):
    assert not fired("amd-gpu-not-enumerated", _paste(tmp_path, PASTES / "sd-rocm-1-rocminfo-module-loaded-healthy.txt"))


def test_rocm_smi_verbose_status_and_library_status_are_read(tmp_path):
    # rocm-smi's printLog line and rsmi_status_string's text, filled in from the emitters' own formats
    text = ("GPU[0]\t\t: get_power_cap, Permission denied\n"
            "RSMI_STATUS_PERMISSION: The user ID of the calling process does not have sufficient permission to execute a command.\n")
    ids = {s["id"] for s in paste_facts(tmp_path, text)["facts"]["ticket"]["symptoms"]}
    assert {"rocm_smi_cli:verbose-permission", "rocm_smi:RSMI_STATUS_PERMISSION"} <= ids
    # a healthy rocm-smi -a prints this for every metric the GPU does not offer: not read as a failure
    from hpcdoctor.triage.messages import find_messages
    assert find_messages("GPU[0]\t\t: get_power_cap, Not supported on the given system\n", ["rocm_smi_cli"]) == []
    assert not fired("amd-gpu-not-enumerated", paste_facts(tmp_path, text))
