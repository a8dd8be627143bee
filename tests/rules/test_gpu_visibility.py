"""no-gpu-visible and gpu-index-beyond-visible on the emitters' own output recorded on an H100
(tests/fixtures/emitters_gpu), on pastes from the field (tests/fixtures/pastes/SOURCES.md), and
live: the job's CUDA_VISIBLE_DEVICES against the recorded nodes' GPUs, by the CUDA C++ Programming
Guide's rules for the variable (indices, UUID prefixes; CUDA stops at the first entry that names
no GPU)."""

from __future__ import annotations

import pytest

from conftest import NODES
from rulekit import facts, fired, paste_facts, recorded_paste_facts, run_rule, with_env

EMITTERS = NODES.parent / "emitters_gpu"
H100_UUID = "GPU-86f287cf-22ec-dea2-9d9b-34e9c1e9fe66"  # tests/fixtures/nodes/h100-kvm-1gpu's GPU


def _emitted(tmp_path, name):
    return paste_facts(tmp_path, (EMITTERS / f"{name}.txt").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name, quoted", [
    ("h100-torch-visible-devices-empty", "No CUDA GPUs are available"),
    ("h100-torch-visible-devices-bad-uuid", "No CUDA GPUs are available"),
    ("h100-jax-visible-devices-empty", "CUDA_ERROR_NO_DEVICE"),
])
def test_the_emitters_words_for_no_gpu_are_quoted_at_info(tmp_path, name, quoted):
    (f,) = fired("no-gpu-visible", _emitted(tmp_path, name))
    assert f.severity == "info" and quoted in f.message and "saw no GPU" in f.message
    assert "nvidia-smi -L" in f.fix and "CUDA_VISIBLE_DEVICES" in f.fix and "--gpus" in f.fix


def test_a_field_paste_of_no_gpu_is_read():
    # jiaw-z/CoR-GS#23: the run script's CUDA_VISIBLE_DEVICES hid the one GPU
    (f,) = fired("no-gpu-visible", recorded_paste_facts("cor-gs-23-no-cuda-gpus-set-device-healthy.txt"))
    assert f.severity == "info" and "No CUDA GPUs are available" in f.message


def test_the_emitters_invalid_ordinal_is_quoted_at_info(tmp_path):
    (f,) = fired("gpu-index-beyond-visible", _emitted(tmp_path, "h100-torch-invalid-ordinal"))
    assert f.severity == "info" and "invalid device ordinal" in f.message
    assert "device_count()" in f.fix and "LOCAL_RANK" in f.fix


def test_a_field_paste_of_an_index_past_the_gpus_is_read():
    # LuyaooChen/uninformed-students-pytorch#3: cuda:1 hard-coded on a one-GPU machine
    (f,) = fired("gpu-index-beyond-visible",
                 recorded_paste_facts("uninformed-students-3-invalid-ordinal-cuda1-healthy.txt"))
    assert f.severity == "info" and "line 16" in f.message


@pytest.mark.parametrize("name", ["h100-torch-healthy", "h100-torch-device-assert", "h100-torch-oom",
                                  "h100-cupy-illegal-address", "h100-nvidia-smi"])
def test_silent_on_healthy_runs_and_application_faults(tmp_path, name):
    g = _emitted(tmp_path, name)
    for symbol in ("no-gpu-visible", "gpu-index-beyond-visible"):
        assert not run_rule(symbol, g)[0], (symbol, name)


def test_the_index_rule_is_silent_on_no_gpu_and_the_other_way(tmp_path):
    assert not fired("gpu-index-beyond-visible", _emitted(tmp_path, "h100-torch-visible-devices-empty"))
    assert not run_rule("no-gpu-visible", _emitted(tmp_path, "h100-torch-invalid-ordinal"))[0]


def test_a_slurm_job_without_gpus_is_left_to_its_own_rule(tmp_path):
    # Constructed to test the rule's logic: the recorded torch line under a Slurm step that asked for
    # no GPU, which slurm-job-without-gpus answers (one cause, one finding).
    text = "srun -N1 python train.py\n" + (EMITTERS / "h100-torch-visible-devices-empty.txt").read_text()
    g = paste_facts(tmp_path, text)
    assert fired("slurm-job-without-gpus", g)
    assert not run_rule("no-gpu-visible", g)[0]


# -- live: the job's variable against the node's GPUs -------------------------------------------

@pytest.mark.parametrize("value", ["", "-1", "NoDevFiles", "1", "GPU-00000000-0000-0000-0000-000000000000", "0,0"])
def test_a_variable_that_leaves_no_gpu_is_an_error(value):
    (f,) = fired("no-gpu-visible", with_env("h100-kvm-1gpu", {"CUDA_VISIBLE_DEVICES": value}))
    assert f.severity == "error" and "sees no GPU" in f.message
    assert "NVIDIA H100 80GB HBM3" in f.message and H100_UUID in f.message
    assert f.evidence["env.vars.CUDA_VISIBLE_DEVICES"] == value


@pytest.mark.parametrize("value", ["0", "GPU-86f287cf", H100_UUID, "0,-1", "0,7"])
def test_a_variable_that_names_the_gpu_is_silent(value):
    assert not fired("no-gpu-visible", with_env("h100-kvm-1gpu", {"CUDA_VISIBLE_DEVICES": value}))


def test_the_recorded_nodes_as_they_are_are_silent():
    for node in ("h100-kvm-1gpu", "h100-fc-1gpu-quick-2026-11-27", "h200-fc-1gpu-quick-idle", "cpu-kvm-2core"):
        assert not fired("no-gpu-visible", facts(node)), node


