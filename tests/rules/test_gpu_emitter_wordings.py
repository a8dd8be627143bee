"""GPU faults read from more emitters (issue 24, a1): llama.cpp's start-up line that carries any CUDA
runtime error (the whole cudaError table through its text), and TensorFlow 1.x's device listing with
what was free before it allocated anything. Real pastes only (fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from conftest import check_from
from rulekit import PASTES
from hpcdoctor.triage.messages import find_messages


def _fired(name: str) -> dict:
    doc = check_from(PASTES / name)["doc"]
    assert doc is not None
    return {f["symbol"]: f for f in doc["findings"]}


def test_llama_cpp_start_up_error_803_is_the_driver_mismatch():
    fired = _fired("gpustack-2704-ggml-cuda-init-driver-mismatch.txt")
    f = fired["gpu-driver-unusable"]
    assert f["severity"] == "error"
    assert "not the version of the driver libraries" in f["message"]
    assert "cat /proc/driver/nvidia/version" in f["fix"]


def test_llama_cpp_start_up_line_reads_the_whole_table_not_one_wording():
    # 802 through the same line is the fabric manager's, not the driver's: the form looks the text up
    fired = _fired("llama-cpp-13059-ggml-cuda-init-not-yet-initialized.txt")
    assert "nvidia-fabric-manager" in fired
    assert "gpu-driver-unusable" not in fired
    ids = [s["id"] for s in find_messages((PASTES / "llama-cpp-13059-ggml-cuda-init-not-yet-initialized.txt").read_text())]
    assert "cuda:cudaErrorSystemNotReady" in ids


def test_llama_cpp_finding_its_gpus_is_silent():
    fired = _fired("llama-cpp-11700-ggml-cuda-init-found-devices-healthy.txt")
    assert not {"gpu-driver-unusable", "driver-too-old", "cuda-forward-compat-unsupported"} & set(fired)


@pytest.mark.parametrize("name, line", [
    ("llamacpp-rocm-3-ggml-rocm-init-no-device.txt", 3),          # Windows, RX 9060 XT (gfx1200)
    ("llamacpp-rocm-74-ggml-rocm-init-no-device-gfx1150.txt", 2),  # Strix Point (gfx1150)
])
def test_llama_cpp_rocm_start_up_line_is_hips_no_device_with_rocms_commands(name, line):
    # hip.toml's ggml-rocm-init-failed form reads the hipGetErrorString text: hipErrorNoDevice
    ids = [s["id"] for s in find_messages((PASTES / name).read_text())]
    assert "hip:hipErrorNoDevice" in ids
    f = _fired(name)["no-gpu-visible"]
    assert f["severity"] == "info" and f["message"].startswith(f"line {line}: ") and "no AMD GPU" in f["message"]
    assert "rocm-smi" in f["fix"] and "HIP_VISIBLE_DEVICES" in f["fix"] and "/dev/kfd" in f["fix"]
    assert "nvidia-smi" not in f["fix"] and "CUDA_VISIBLE_DEVICES" not in f["fix"]


@pytest.mark.parametrize("name, held", [
    ("tensorflow-8170-free-memory-190mib-of-8gib.txt", 7.7),
    ("deepspeech-463-free-memory-two-gpus-nearly-full.txt", 2.8),
])
def test_tensorflow_listing_a_gpu_mostly_in_use_at_start_is_memory_held_by_others(name, held):
    doc = check_from(PASTES / name)["doc"]
    found = [f for f in doc["findings"] if f["symbol"] == "gpu-memory-in-use"]
    assert found and all(f["severity"] == "warning" for f in found)
    assert any(f"about {held:.1f} GiB were held by other processes" in f["message"] for f in found)
    assert "nvidia-smi --query-compute-apps" in found[0]["fix"]


def test_every_gpu_tensorflow_lists_is_read():
    text = (PASTES / "deepspeech-463-free-memory-two-gpus-nearly-full.txt").read_text()
    found = [(s["total"], s["free"]) for s in find_messages(text) if s["id"] == "tensorflow:device-memory-at-start-r0"]
    assert found == [("2.94GiB", "105.88MiB"), ("11.17GiB", "227.88MiB")]


def test_tensorflow_listing_a_gpu_mostly_free_is_silent():
    # a display's share in use and TensorFlow asking for more than was free: its own allocation
    assert "gpu-memory-in-use" not in _fired("tensorflow-12237-free-memory-mostly-free-healthy.txt")
