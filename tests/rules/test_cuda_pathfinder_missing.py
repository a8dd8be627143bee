"""cuda-runtime-library-missing (SW022) on cuda.pathfinder's DynamicLibNotFoundError (CuPy 14,
cuda.core, numba-cuda), folded from the x-gpu-libs branch: CuPy 14.2.0's words recorded on an H200
with NVRTC hidden (tests/fixtures/emitters_gpu), and the finder's other wordings filled in from the
cuda-pathfinder 1.8.3 wheel's formats (no public paste recorded)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts

SYMBOL = "cuda-runtime-library-missing"


def test_cupy_without_nvrtc_is_told_to_install_the_cu13_wheel():
    [hit] = fired("cuda-runtime-library-missing", recorded_paste_facts("../emitters_gpu/h200-cupy-nvrtc-missing.txt"))
    assert "libnvrtc.so.13 or libnvrtc.so.12" in hit.message and "nvidia/cu13/lib" in hit.message
    assert hit.fix.startswith("pip install 'nvidia-cuda-nvrtc==13.*'") and "cu12" not in hit.fix
    assert "load_nvidia_dynamic_lib as l; print(l('nvrtc').abs_path)" in hit.fix


def test_a_cu12_environment_gets_the_cu12_wheel():
    g = told_facts('DynamicLibNotFoundError: Failure finding "libnvrtc.so.13 or libnvrtc.so.12": No such file: '
                   'libnvrtc.so.13 or libnvrtc.so.12\n'
                   '  listdir("/venv/lib/python3.11/site-packages/nvidia/cuda_nvrtc/lib"):\n'
                   '    DIRECTORY DOES NOT EXIST\n')
    [hit] = fired(SYMBOL, g)
    assert hit.fix.startswith("pip install 'nvidia-cuda-nvrtc-cu12'") and "==13" not in hit.fix


def test_the_loaders_own_words_keep_the_loader_path_fix():
    g = told_facts("OSError: libnvrtc.so.13: cannot open shared object file: No such file or directory\n")
    [hit] = fired(SYMBOL, g)
    assert "pip install" not in hit.fix and "LD_LIBRARY_PATH" in hit.fix


def test_the_driver_library_is_not_fired():
    # libcuda is the driver's: a machine without an NVIDIA GPU lacks it too (as libraries.toml's driver entries)
    g = told_facts('DynamicLibNotFoundError: "cuda" is an NVIDIA driver library and can only be found via system '
                   'search. Ensure the NVIDIA display driver is installed.\n')
    assert not fired("cuda-runtime-library-missing", g)
