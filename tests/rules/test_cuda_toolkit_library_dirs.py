"""cuda-runtime-library-missing for the CUDA libraries that live outside the toolkit's lib64 (NVVM in
nvvm/lib64) and for a program, not a Python module, that ld.so could not start: the fix names the
folders the library is really in and runs ldd on the program itself."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


def test_libnvvm_is_looked_for_in_nvvm_lib64():
    # rust-cuda's build script (set AA): libnvvm.so.4 missing; the reporter's fix put nvvm/lib64 on LD_LIBRARY_PATH
    (f,) = fired("cuda-runtime-library-missing",
                 recorded_paste_facts("../tickets_blind_aa/rust-cuda-78-libnvvm-not-on-loader-path.txt"))
    assert "libnvvm.so.4 cannot be loaded" in f.message
    assert "/usr/local/cuda*/nvvm/lib64" in f.fix and "nvidia/cuda_nvcc/nvvm/lib64" in f.fix
    assert 'export LD_LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/nvvm/lib64' in f.fix
    # the program ld.so named is what ldd is run on, without the quoting backtick; no torch or mmcv lines
    assert "ldd cuda_test/cuda_runner/target/debug/build/cuda_runner-170008ea0ebbe57c/build-script-build" in f.fix
    assert "mmcv" not in f.fix and "import torch" not in f.fix


def test_a_lib64_library_keeps_lib64():
    (f,) = fired("cuda-runtime-library-missing", told_facts(
        "./saxpy: error while loading shared libraries: libcublas.so.12: cannot open shared object file: No such file or directory\n"))
    assert "/usr/local/cuda*/lib64" in f.fix and "nvvm" not in f.fix
    assert "ldd ./saxpy | grep 'not found'" in f.fix


def test_a_driver_library_is_not_a_toolkit_library():
    # libnvidia-nvvm is the driver's (no rule: a node without an NVIDIA GPU lacks it too)
    assert not fired("cuda-runtime-library-missing", told_facts(
        "./a.out: error while loading shared libraries: libnvidia-nvvm.so.4: cannot open shared object file: No such file or directory\n"))
