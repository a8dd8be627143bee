"""cuda-runtime-library-missing from NVRTC's own words for its builtins library (nvrtc.toml), on set S's
ticket (TRIPS#13) and other real public pastes (tests/fixtures/pastes/SOURCES.md): the fix puts the folder
of the library (conda's environment lib, the nvidia/cuda_nvrtc wheel's lib) on the loader's path."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def test_set_s_conda_build_names_the_builtins_and_the_conda_lib(tmp_path):
    text = (FIXTURES / "tickets_blind_s" / "trips-13-conda-cuda-libs-not-on-loader-path.txt").read_text(encoding="utf-8")
    (f,) = fired("cuda-runtime-library-missing", paste_facts(tmp_path, text, "trips-13.txt"))
    assert f.severity == "error" and "cannot open libnvrtc-builtins.so.11.6" in f.message
    assert f.evidence["library"] == "libnvrtc-builtins.so.11.6"
    assert '${CONDA_PREFIX:?activate the conda environment first}/lib' in f.fix
    assert "/nvidia/cuda_nvrtc/lib" in f.fix


@pytest.mark.parametrize("paste, so", [
    ("yolact-edge-186-nvrtc-builtins-11-1-missing.txt", "libnvrtc-builtins.so.11.1"),
    ("chainer-4813-nvrtc-builtins-unversioned-missing.txt", "libnvrtc-builtins.so"),
])
def test_other_threads_name_their_own_version(paste, so):
    (f,) = fired("cuda-runtime-library-missing", recorded_paste_facts(paste))
    assert f"cannot open {so}," in f.message and f.evidence["library"] == so
    assert "LD_LIBRARY_PATH" in f.fix


def test_another_nvrtc_error_is_not_a_missing_library():
    # "invalid value for --gpu-architecture": NVRTC itself loaded and refused the GPU's architecture
    findings, _ = run_rule("cuda-runtime-library-missing", recorded_paste_facts("maskpls-18-nvrtc-invalid-gpu-architecture.txt"))
    assert findings == []


def test_nvjitlink_missing_for_a_cuda_12_library_names_its_wheel_folder():
    # libraries.toml's libnvJitLink entry (nvidia-nvjitlink-cu12's wheel: nvidia/nvjitlink/lib)
    (f,) = fired("cuda-runtime-library-missing", recorded_paste_facts("pytorch-90676-dlopen-libnvjitlink-12.txt"))
    assert f.message.startswith("libnvJitLink.so.12 cannot be loaded") and "/nvidia/nvjitlink/lib" in f.fix
