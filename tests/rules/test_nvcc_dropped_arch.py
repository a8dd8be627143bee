"""nvcc-dropped-requested-arch on set AH's real build tickets (nvcc of a newer CUDA refusing compute_12;
CUDA 7.5 refusing compute_21, which names no virtual architecture) and on nvcc 13.5.37's own output for an
architecture CUDA 13 dropped (recorded 2026-11-26, knowledge/messages/nvcc.toml): the opposite of SW032."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _ticket(tmp_path, name: str):
    text = (FIXTURES / "tickets_blind_ah" / f"{name}.txt").read_text(encoding="utf-8")
    return paste_facts(tmp_path, text, name + ".txt")


def test_compute_12_is_a_tesla_architecture_cuda_dropped_after_6_5(tmp_path):
    facts = _ticket(tmp_path, "shoc-52-nvcc-dropped-compute-12")
    (f,) = fired("nvcc-dropped-requested-arch", facts)
    assert "compute_12" in f.message and "dropped after 6.5" in f.message
    assert "nvidia-smi --query-gpu=name,compute_cap" in f.fix
    assert not fired("nvcc-too-old-for-gpu", facts)


def test_compute_21_names_no_virtual_architecture_and_the_fix_names_compute_20(tmp_path):
    (f,) = fired("nvcc-dropped-requested-arch", _ticket(tmp_path, "matconvnet-338-nvcc-7-5-rejects-compute-21"))
    assert "no CUDA release knows" in f.message and "compute_20" in f.message
    assert "-gencode arch=compute_20,code=sm_21" in f.fix and "CUDA 8.0 or older" in f.fix


@pytest.mark.parametrize("line, last", [
    ("nvcc fatal   : Unsupported gpu architecture 'compute_70'", "12.9"),   # nvcc 13.5.37, recorded
    ("nvcc fatal   : Value 'sm_35' is not defined for option 'gpu-architecture'", "11.8"),
    ("nvcc fatal   : Unsupported gpu architecture 'sm_30'", "10.2"),
])
def test_each_dropped_generation_names_its_last_release(tmp_path, line, last):
    (f,) = fired("nvcc-dropped-requested-arch", paste_facts(tmp_path, line + "\n", "old.txt"))
    assert f"dropped after {last}" in f.message


@pytest.mark.parametrize("arch", ["compute_86", "sm_90", "sm_99", "sm_75"])
def test_a_current_or_unknown_architecture_is_not_this_diagnosis(tmp_path, arch):
    facts = paste_facts(tmp_path, f"nvcc fatal   : Unsupported gpu architecture '{arch}'\n", "new.txt")
    assert not fired("nvcc-dropped-requested-arch", facts)
