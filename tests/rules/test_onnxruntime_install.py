"""onnxruntime-without-cuda-provider (rules/onnxruntime_install.py) on public pastes (tests/fixtures/pastes,
SOURCES.md there), onnxruntime 1.32.0's own warning format, and live on the job's Python's installed
distributions as the payload lists them."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages

# onnxruntime 1.32.0 onnxruntime/capi/onnxruntime_inference_collection.py lines 196-201
_WARN = "Specified provider '{}' is not in available provider names.Available providers: '{}'\n"



@pytest.mark.parametrize("paste, severity, words", [
    ("g2pw-cantonese-1-onnxruntime-cpu-package-requirements.txt", "error", "onnxruntime has no CUDAExecutionProvider"),
    ("microwakeword-trainer-1-onnxruntime-cpu-package-in-container.txt", "warning",
     "on a machine with an NVIDIA GPU (NVIDIA GeForce RTX 4060 Ti)"),
])
def test_the_cpu_package_is_read_and_the_fix_installs_the_gpu_one(paste, severity, words):
    (f,) = fired("onnxruntime-without-cuda-provider", recorded_paste_facts(paste))
    assert f.severity == severity and words in f.message and "the installed package is the CPU build" in f.message
    assert "pip uninstall -y onnxruntime onnxruntime-gpu && pip install onnxruntime-gpu" in f.fix


def test_only_a_gpu_provider_asked_of_a_build_without_it_is_this_rule():
    assert fired("onnxruntime-without-cuda-provider",
                 told_facts(_WARN.format("TensorrtExecutionProvider", "AzureExecutionProvider, CPUExecutionProvider")))
    # another provider's package (DirectML, OpenVINO, ROCm) is not the CUDA one
    assert not fired("onnxruntime-without-cuda-provider",
                     told_facts(_WARN.format("ROCMExecutionProvider", "AzureExecutionProvider, CPUExecutionProvider")))
    # the GPU package asked for a provider it lacks: CUDA is there
    assert not fired("onnxruntime-without-cuda-provider",
                     told_facts(_WARN.format("TensorrtExecutionProvider", "CUDAExecutionProvider, CPUExecutionProvider")))


def test_a_session_told_to_use_the_cpu_is_not_a_printed_list():
    text = "sess = ort.InferenceSession('model.onnx', providers=['CPUExecutionProvider'])\n"
    assert not find_messages(text)
    assert not fired("onnxruntime-without-cuda-provider", told_facts(text))


def test_the_list_without_a_gpu_in_the_paste_says_nothing():
    assert not fired("onnxruntime-without-cuda-provider", facts("h100-kvm-1gpu", **{
        "ticket.symptoms": find_messages("['AzureExecutionProvider', 'CPUExecutionProvider']\n"), "gpus": []}))


def test_live_the_cpu_package_beside_nvidia_gpus_is_advice():
    g = facts("h100-kvm-1gpu", **{"torch.packages": {"onnxruntime": "1.32.0", "numpy": "2.4.6"}})
    (f,) = fired("onnxruntime-without-cuda-provider", g)
    assert f.severity == "advice" and "onnxruntime 1.32.0, the CPU-only package" in f.message
    assert not fired("onnxruntime-without-cuda-provider",
                     facts("h100-kvm-1gpu", **{"torch.packages": {"onnxruntime-gpu": "1.32.0"}}))
    assert not fired("onnxruntime-without-cuda-provider",
                     facts("h100-kvm-1gpu", **{"torch.packages": {"onnxruntime": "1.32.0"}, "gpus": []}))
    assert not fired("onnxruntime-without-cuda-provider", facts("h100-kvm-1gpu"))
