"""PaddlePaddle's own CUDA and cuDNN version warnings (knowledge/messages/paddle.toml) on public pastes
(tests/fixtures/pastes, SOURCES.md there): cudnn-version-mismatch and driver-too-old, fired only where the
version found is the older."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def pasted_text(text: str):
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


@pytest.mark.parametrize("name, built, loaded", [("paddleclas-2395-paddle-built-cudnn-84-finds-82.txt", "8.4", "8.2"),
                                                 ("paddle-23922-conda-cudnn-73-paddle-built-76.txt", "7.6", "7.3")])
def test_paddle_built_with_a_newer_cudnn_than_it_loads(name, built, loaded):
    (f,) = fired("cudnn-version-mismatch", recorded_paste_facts(name))
    assert f"built with cuDNN {built} and loaded cuDNN {loaded}" in f.message
    assert "ldconfig -p | grep libcudnn" in f.fix


def test_a_retold_warning_with_equal_versions_is_no_mismatch():
    # a README's retelling (the words of the warning, versions equal): Paddle itself never prints it so
    text = "**Symptom:** `WARNING: The installed Paddle is compiled with CUDNN 8.9, but CUDNN version in your machine is 8.9`\n"
    assert [s["id"] for s in find_messages(text)] == ["paddle:cudnn-older-than-built"]
    assert not fired("cudnn-version-mismatch", pasted_text(text))


def test_cudnn_9_as_paddle_2_printed_it():
    # paddle/fluid/platform/device_context.cc's format (CUDNN_VERSION / 100 as X.Y) filled in by hpcdoctor: 9.1 built, 9.0 loaded
    text = ("WARNING: device: 0. The installed Paddle is compiled with CUDNN 90.1, but CUDNN version in your machine is 90.0, "
            "which may cause serious incompatible bug. Please recompile or reinstall Paddle with compatible CUDNN version.\n")
    (f,) = fired("cudnn-version-mismatch", pasted_text(text))
    assert "built with cuDNN 9.1 and loaded cuDNN 9.0" in f.message


def test_paddle_cuda_newer_than_the_drivers_same_major_is_a_warning():
    (f,) = fired("driver-too-old", recorded_paste_facts("paddleseg-3470-paddle-cuda-117-driver-114.txt"))
    assert f.severity == "warning" and "built with CUDA 11.7" in f.message and "driver's CUDA is 11.4" in f.message
    assert "driver's CUDA 11.4 and the runtime's 11.7" in f.message
    assert not fired("cudnn-version-mismatch", recorded_paste_facts("paddleseg-3470-paddle-cuda-117-driver-114.txt"))


def test_paddle_cuda_and_cudnn_majors_older_is_both():
    # gpu_resources.cc's InvalidArgument format filled in by hpcdoctor (no public paste found)
    text = ("InvalidArgumentError: The installed Paddle is compiled with CUDA12/cuDNN9,but CUDA/cuDNN version in your machine "
            "is CUDA11/cuDNN8. which will cause serious incompatible bug. Please recompile or reinstall Paddle with "
            "compatible CUDA/cuDNN version.\n")
    (d,) = fired("driver-too-old", pasted_text(text))
    assert d.severity == "error" and "another major" in d.message
    (c,) = fired("cudnn-version-mismatch", pasted_text(text))
    assert "another major" in c.message


def test_the_notes_alone_and_an_equal_cuda_fire_nothing():
    notes = ("W0522 14:19:26.351598   496 gpu_resources.cc:119] Please NOTE: device: 0, GPU Compute Capability: 8.6, "
             "Driver API Version: 12.2, Runtime API Version: 11.8\n"
             "W0522 14:19:26.352345   496 gpu_resources.cc:164] device: 0, cuDNN Version: 8.9.\n")
    ids = [s["id"] for s in find_messages(notes)]
    assert "paddle:device-properties" in ids and "paddle:cudnn-version-note" in ids
    assert not fired("driver-too-old", pasted_text(notes))
    assert not fired("cudnn-version-mismatch", pasted_text(notes))
    same = "The installed Paddle is compiled with CUDA 11.8, but CUDA runtime version in your machine is 11.8\n"
    assert not fired("driver-too-old", pasted_text(same))
