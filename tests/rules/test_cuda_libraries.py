"""cuda-libraries-predate-gpu on real pastes of torch's "cuFFT error: CUFFT_INTERNAL_ERROR"
(tests/fixtures/pastes, SOURCES.md there) and on a recorded node's facts."""

from __future__ import annotations

from rulekit import PASTES, facts, fired, paste_facts, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_an_ada_gpu_with_a_cuda_11_7_build():
    (f,) = fired("cuda-libraries-predate-gpu", recorded_paste_facts("pytorch-88038-cufft-rtx-4090-cu117.txt"))
    assert f.severity == "error"
    assert "NVIDIA GeForce RTX 4090 (compute capability 8.9), and torch is built with CUDA 11.7" in f.message
    assert "needs CUDA 11.8 or newer" in f.message
    assert "--index-url https://download.pytorch.org/whl/cu118" in f.fix and f.fix.startswith("python3 -c 'import torch;")


def test_a_build_that_knows_the_gpu_is_another_cause(tmp_path):
    # the same paste with a CUDA 11.8 build: cuFFT knows 8.9, so the error has another cause (free memory)
    text = (PASTES / "pytorch-88038-cufft-rtx-4090-cu117.txt").read_text().replace(
        "CUDA used to build PyTorch: 11.7", "CUDA used to build PyTorch: 11.8")
    assert not fired("cuda-libraries-predate-gpu", paste_facts(tmp_path, text))


def test_the_error_alone_is_the_usual_cause_at_info():
    (f,) = fired("cuda-libraries-predate-gpu", recorded_paste_facts("audioldm-49-cufft-cuda-11-7-build-on-ada-gpu.txt"))
    assert f.severity == "info" and "the usual cause is a torch built with a CUDA release older than the GPU" in f.message
    assert "pytorch#119420" in f.message


def test_a_named_old_build_without_a_gpu_is_a_warning(tmp_path):
    text = ("pip install torch==1.13.1+cu116\n"
            "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n")
    (f,) = fired("cuda-libraries-predate-gpu", paste_facts(tmp_path, text))
    assert f.severity == "warning" and "torch 1.13.1+cu116 (line 1) is built with CUDA 11.6, older than CUDA 11.8" in f.message


def test_live_a_torch_older_than_the_nodes_gpu():
    (f,) = fired("cuda-libraries-predate-gpu", facts("h100-kvm-1gpu", **{"torch.cuda": "11.7"}))
    assert f.severity == "warning" and "compute capability 9.0, first known to CUDA 11.8" in f.message
    assert not fired("cuda-libraries-predate-gpu", facts("h100-kvm-1gpu", **{"torch.cuda": "12.1"}))
    assert not fired("cuda-libraries-predate-gpu", facts("h100-kvm-1gpu"))   # the recording's own torch (CUDA 13.0)


def test_other_cufft_errors_are_read_but_not_this_rule():
    text = "RuntimeError: cuFFT error: CUFFT_INVALID_SIZE\n"
    assert [s["id"] for s in find_messages(text)] == ["cufft:CUFFT_INVALID_SIZE"]
    assert not fired("cuda-libraries-predate-gpu", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def test_cudnn_execution_failed_with_the_gpu_and_cuda_release_named():
    # transfuser#14 (set AA): RTX 3080 (8.6) with CUDA 10.1 and torch 1.4.0, in the user's own sentence
    (f,) = fired("cuda-libraries-predate-gpu", recorded_paste_facts("../tickets_blind_aa/transfuser-14-cuda-10-1-on-rtx-3080.txt"))
    assert f.severity == "error" and "cuDNN kernel failed to run" in f.message
    assert "RTX 3080 (compute capability 8.6)" in f.message and "CUDA 11.1 or newer" in f.message
    # pytorch-cuda starts at 11.6: an 11.1 need is answered with the first that exists
    assert "whl/cu111" in f.fix and "pytorch-cuda=11.6" in f.fix


def test_execution_failed_without_the_release_named_is_not_this_rule(tmp_path):
    # the status alone has many causes (an earlier illegal access above all), even on a GPU that is named
    assert not fired("cuda-libraries-predate-gpu", paste_facts(tmp_path,
        "I train on an RTX 3080.\nRuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, "
        "opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`\n"))


# NVRTC refusing the GPU's architecture (knowledge/messages/nvrtc.toml option-gpu-architecture-invalid)

def test_nvrtc_refusing_an_rtx_4090_names_the_first_cuda_for_it():
    # CodeFormer#167 (set AE): the message and "RTX 4090" in the title, nothing else
    (f,) = fired("cuda-libraries-predate-gpu", recorded_paste_facts("../tickets_blind_ae/codeformer-167-rtx4090-nvrtc-arch-too-new.txt"))
    assert f.severity == "error" and "NVRTC refused the GPU's architecture" in f.message
    assert "RTX 4090 (compute capability 8.9)" in f.message and "CUDA 11.8" in f.message
    assert "whl/cu118" in f.fix


def test_nvrtc_refusal_with_a_named_old_cuda_and_no_gpu_is_a_warning():
    (f,) = fired("cuda-libraries-predate-gpu", recorded_paste_facts("maskpls-18-nvrtc-invalid-gpu-architecture.txt"))
    assert f.severity == "warning" and "CUDA 11.3 with torch 1.10" in f.message


def test_nvrtc_refusal_alone_is_the_usual_cause_at_info(tmp_path):
    (f,) = fired("cuda-libraries-predate-gpu", paste_facts(tmp_path, "nvrtc: error: invalid value for --gpu-architecture (-arch)\n"))
    assert f.severity == "info" and "CUDA 13 dropped 7.2 and older" in f.message


def test_nvrtc_newer_than_an_old_gpu_is_not_this_rule():
    # cupy#9475: a GTX 1080 (6.1) with CuPy on CUDA 13.0, which dropped 6.1: the NVRTC is too new, not too old
    facts_ = recorded_paste_facts("cupy-9475-gtx1080-cuda13-nvrtc-arch.txt")
    ids = [s["id"] for s in find_messages((PASTES / "cupy-9475-gtx1080-cuda13-nvrtc-arch.txt").read_text())]
    assert "nvrtc:option-gpu-architecture-invalid" in ids and "nvrtc:NVRTC_ERROR_INVALID_OPTION" in ids
    assert not fired("cuda-libraries-predate-gpu", facts_)


def test_a_kernels_own_compile_error_is_not_this_rule():
    # cupy#5294: NVRTC_ERROR_COMPILATION (6) with the user's kernel's "identifier ... is undefined"
    facts_ = recorded_paste_facts("cupy-5294-nvrtc-compilation-kernel-source.txt")
    text = (PASTES / "cupy-5294-nvrtc-compilation-kernel-source.txt").read_text()
    assert "nvrtc:NVRTC_ERROR_COMPILATION" in [s["id"] for s in find_messages(text)]
    assert not fired("cuda-libraries-predate-gpu", facts_)


def test_every_nvrtc_result_name_is_read_as_wrappers_print_it():
    for text, key in (("RuntimeError: CUDA NVRTC error: NVRTC_ERROR_BUILTIN_OPERATION_FAILURE", "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE"),
                      ("tinygrad.device.CompileError: Nvrtc Error 6, NVRTC_ERROR_COMPILATION", "NVRTC_ERROR_COMPILATION"),
                      ("NVRTCError: NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED (17)", "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED")):
        assert f"nvrtc:{key}" in [s["id"] for s in find_messages(text + "\n")]
