"""torch-import-failed (SW001) on Python's own "No module named 'torch'" (knowledge/messages/python_import.toml),
from real public pastes (tests/fixtures/pastes/SOURCES.md): Python 2's bare form after a job script's failed
module load, and Python 3's from two Slurm ranks; silent for another module or a submodule of torch."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


@pytest.mark.parametrize("paste, line", [
    ("trixie-70-lmod-unknown-conda-then-no-module-torch.txt", 20),
    ("weathergenerator-1104-slurm-ranks-no-module-torch.txt", 1),
])
def test_no_module_named_torch_is_the_interpreter_that_ran(paste, line):
    (f,) = fired("torch-import-failed", recorded_paste_facts(paste))
    assert f.severity == "error" and f"(line {line}:" in f.message and "has no torch on its path" in f.message
    assert f.fix.startswith("python3 -c 'import sys; print(sys.executable, sys.prefix)'")


def test_another_module_or_a_submodule_of_torch_is_not_torch_missing(tmp_path):
    # set G's healthy control: mpi4py not installed, the user's own environment
    healthy = recorded_paste_facts("../tickets_blind_g/radical-pilot-1110-mpi4py-not-installed-healthy.txt")
    assert run_rule("torch-import-failed", healthy)[0] == []   # no torch facts: the rule is not judged, and finds nothing
    # CPython's message for a submodule, its format filled in: torch is there, a part of it is not
    assert run_rule("torch-import-failed", paste_facts(tmp_path, "ModuleNotFoundError: No module named 'torch._C'\n"))[0] == []
