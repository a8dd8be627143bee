"""What the emitters printed on an H200 whose environment was made unsound (2026-11-28,
bench/gpu_env_emitters.py; tests/fixtures/emitters_gpu/README.md), read as pastes."""

from __future__ import annotations

from rulekit import PASTES, fired, paste_facts, recorded_paste_facts, run_rule


def test_jax_backing_off_from_its_preallocation_says_the_card_was_held():
    [hit] = fired("gpu-memory-in-use", recorded_paste_facts("../emitters_gpu/h200-jax-beside-jax.txt"))
    assert "104.85GiB" in hit.message and "backed off 10 times" in hit.message
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in hit.fix


def test_one_failed_request_alone_is_not_memory_held_by_others(tmp_path):
    # JAX asking for more than the card has, on a free card: one allocation failure, no backpedal.
    text = (PASTES.parent / "emitters_gpu" / "h200-jax-beside-jax.txt").read_text(encoding="utf-8").splitlines()
    one = "\n".join(line for n, line in enumerate(text) if "Failed to allocate device memory" not in line or n < 2)
    # Not judged (a paste with no GPU listing), and no finding: nothing read says others hold the card.
    assert not run_rule("gpu-memory-in-use", paste_facts(tmp_path, one))[0]
    assert not run_rule("gpu-memory-in-use", recorded_paste_facts("../emitters_gpu/h100-jax-oom.txt"))[0]


def test_nccl_without_libnvidia_ml_names_the_driver_library():
    [hit] = fired("gpu-driver-unusable", recorded_paste_facts("../emitters_gpu/h200-nccl-nvml-missing.txt"))
    assert "no NVIDIA driver libraries" in hit.message and "NVIDIA_DRIVER_CAPABILITIES" in hit.fix


def test_bare_error_35_names_both_of_its_causes_and_not_torch():
    g = recorded_paste_facts("h200-env-cupy-libcuda-missing.txt")
    [hit] = fired("driver-too-old", g)
    assert "or no driver library (libcuda.so.1)" in hit.message and "torch" not in hit.message
    assert "ldconfig -p | grep -F libcuda.so.1" in hit.fix


def test_torch_error_35_with_the_drivers_version_stays_a_version_answer(tmp_path):
    text = ("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your "
            "GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx")
    [hit] = fired("driver-too-old", paste_facts(tmp_path, text))
    assert "supports CUDA 11.4 only, older than the CUDA of this torch build" in hit.message


def test_libcuda_missing_pastes_without_a_gpu_are_no_driver_fault():
    for name in ("h200-env-torch-libcuda-missing.txt", "h200-env-numba-libcuda-missing.txt",
                 "h200-env-jax-libcuda-missing.txt"):
        assert not run_rule("gpu-driver-unusable", recorded_paste_facts(name))[0], name


def test_cupy_without_nvrtc_is_pointed_at_cuda_13s_one_wheel_folder(tmp_path):
    [hit] = fired("cuda-runtime-library-missing", recorded_paste_facts("../emitters_gpu/h200-cupy-nvrtc-missing.txt"))
    assert "libnvrtc.so.13" in hit.message and "/nvidia/cu13/lib" in hit.fix and "cuda_nvrtc" not in hit.fix
    # CUDA 12's soname keeps its own wheel's folder
    text = "OSError: libnvrtc.so.12: cannot open shared object file: No such file or directory\n"
    [hit] = fired("cuda-runtime-library-missing", paste_facts(tmp_path, text, "cu12.txt"))
    assert "/nvidia/cuda_nvrtc/lib" in hit.fix
