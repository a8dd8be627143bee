"""nvcc-too-old-for-gpu on blind set E's real build tickets (nvcc rejecting compute_86), and on
nvcc 13.5.37's own output recorded on 2026-11-26 (nvidia-cuda-nvcc wheel): a refusal of an
architecture CUDA 13 dropped is a NEWER nvcc, never this diagnosis."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _ticket(tmp_path, name: str):
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    return paste_facts(tmp_path, text, name + ".txt")


@pytest.mark.parametrize("name", ["activesparseshifts-8-compute-86-cuda-11-0",
                                  "inplace-abn-192-compute-86-system-cuda-too-old",
                                  "naf-cbct-15-compute-86-rtx3090-build"])
def test_compute_86_refused_names_cuda_11_1_and_the_8_0_ptx_build(tmp_path, name):
    (f,) = fired("nvcc-too-old-for-gpu", _ticket(tmp_path, name))
    assert "does not know compute_86" in f.message and "older than CUDA 11.1" in f.message
    assert 'export TORCH_CUDA_ARCH_LIST="8.0+PTX"' in f.fix and "CUDA 11.0 or newer" in f.fix


def test_an_architecture_with_minor_0_gets_no_ptx_alternative(tmp_path):
    # nvcc 13.5.37's output for -arch=sm_99, with the architecture swapped for sm_90 (the form is nvcc's own).
    facts = paste_facts(tmp_path, "nvcc fatal   : Unsupported gpu architecture 'sm_90'\n", "sm90.txt")
    (f,) = fired("nvcc-too-old-for-gpu", facts)
    assert "older than CUDA 11.8" in f.message and "TORCH_CUDA_ARCH_LIST" not in f.fix


def test_the_gpu_code_form_is_read(tmp_path):
    facts = paste_facts(tmp_path, "nvcc fatal   : Value 'sm_89' is not defined for option 'gpu-code'\n", "code.txt")
    (f,) = fired("nvcc-too-old-for-gpu", facts)
    assert "does not know sm_89" in f.message


@pytest.mark.parametrize("arch", ["compute_70", "sm_35", "sm_99"])
def test_a_dropped_or_unknown_architecture_is_not_this_diagnosis(tmp_path, arch):
    # Recorded: CUDA 13.5's nvcc prints exactly this for -arch=compute_70, an architecture it dropped.
    facts = paste_facts(tmp_path, f"nvcc fatal   : Unsupported gpu architecture '{arch}'\n", "old.txt")
    assert not fired("nvcc-too-old-for-gpu", facts)
