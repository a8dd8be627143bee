"""cuBLAS's and cuDNN's status codes as public tickets print them: each read as its own entry of
cublas.toml / cudnn.toml, through torch's "CUDA error: " wording too (which cuda.toml leaves to
them), and not as an unlisted CUDA error."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("paste, status", [
    ("tickets_blind_b/neuraltalk2-122-cudnn-not-initialized-old-cudnn.txt", "cudnn:CUDNN_STATUS_NOT_INITIALIZED"),
    ("tickets_blind_c/pointnet2-229-cudnn-execution-failed-3090-cuda10.txt", "cudnn:CUDNN_STATUS_EXECUTION_FAILED"),
    ("tickets_blind_e/fastertransformer-149-cublas-batched-pointer-alignment-healthy.txt", "cublas:CUBLAS_STATUS_NOT_SUPPORTED"),
])
def test_public_tickets_read_their_status(paste, status):
    found = find_messages((FIXTURES / paste).read_text())
    assert status in {s["id"] for s in found}
    assert not any(s["id"] == "cuda:unlisted" and "STATUS_" in s["text"] for s in found)


def test_torchs_cuda_error_wording_is_cublas_not_an_unlisted_cuda_error():
    # torch's CUDA_BLAS check, as the catalogue's form example gives it
    line = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"
    assert [s["id"] for s in find_messages(line)] == ["cublas:CUBLAS_STATUS_NOT_INITIALIZED"]


def _family(fid):
    (fam,) = messages.families((fid,))
    return fam


def test_every_cublas_value_and_cudnn_9_value_is_an_entry():
    cublas = {e.key: e.get("code") for e in _family("cublas").entries}
    assert cublas == {"CUBLAS_STATUS_NOT_INITIALIZED": 1, "CUBLAS_STATUS_ALLOC_FAILED": 3, "CUBLAS_STATUS_INVALID_VALUE": 7,
                      "CUBLAS_STATUS_ARCH_MISMATCH": 8, "CUBLAS_STATUS_MAPPING_ERROR": 11,
                      "CUBLAS_STATUS_EXECUTION_FAILED": 13, "CUBLAS_STATUS_INTERNAL_ERROR": 14,
                      "CUBLAS_STATUS_NOT_SUPPORTED": 15, "CUBLAS_STATUS_LICENSE_ERROR": 16}
    cudnn = {e.key: e.get("code") for e in _family("cudnn").entries}
    # cuDNN 9's categories (1xxx-5xxx) and cuDNN 8's names kept as deprecated aliases
    assert len(cudnn) == 52 and cudnn["CUDNN_STATUS_NOT_INITIALIZED"] == 1001
    assert cudnn["CUDNN_STATUS_ARCH_MISMATCH"] == cudnn["CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"] == 3007


def test_cudnn_says_the_driver_is_too_old(tmp_path):
    from rulekit import fired, paste_facts

    # torch's cuDNN check (Exceptions.h: "cuDNN error: " + cudnnGetErrorString) with cuDNN 9's value
    (f,) = fired("driver-too-old", paste_facts(tmp_path, "RuntimeError: cuDNN error: "
                                                         "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER\n"))
    assert "CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER" in f.message
