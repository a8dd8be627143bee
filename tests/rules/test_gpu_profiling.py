"""gpu-profiling-restricted-to-admins on real pastes (tests/fixtures/pastes/SOURCES.md): Nsight Compute's
ERR_NVGPUCTRPERM, CUPTI's CUPTI_ERROR_INSUFFICIENT_PRIVILEGES by name and as likwid's bare number, a
pasted /proc/driver/nvidia/params line, and kineto's conditional hint that names the code without it."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, recorded_paste_facts, run_rule, told_facts, told_paste_facts

T = "../tickets_blind_t/"   # set T, unsealed: recorded_paste_facts reads fixtures/pastes/<name>


@pytest.mark.parametrize("paste, quoted", [
    ("deepgemm-46-ncu-err-nvgpuctrperm.txt", "ERR_NVGPUCTRPERM - The user does not have permission to access"),
    ("habitat-5-cupti-insufficient-privileges-container.txt", "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
    # set T, unsealed: nvprof's own sentence, and likwid 5.1's bare CUPTI number
    (T + "machine-shop-maintenance-11-gpu-profiling-counters-admin-only.txt", "does not have permission to profile"),
    (T + "likwid-347-cupti-insufficient-privileges-counters.txt", "CUPTI's result 35 is CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"),
])
def test_a_refused_profiler_is_an_error(paste, quoted):
    (f,) = fired("gpu-profiling-restricted-to-admins", recorded_paste_facts(paste))
    assert f.severity == "error" and quoted in f.message
    assert "NVreg_RestrictProfilingToAdminUsers=0" in f.fix and "/proc/driver/nvidia/params" in f.fix


def test_likwid_bare_cupti_number_is_decoded():
    # RRZE-HPC/likwid#347: likwid 5.1 prints CUPTI's result as a number, on a line naming the CUPTI call
    text = "Error: function (*cuptiProfilerBeginSessionPtr)(&beginSessionParams) failed with error 35.\n"
    (f,) = fired("gpu-profiling-restricted-to-admins", told_facts(text))
    assert f.severity == "error" and "CUPTI's result 35 is CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" in f.message


def test_the_driver_setting_alone_is_info():
    (f,) = fired("gpu-profiling-restricted-to-admins", told_paste_facts("pynvml-19-rm-profiling-admin-only-params.txt"))
    assert f.severity == "info" and "RmProfilingAdminOnly: 1" in f.message


def test_kineto_hint_that_names_the_code_is_silent():
    # kineto prints "If you see CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, refer to ..." after any CUPTI failure
    # (here CUPTI_ERROR_NOT_INITIALIZED, a library path problem): no privilege was refused
    findings, _ = run_rule("gpu-profiling-restricted-to-admins", told_paste_facts("pytorch-118982-kineto-cupti-not-initialized-hint.txt"))
    assert findings == []


def test_a_permitted_driver_setting_is_silent():
    # the recorded H100 node's own value
    assert not fired("gpu-profiling-restricted-to-admins", told_facts("RmProfilingAdminOnly: 0\n"))


def test_live_admin_only_params_for_a_user_is_info(tmp_path):
    from rulekit import facts, file_facts

    # the recorded H100 node's params say 0: read as False, and nothing fires
    g = file_facts(tmp_path, {"/proc/driver/nvidia/params": (FIXTURES / "nodes" / "h100-kvm-1gpu" / "fs" / "proc" / "driver"
                                                              / "nvidia" / "params").read_text()})
    assert g["facts"]["system"]["nvidia_profiling_admin_only"] is False
    (f,) = fired("gpu-profiling-restricted-to-admins", facts("h100-kvm-1gpu", **{"system.nvidia_profiling_admin_only": True, "devices.euid": 1000}))
    assert f.severity == "info" and "RmProfilingAdminOnly: 1" in f.message
    root = facts("h100-kvm-1gpu", **{"system.nvidia_profiling_admin_only": True, "devices.euid": 0})
    assert not fired("gpu-profiling-restricted-to-admins", root)


def test_a_node_with_no_nvidia_gpu_has_nothing_to_profile():
    # the recorded CPU node has no NVIDIA driver, so no params file: judged (no GPU to profile), not skipped
    from rulekit import facts

    assert not fired("gpu-profiling-restricted-to-admins", facts("cpu-kvm-2core"))
