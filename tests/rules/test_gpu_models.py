"""mixed-gpu-models-in-job on a recorded node's GPU facts with a second GPU of another model."""

from __future__ import annotations

import copy

from rulekit import _gathered, facts, fired


def _two_models(**changes):
    g = copy.deepcopy(_gathered("h100-kvm-1gpu"))["facts"]["gpus"][0]
    other = dict(g, index=1, name="NVIDIA A100-SXM4-40GB", uuid="GPU-0000-other", compute_capability="8.0")
    return facts("h100-kvm-1gpu", **{"gpus": [g, other], **changes})


def test_two_models_in_a_distributed_job_is_a_warning():
    (f,) = fired("mixed-gpu-models-in-job", _two_models(**{"env.vars.WORLD_SIZE": "2"}))
    assert f.severity == "warning" and "2 models" in f.message and "NVIDIA A100-SXM4-40GB: GPU 1" in f.message
    assert "waits for the slowest" in f.message
    assert "export CUDA_VISIBLE_DEVICES=" in f.fix and "--gres=gpu:TYPE:N" in f.fix


def test_two_models_and_no_sign_of_a_distributed_job_is_info():
    (f,) = fired("mixed-gpu-models-in-job", _two_models())
    assert f.severity == "info"


def test_cuda_visible_devices_that_hides_the_odd_gpu_silences_it():
    assert not fired("mixed-gpu-models-in-job", _two_models(**{"env.vars.CUDA_VISIBLE_DEVICES": "0",
                                                              "env.vars.WORLD_SIZE": "2"}))


def test_one_model_is_silent():
    assert not fired("mixed-gpu-models-in-job", facts("h100-kvm-1gpu"))