def test_an_entry_that_hides_the_gpus_after_it_is_a_warning():
    g = facts("h100-kvm-1gpu")
    second = dict(g["facts"]["gpus"][0], index=1, uuid="GPU-11111111-2222-3333-4444-555555555555")
    g["facts"]["gpus"].append(second)
    g["facts"]["env"]["vars"]["CUDA_VISIBLE_DEVICES"] = "0,-1,1"
    (f,) = fired("no-gpu-visible", g)
    assert f.severity == "warning" and "'-1'" in f.message and "1 of the node's 2" in f.message


def test_what_the_facts_cannot_judge_is_not_judged():
    # a MIG instance, and a UUID on a snapshot whose UUIDs were redacted
    assert not fired("no-gpu-visible", with_env("h100-kvm-1gpu", {"CUDA_VISIBLE_DEVICES": "MIG-GPU-86f287cf/1/0"}))
    assert not fired("no-gpu-visible", with_env("h100-fc-1gpu-quick-2026-11-27",
                                                {"CUDA_VISIBLE_DEVICES": "GPU-00000000"}))


def test_rocm_indices_past_the_amd_gpus_are_an_error():
    # Constructed: the recorded node's GPU taken as an AMD one, to hold the ROCm branch's logic
    g = with_env("h100-kvm-1gpu", {"ROCR_VISIBLE_DEVICES": "2,3"})
    g["facts"]["gpus"][0]["vendor"] = "amd"
    (f,) = fired("no-gpu-visible", g)
    assert f.severity == "error" and "ROCR_VISIBLE_DEVICES='2,3'" in f.message
    g["facts"]["env"]["vars"]["ROCR_VISIBLE_DEVICES"] = "0"
    assert not fired("no-gpu-visible", g)


def test_a_snapshot_without_an_environment_is_skipped_with_its_reason(tmp_path):
    g = paste_facts(tmp_path, (EMITTERS / "h100-torch-healthy.txt").read_text())
    findings, skipped = run_rule("no-gpu-visible", g)
    assert findings == [] and skipped and "env.vars" in skipped[0]["reason"]


def test_rocblas_seeing_no_device_is_quoted_at_info():
    # Alpaca#585: rocBLAS's own "No devices found" (hipGetDeviceCount failed): HIP saw no GPU, and the
    # paste does not say why, so the words are quoted at info and no cause is named
    (f,) = fired("no-gpu-visible", recorded_paste_facts("alpaca-585-tensile-host-no-devices.txt"))
    assert f.severity == "info" and "line 1:" in f.message and "No devices found" in f.message
    assert "do not say why" in f.message and "nvidia-smi -L" in f.fix


def test_a_checkpoint_saved_on_a_gpu_index_the_process_lacks():
    # CaricatureFace#2: torch.load of storages saved on cuda:1 where the process sees one GPU
    (f,) = fired("gpu-index-beyond-visible", recorded_paste_facts("caricatureface-2-deserialize-on-cuda-device-1.txt"))
    assert f.severity == "info" and "line 18:" in f.message and "CUDA device 1" in f.message
    assert "device_count()" in f.fix
    # one GPU is visible: the index is past it, and "no GPU" is not what the line says
    findings, _skipped = run_rule("no-gpu-visible", recorded_paste_facts("caricatureface-2-deserialize-on-cuda-device-1.txt"))
    assert findings == []


# --- PyTorch Lightning's device selection (knowledge/messages/lightning.toml) ----------------------

def test_lightning_gpus_asked_past_those_seen_names_both():
    # https://github.com/xiong-zhitong/DOFA-pytorch/issues/20: the message spans two lines
    (f,) = fired("gpu-index-beyond-visible", recorded_paste_facts("dofa-pytorch-20-lightning-gpu-1-not-visible.txt"))
    assert "GPU indexes [0, 1] and this process sees [0]" in f.message and "line 6" in f.message
    assert "CUDA_VISIBLE_DEVICES" in f.fix and "--gres=gpu:2" in f.fix


def test_lightning_find_usable_devices_count(tmp_path):
    # the f-string of lightning/fabric/accelerators/cuda.py @ 2.6.5 line 111, filled in (no public paste found)
    text = "ValueError: You requested to find 4 devices but this machine only has 2 GPUs.\n"
    (f,) = fired("gpu-index-beyond-visible", paste_facts(tmp_path, text))
    assert "4 GPUs and this process sees 2" in f.message


def test_lightning_devices_zero_and_mps_are_not_an_index_past_the_gpus(tmp_path):
    # the f-strings of accelerator_connector.py @ 2.6.5 lines 326 and 357-360, filled in
    for text in ("MisconfigurationException: `Trainer(devices=0)` value is not a valid input using cuda accelerator.\n",
                 "MisconfigurationException: `MPSAccelerator` can not run on your system since the accelerator is not "
                 "available. The following accelerator(s) is available and can be passed into `accelerator` argument "
                 "of `Trainer`: ['cpu'].\n"):
        assert not fired("gpu-index-beyond-visible", paste_facts(tmp_path, text))
        assert not run_rule("no-gpu-visible", paste_facts(tmp_path, text))[0]


def test_lightning_cuda_accelerator_unavailable_is_no_gpu_at_info(tmp_path):
    text = ("lightning.fabric.utilities.exceptions.MisconfigurationException: `CUDAAccelerator` can not run on your "
            "system since the accelerator is not available. The following accelerator(s) is available and can be "
            "passed into `accelerator` argument of `Trainer`: ['cpu'].\n")
    (f,) = fired("no-gpu-visible", paste_facts(tmp_path, text))
    assert f.severity == "info"
