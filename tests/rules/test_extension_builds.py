"""torch-extension-cuda-mismatch (rules/extension_builds.py): each extension build's own refusal of a
CUDA toolkit other than torch's, read through the real catalogue (torch.toml, extension_builds.toml);
set U's pastes and public threads (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts

U = "../tickets_blind_u/"
SYM = "torch-extension-cuda-mismatch"


def test_deepspeeds_op_builder_names_both_versions():
    (f,) = fired(SYM, recorded_paste_facts(U + "mgm-91-system-cuda-differs-from-torch-cuda.txt"))
    assert f.severity == "error" and "DeepSpeed's op builder" in f.message
    assert "CUDA 12.2" in f.message and "CUDA 11.7" in f.message
    assert "cuda-toolkit=11.7" in f.fix and "download.pytorch.org/whl/cu12" in f.fix


def test_the_same_builder_copied_into_another_project_without_its_prefix():
    # bytedance/lightseq#526: DeepSpeed's sentence without ">- DeepSpeed Op Builder: "
    (f,) = fired(SYM, recorded_paste_facts("lightseq-526-installed-cuda-12-3-torch-12-1.txt"))
    assert f.severity == "error" and "CUDA 12.3" in f.message and "CUDA 12.1" in f.message


def test_a_title_naming_only_the_installed_cuda_is_a_warning():
    (f,) = fired(SYM, recorded_paste_facts(U + "deepspeed-mii-277-system-cuda-differs-from-torch-cuda.txt"))
    assert f.severity == "warning" and "11.7" in f.message and "does not say which" in f.message
    assert "whl/cu11" in f.fix


def test_apex_names_torchs_cuda():
    (f,) = fired(SYM, recorded_paste_facts("apex-955-cuda-ext-torch-built-with-10-2.txt"))
    assert f.severity == "error" and "apex's setup.py" in f.message and "CUDA 10.2" in f.message
    assert "cuda-toolkit=10.2" in f.fix


def test_silent_where_nvcc_and_nvidia_smi_only_differ():
    # nvcc's toolkit and the driver's CUDA differing is not a build refusing a toolkit
    assert not fired(SYM, recorded_paste_facts("backpacks-flash-attn-2-nvcc-nvidia-smi-differ.txt"))
