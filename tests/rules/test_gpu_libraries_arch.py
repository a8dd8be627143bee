"""Libraries without code for the GPU (framework-missing-arch through rules/_gpu_libraries.py),
libraries a framework cannot load (cuda-runtime-library-missing) and frameworks installed without GPU
support (framework-built-without-gpu): real pastes (fixtures/pastes, set Y's tickets); the messages
with no public paste use the emitter's format string filled in, marked so."""

from __future__ import annotations

from rulekit import PASTES, fired, paste_facts, told_facts, told_paste_facts


def _paste(tmp_path, name):
    return paste_facts(tmp_path, (PASTES / name).read_text(encoding="utf-8"))


def test_cudnn_arch_mismatch_in_mochas_words(tmp_path):
    (f,) = fired("framework-missing-arch", _paste(tmp_path, "mocha-jl-57-cudnn-arch-mismatch-old-gpu.txt"))
    assert f.severity == "error" and "cuDNN refused the GPU" in f.message and "line 12" in f.message


def test_cudnn_arch_mismatch_by_its_status_name():
    # constructed: torch's "cuDNN error: " + cudnnGetErrorString (cuDNN 8 answers the name)
    (f,) = fired("framework-missing-arch", told_facts("RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH\n"))
    assert "CUDNN_STATUS_ARCH_MISMATCH" in f.message


def test_cudnn_other_statuses_are_not_arch():
    assert not fired("framework-missing-arch", told_facts("RuntimeError: cuDNN error: CUDNN_STATUS_BAD_PARAM\n"))
    assert not fired("framework-missing-arch", told_facts("ERROR: Arch mismatch\n"))   # no Mocha frame: plain words


def test_cudf_names_the_gpu_and_its_capability(tmp_path):
    (f,) = fired("framework-missing-arch", _paste(tmp_path, "cudf-12812-tesla-m60-below-pascal.txt"))
    assert "Tesla M60 (compute capability 5.2)" in f.message and "6.0" in f.message
    assert f.evidence["compute_capability"] == "5.2"


def test_cudf_missing_ptx_reads_the_capability(tmp_path):
    (f,) = fired("framework-missing-arch", _paste(tmp_path, "cuml-5484-rapids-needs-pascal-cc50-gpu.txt"))
    assert "compute capability 5.0" in f.message and f.evidence["compute_capability"] == "5.0"


def test_cudf_volta_minimum_of_24_02():
    # constructed: rapidsai/cudf v24.02.00 gpu_utils.py's warning, filled in for a Pascal GPU
    text = ("UserWarning: A GPU with NVIDIA Volta™ (Compute Capability 7.0) or newer architecture is required.\n"
            "Detected GPU 0: Tesla P100-PCIE-16GB\nDetected Compute Capability: 6.0\n")
    (f,) = fired("framework-missing-arch", told_facts(text))
    assert "Tesla P100-PCIE-16GB (compute capability 6.0)" in f.message and f.evidence["framework.min_cc"] == "7.0"


def test_invalid_device_symbol_at_a_symbol_call_is_a_warning(tmp_path):
    (f,) = fired("framework-missing-arch", _paste(tmp_path, "gpufs-3-invalid-device-symbol-wrong-gencode.txt"))
    assert f.severity == "warning" and "cudaMemcpyToSymbol" in f.message and "its own bug" in f.message


def test_invalid_device_symbol_with_a_build_the_gpu_cannot_run_is_an_error():
    # constructed: a check macro's line and the build's nvcc flags, on the recorded H100 (9.0)
    text = ("CUDA error in kernel.cu:88 : invalid device symbol\n"
            "nvcc -gencode arch=compute_35,code=sm_35 -o app kernel.cu\n")
    (f,) = fired("framework-missing-arch", told_facts(text))
    assert f.severity == "error" and "sm_35" in f.message and "9.0" in f.message


def test_invalid_device_symbol_alone_is_not_read_as_the_build():
    # the program's own wrong symbol gives the same words: without the call or the build, silent
    assert not fired("framework-missing-arch", told_facts("CUDA error: invalid device symbol\n"))


def test_paddle_cannot_load_cudnn(tmp_path):
    (f,) = fired("cuda-runtime-library-missing", _paste(tmp_path, "paddleocr-300-cudnn-not-in-ld-library-path.txt"))
    assert "libcudnn.so cannot be loaded" in f.message and "LD_LIBRARY_PATH" in f.fix


def test_paddle_loaded_cudnn_is_not_missing():
    assert not fired("cuda-runtime-library-missing", told_facts("I0101 paddle loaded cuDNN 7.6\n"))


def test_cudnn_version_mismatch_status():
    # constructed: cuDNN 8's status name in a framework's check
    (f,) = fired("cudnn-version-mismatch", told_facts("RuntimeError: cuDNN error: CUDNN_STATUS_VERSION_MISMATCH\n"))
    assert "different versions" in f.message
    assert not fired("cudnn-version-mismatch", told_facts("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED\n"))


def test_mxnet_built_without_cuda(tmp_path):
    (f,) = fired("framework-built-without-gpu", _paste(tmp_path, "mxnet-260-python-package-built-without-cuda.txt"))
    assert f.severity == "error" and "MXNet" in f.message and "mxnet-cu112" in f.fix


def test_paddle_cpu_package():
    # constructed: paddle/fluid/pybind/place.cc's LOG(ERROR) text
    text = ("E0101 10:00:00.000000  1234 place.cc:300] Cannot use GPU because you have installed CPU version PaddlePaddle.\n"
            "If you want to use GPU, please try to install GPU version PaddlePaddle by: pip install paddlepaddle-gpu\n")
    (f,) = fired("framework-built-without-gpu", told_facts(text))
    assert "PaddlePaddle" in f.message and "paddlepaddle-gpu" in f.fix


def test_a_cuda_build_without_one_feature_is_not_a_build_without_gpu():
    # MXNet 1.9.1 c_api.cc: a CUDA build without runtime compilation still runs on the GPU
    text = "MXNetError: [10:00:00] src/c_api/c_api.cc:3055: Compile with USE_CUDA=1 and ENABLE_CUDA_RTC=1 to have CUDA runtime compilation.\n"
    assert not fired("framework-built-without-gpu", told_facts(text))
    assert not fired("framework-built-without-gpu", told_paste_facts("cuml-5484-rapids-needs-pascal-cc50-gpu.txt"))
