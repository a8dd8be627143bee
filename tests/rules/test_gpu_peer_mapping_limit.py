"""gpu-peer-mapping-limit-exceeded on public pastes (tests/fixtures/pastes, SOURCES.md there): CUDA's
cudaErrorTooManyPeers as torch, Caffe2, llama.cpp and TensorFlow print it, and silence for the other
peer-access errors, which other rules answer."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts



@pytest.mark.parametrize("paste", [
    "llama-cpp-21883-peer-mapping-exhausted-ten-gpus.txt",    # CUDA error: ... in cudaDeviceEnablePeerAccess
    "pytorch-38223-peer-mapping-exhausted-four-gpus.txt",     # Caffe2's enforce with the bare text
    "pytorch-25019-cuda-runtime-error-60-peer-mapping.txt",   # torch 1.1's THC, the old error number 60
])
def test_the_error_names_the_eight_peer_limit(paste):
    (f,) = fired("gpu-peer-mapping-limit-exceeded", recorded_paste_facts(paste))
    assert f.severity == "error" and "eight peer connections per GPU" in f.message
    assert "CUDA_VISIBLE_DEVICES=" in f.fix and "nvidia-smi topo -m" in f.fix


def test_tensorflows_logged_refusal_is_a_warning():
    (f,) = fired("gpu-peer-mapping-limit-exceeded", recorded_paste_facts("tensorflow-49730-ten-gpus-too-many-peers-warning.txt"))
    assert f.severity == "warning" and "TensorFlow goes on without peer access" in f.message


@pytest.mark.parametrize("paste", [
    "nanoflow-22-rtx-3090-no-peer-access.txt",   # peer access unsupported: gpu-peer-access-unsupported's
    "cpcl-4-libcudart-10-0-cuda-path.txt",
])
def test_silent_for_other_errors(paste):
    assert not fired("gpu-peer-mapping-limit-exceeded", recorded_paste_facts(paste))
