"""compute-mode-restricted from molecular dynamics engines' own refusals (md_engines.toml), on set S's
ticket (OpenMM#2840) and other real public pastes (tests/fixtures/pastes/SOURCES.md): OpenMM's words are
only consistent with an exclusive or prohibited GPU (info, naming the compute mode check); CUDA's own
"busy or unavailable" states it."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts, run_rule, told_facts


def test_set_s_openmm_tests_on_a_cluster_are_info_with_the_mode_check(tmp_path):
    text = (FIXTURES / "tickets_blind_s" / "openmm-2840-gpus-in-exclusive-process-mode.txt").read_text(encoding="utf-8")
    (f,) = fired("compute-mode-restricted", paste_facts(tmp_path, text, "openmm-2840.txt"))
    assert f.severity == "info" and "OpenMM could not create a CUDA context on any GPU" in f.message
    assert "Exclusive_Process" in f.message and "no free memory" in f.message
    assert "nvidia-smi --query-gpu=index,compute_mode" in f.fix


def test_openmm_test_runs_name_the_requested_device_first():
    (f,) = fired("compute-mode-restricted", recorded_paste_facts("openmm-3518-cuda-tests-no-compatible-device.txt"))
    assert f.severity == "info" and "the GPU its DeviceIndex names" in f.message
    assert f.evidence["ticket.line"] == 4


def test_openmm_in_the_users_sentence_is_info():
    (f,) = fired("compute-mode-restricted", recorded_paste_facts("openmm-3781-no-compatible-device-intermittent.txt"))
    assert f.severity == "info"


def test_cudas_busy_is_chosen_before_openmms_sentence():
    # cuda.toml's entry (CUDA 11.8+ cudaGetErrorString of cudaErrorDevicesUnavailable) beside OpenMM's line
    text = ("openmm.OpenMMException: No compatible CUDA device is available\n"
            "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n")
    (f,) = fired("compute-mode-restricted", told_facts(text))
    assert f.severity == "warning" and "busy or unavailable" in f.message


def test_gromacs_status_unavailable_is_a_warning():
    # GROMACS device_management.cu's format (catalogue example): the status is DeviceStatus::Unavailable
    (f,) = fired("compute-mode-restricted", told_facts("  #0: NVIDIA Tesla K80, compute cap.: 3.7, ECC: yes, stat: unavailable\n"))
    assert f.severity == "warning" and "GROMACS found a GPU busy or unavailable" in f.message


def test_gromacs_compatible_gpu_and_openmm_ptx_error_are_silent():
    findings, _ = run_rule("compute-mode-restricted",
                           told_facts("  #0: NVIDIA Tesla K80, compute cap.: 3.7, ECC: yes, stat: compatible\n"))
    assert findings == []
    findings, _ = run_rule("compute-mode-restricted", recorded_paste_facts("immunebuilder-13-openmm-unsupported-ptx.txt"))
    assert findings == []
