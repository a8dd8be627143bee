"""triton-libcuda-not-found (SW105) and ptx-jit-library-missing (GPU044) on the emitters' own output,
recorded on a lent H200 with the library out of reach (tests/fixtures/emitters_gpu/README.md)."""

from __future__ import annotations

import subprocess

from rulekit import fired, paste_facts, recorded_paste_facts


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
