"""The broken-line note is said only where a line broke (issue 24). collect_env prints keys that
hpcdoctor does not read ("CMake version", "Clang version"), sglang 0.2 printed nvcc -V whole
under "NVCC:", and a Markdown fence closes most pasted reports: none of these is a line a terminal
broke, and once 23 of the 24 corpus tickets with a GCC line were told "1 broken line(s) ... not
read: gcc"."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.triage import paste
from hpcdoctor.sysroot import SnapshotError

HERE = Path(__file__).parent.parent / "fixtures"
CORPUS = sorted((HERE / "tickets").glob("*.txt")) + sorted((HERE / "pastes").glob("*.txt"))


def _notes(path: Path):
    try:
        with paste.open_paste([str(path)]) as (_root, _recognised, notes):
            return notes
    except SnapshotError:
        return []


def test_the_corpus_is_there():
    assert len(CORPUS) > 100


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_no_well_formed_paste_is_told_of_a_broken_line(path):
    assert not [n for n in _notes(path) if "broken line" in n]


def test_the_gcc_line_of_a_real_report_is_read(tmp_path):
    """pytorch#43058's report: "GCC version" then "CMake version: Could not collect"."""
    from hpcdoctor.parse.collect_env import parse_collect_env

    text = (HERE / "pastes" / "pytorch-43058-cuda102-driver418.txt").read_text(encoding="utf-8")
    assert parse_collect_env(text)["torch"]["gcc"] == "(GCC) 4.8.5 20150623 (Red Hat 4.8.5-36)"


def test_a_gcc_line_that_did_break_is_still_said(tmp_path):
    text = (HERE / "pastes" / "pytorch-43058-cuda102-driver418.txt").read_text(encoding="utf-8")
    broken = text.replace("GCC version: (GCC) 4.8.5 20150623 (Red", "GCC version: (GCC) 4.8.5 20150623 (Red\n", 1)
    path = tmp_path / "broken.txt"
    path.write_text(broken, encoding="utf-8")
    (note,) = [n for n in _notes(path) if "broken line" in n]
    assert "not read: gcc" in note


def test_sglang_nvcc_block_is_a_value_not_a_break():
    from hpcdoctor.parse.collect_env import parse_collect_env

    text = (HERE / "tickets" / "sglang-831-v100-rmsnorm-no-kernel-image.txt").read_text(encoding="utf-8")
    torch = parse_collect_env(text[text.index("Python: 3.11"):])["torch"]
    assert torch["system_cuda_runtime"] == "12.4.99"
    assert not torch.get("lines_cut")
