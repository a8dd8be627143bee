"""framework-missing-arch for a program that is not torch whose own fatbin lacks the GPU's
architecture: CUDA error 209 by its enum name as CuPy, NumbaPro, Thrust and RustaCUDA print it
(cuda_driver.toml, cuda.toml, cuda_rust.toml), on real pastes (tests/fixtures/pastes, SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule, told_facts
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, quoted", [
    ("xsuite-684-cupy-no-binary-rtx5080.txt", "CUDADriverError: CUDA_ERROR_NO_BINARY_FOR_GPU"),      # CuPy
    ("numbapro-examples-2-no-binary-for-gpu.txt", "'Failed to load module', 'CUDA_ERROR_NO_BINARY_FOR_GPU'"),
    ("rapidsai-csp-utils-62-thrust-no-kernel-image.txt", "parallel_for failed: cudaErrorNoKernelImageForDevice"),
    ("cpm-kernels-6-cuda-error-no-kernel-image.txt", "CUDA Error: no kernel image is available"),         # cpm_kernels
])
def test_a_programs_own_error_209_is_its_fatbin(paste, quoted):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("framework-missing-arch", gathered)
    assert quoted in f.message and "own GPU binary has no code for this GPU" in f.message
    assert f.fix.startswith("nvidia-smi --query-gpu=name,compute_cap") and "cuobjdump --list-elf" in f.fix
    assert not run_rule("torch-missing-arch", gathered)[0]   # torch is not in these pastes: not its finding


def test_rustacudas_variant_names_the_gpu_it_ran_on(tmp_path):
    # rust-gpu-tools' GPUError::Cuda around RustaCUDA's CudaError, as its panic prints it, and a GPU named
    text = ("thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(NoBinaryForGpu)', "
            "examples/add.rs:10:76\nI use Tesla K80 GPU and how can I solve it.\n")
    assert "cuda_rust:NoBinaryForGpu" in {s["id"] for s in find_messages(text)}
    (f,) = fired("framework-missing-arch", paste_facts(tmp_path, text))
    assert "(Tesla K80, compute capability 3.7)" in f.message


@pytest.mark.parametrize("text", [
    # torch's own check: torch-missing-arch's, one cause, one finding
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
    "RuntimeError: CUDA driver error: no kernel image is available for execution on the device\n",
    # another RustaCUDA error is read, and is not this one
    "thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Cuda(OutOfMemory)', src/main.rs:5:9\n",
    "Error: CudaError::InvalidPtx\n",
])
def test_silent_on_torchs_words_and_on_other_errors(text):
    assert not fired("framework-missing-arch", told_facts(text))


def test_other_rustacuda_errors_are_read():
    ids = {s["id"] for s in find_messages("Err(CudaError::LaunchOutOfResources)\n")}
    assert "cuda_rust:LaunchOutOfResources" in ids


def test_flashinfers_own_check_keeps_the_framework_finding():
    # frameworks.toml reads flashinfer's "CUDA Error: ... (209) <path>"; the cpm_kernels form leaves it alone
    text = "CUDA Error: no kernel image is available for execution on the device (209) /tmp/x/include/flashinfer/utils.cuh: line 52\n"
    assert {s["id"] for s in find_messages(text)} == {"frameworks:framework-cuda-error-209"}
    (f,) = fired("framework-missing-arch", told_facts(text))
    assert "own GPU binary" not in f.message
