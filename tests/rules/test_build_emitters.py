"""The torch/CUDA build rules read from more emitters of the same fact (issue 24): torch's
incompatible-device warning under the device names older drivers give (no "NVIDIA" prefix), and
the CUDA toolkit libraries that programs other than torch load (NPP, nvJPEG, cuSOLVERMg, cuTENSOR).
Every paste is a real public one (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from hpcdoctor.triage.messages import find_messages
from rulekit import PASTES, fired, recorded_paste_facts, run_rule, told_paste_facts


@pytest.mark.parametrize("paste, gpu, sm", [
    ("pytorch-57922-a100-sxm4-sm80-driver-name.txt", "A100-SXM4-40GB", "80"),
    ("d2go-103-a100-sxm-80gb-sm80.txt", "A100-SXM-80GB", "80"),
    ("nerfacc-80-rtx-a6000-sm86-driver-name.txt", "RTX A6000", "86"),
])
def test_torch_warning_under_a_driver_name_without_nvidia(paste, gpu, sm):
    text = (PASTES / paste).read_text(encoding="utf-8")
    (s,) = [s for s in find_messages(text) if s["id"] == "torch:gpu-arch-not-compatible"]
    assert s["gpu"] == gpu and s["sm"] == sm   # the device name alone, not the "UserWarning:" before it
    (f,) = fired("torch-missing-arch", recorded_paste_facts(paste))
    assert f.severity == "error" and f"sm_{sm}" in f.message + f.fix + str(f.evidence)


def test_a_healthy_a100_listing_under_the_same_name_is_silent():
    # the same device name in collect_env's GPU list and nvidia-smi, with no warning from torch
    text = (PASTES.parent / "tickets" / "pytorch-100264-8xa100-system-cudnn-listed-healthy.txt").read_text(encoding="utf-8")
    assert "A100-SXM4-40GB" in text
    assert not [s for s in find_messages(text) if s["id"] == "torch:gpu-arch-not-compatible"]


@pytest.mark.parametrize("paste, lib", [
    ("openpilot-26786-cv2-libnppc-11.txt", "libnppc.so.11"),                 # OpenCV's CUDA build, imported by Python
    ("sickbeard-mp4-automator-1477-ffmpeg-libnppig-11.txt", "libnppig.so.11"),  # FFmpeg built with NPP, the loader's own words
    ("cupy-9017-libcutensor-2-not-found.txt", "libcutensor.so.2"),          # CuPy's cuTENSOR binding
    # already read before issue 24, kept so that ONNX Runtime's and CuPy's wrappers stay read:
    ("paddlenlp-8195-onnxruntime-cuda-provider-libcublaslt-11.txt", "libcublasLt.so.11"),
    ("onnxruntime-12540-java-libcublas-11.txt", "libcublas.so.11"),
    ("cupy-9318-docker-libnvrtc-13.txt", "libnvrtc"),
])
def test_cuda_libraries_loaded_by_other_programs(paste, lib):
    g = recorded_paste_facts(paste)
    (f,) = fired("cuda-runtime-library-missing", g)
    assert f.severity == "error" and lib in f.message
    # one finding for one fact: the generic loader rule leaves a catalogued CUDA library alone
    assert not fired("shared-library-not-found", g)


def test_a_cuda_library_the_loader_found_is_silent():
    # ldd's "libnppc.so.11 => /usr/local/cuda-11.4/lib64/libnppc.so.11": found, nothing failed
    findings, _ = run_rule("cuda-runtime-library-missing", told_paste_facts("jetson-inference-1761-ldd-libnppc-found.txt"))
    assert findings == []
