"""ptxas-too-old on blind set D's real Triton tickets (read in-process): a GPU name the bundled
ptxas does not know, PTX newer than a hand-run ptxas, and Triton's own PTX-version table bug (a
healthy control: inside Triton's compile the PTX version came from the same ptxas)."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _ticket(tmp_path, name: str):
    text = (FIXTURES / "tickets_blind_d" / f"{name}.txt").read_text(encoding="utf-8")
    return paste_facts(tmp_path, text, name + ".txt")


def test_a_gpu_name_the_ptxas_does_not_know_points_triton_at_one_that_does(tmp_path):
    (f,) = fired("ptxas-too-old", _ticket(tmp_path, "triton-8539-ptxas-sm121a-not-defined-dgx-spark"))
    assert "does not know sm_121a" in f.message
    assert "grep -q \"'sm_121a'\" && export TRITON_PTXAS_PATH=\"$p\"" in f.fix


def test_ptx_newer_than_a_hand_run_ptxas_names_both_versions(tmp_path):
    (f,) = fired("ptxas-too-old", _ticket(tmp_path, "triton-5385-ptxas-7-8-too-old-for-ptx-8-4"))
    assert "up to 7.8" in f.message and "PTX 8.4" in f.message and "'backends', 'nvidia', 'bin', 'ptxas'" in f.fix


def test_an_unsupported_version_inside_tritons_compile_is_tritons_table_not_the_node(tmp_path):
    assert not fired("ptxas-too-old", _ticket(tmp_path, "triton-4576-ptx-version-mapping-cuda-12-6-healthy"))
