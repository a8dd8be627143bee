"""triton-libcuda-not-found (SW105) and ptx-jit-library-missing (GPU044) on the emitters' own output,
recorded on a lent H200 with the library out of reach (tests/fixtures/emitters_gpu/README.md)."""

from __future__ import annotations

import subprocess

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts


def test_triton_without_libcuda_in_the_cache_gets_the_folder_to_name():
    [hit] = fired("triton-libcuda-not-found", recorded_paste_facts("../emitters_gpu/h200-triton-libcuda-not-found.txt"))
    assert "TRITON_LIBCUDA_PATH" in hit.message and "ldconfig -p" in hit.fix
    # every line of the fix is shell that parses
    for line in hit.fix.splitlines():
        assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0, line


def test_cuda_without_the_ptx_jit_compiler():
    [hit] = fired("ptx-jit-library-missing", recorded_paste_facts("../emitters_gpu/h200-cuda-ptx-jit-missing.txt"))
    assert hit.severity == "error" and "libnvidia-ptxjitcompiler.so.1" in hit.message and "nvliblist.conf" in hit.fix


def test_jit_disabled_is_a_warning_about_the_variable(tmp_path):
    # the CUDA samples' check format (bench/gpu_emitters.py CU_SOURCE) with error 223 filled in by hand
    text = ('CUDA error at scale.cu:11 code=223(cudaErrorJitCompilationDisabled) "cudaGetLastError()": '
            "PTX JIT compilation was disabled\n")
    [hit] = fired("ptx-jit-library-missing", paste_facts(tmp_path, text))
    assert hit.severity == "warning" and "CUDA_DISABLE_PTX_JIT" in hit.fix


def test_healthy_triton_and_cuda_runs_are_silent():
    g = recorded_paste_facts("../emitters_gpu/h200-torch-triton-illegal-address.txt")
    assert not fired("triton-libcuda-not-found", g)
    assert not fired("ptx-jit-library-missing", g)


# --- folded from the x-gpu-libs branch: Triton's hints of each release (libcuda_dirs() of the triton
# 2.1.0-3.6.0 wheels), CUDA 221 in other callers' words, 222 left to driver-too-old ---

def test_triton_22_wording_is_named():
    # triton==2.2.0 triton/common/build.py's format: "GPU is setup", without the space of 3.x (filled in: no public paste)
    [hit] = fired("triton-libcuda-not-found", told_facts(
        'AssertionError: libcuda.so cannot found!\n'
        'Please make sure GPU is setup and then run "/sbin/ldconfig" (requires sudo) to refresh the linker cache.\n'))
    assert hit.message.startswith("Triton 2.2 or 2.3 ")


def test_triton_3_hint_of_the_recorded_h200_is_named():
    [hit] = fired("triton-libcuda-not-found", recorded_paste_facts("../emitters_gpu/h200-triton-libcuda-not-found.txt"))
    assert hit.message.startswith("Triton 3.x ")


def test_a_stale_cache_entry_is_told_apart():
    # triton==3.6.0 driver.py's format: the cache lists libcuda.so.1 where no such file is (filled in: no public paste)
    [hit] = fired("triton-libcuda-not-found", told_facts(
        "AssertionError: libcuda.so cannot found!\n"
        "Possible files are located at ['/usr/lib/x86_64-linux-gnu/libcuda.so.1'].Please create a symlink "
        "of libcuda.so to any of the files.\n"))
    assert "stale" in hit.message and "['/usr/lib/x86_64-linux-gnu/libcuda.so.1']" in hit.message
    assert "TRITON_LIBCUDA_PATH" in hit.fix and "# nothing" not in hit.fix


def test_triton_2_wants_the_unversioned_link():
    # triton==2.2.0 build.py's format ("... to any of the file."): libcuda.so.1 listed, no libcuda.so beside it
    [hit] = fired("triton-libcuda-not-found", told_facts(
        "AssertionError: libcuda.so cannot found!\n"
        "Possible files are located at ['/usr/lib64/libcuda.so.1'].Please create a symlink of libcuda.so "
        "to any of the file.\n"))
    assert "Triton 2.x" in hit.message and "libcuda.so, the unversioned link" in hit.message
    assert 'ln -sf "$d" ~/.local/lib/triton-libcuda/libcuda.so' in hit.fix
    for line in hit.fix.splitlines():
        assert subprocess.run(["bash", "-n", "-c", line]).returncode == 0, line


def test_a_failing_driver_is_not_tritons_lookup():
    # nvidia-smi cannot reach the driver: gpu-driver-unusable answers, not Triton's lookup
    g = told_facts("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
                   "latest NVIDIA driver is installed and running.\n\nAssertionError: libcuda.so cannot found!\n")
    assert not fired("triton-libcuda-not-found", g)
    assert fired("gpu-driver-unusable", g)


def test_ptx_jit_221_in_torch_and_driver_api_words_fires():
    # torch's "CUDA error: " + cudaGetErrorString and numba's driver API format, filled in (no public paste)
    for text in ("RuntimeError: CUDA error: PTX JIT compiler library not found\n",
                 "numba.cuda.cudadrv.driver.CudaAPIError: [221] Call to cuModuleLoadDataEx results in "
                 "CUDA_ERROR_JIT_COMPILER_NOT_FOUND\n"):
        [hit] = fired("ptx-jit-library-missing", told_facts(text))
        assert hit.severity == "error", text


def test_ptx_newer_than_the_driver_is_not_the_jit_compiler():
    # error 222 is driver-too-old's: the JIT compiler is there, the PTX is too new for it
    g = told_facts("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.\n")
    assert not fired("ptx-jit-library-missing", g)


def test_other_library_faults_are_not_the_jit_compiler():
    for name in ("h200-cuda-stub-libcuda", "h200-torch-stub-libcuda", "h200-cupy-nvrtc-missing", "h200-torch-cudnn-missing"):
        assert not fired("ptx-jit-library-missing", recorded_paste_facts(f"../emitters_gpu/{name}.txt")), name
