"""exported-module-function-breaks-shell (rules/shell_functions.py): bash refusing to import an
exported module function, on set S's ticket and other threads' pastes."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_paste_facts

S = "../tickets_blind_s/"   # set S, unsealed: recorded_paste_facts reads fixtures/pastes/<name>


def test_exported_module_function_in_italian_and_english():
    (f,) = fired("exported-module-function-breaks-shell",
                 recorded_paste_facts(S + "linter-pylama-72-environment-modules-bash-function-import.txt"))
    assert f.severity == "warning" and f.evidence["function"] == "module" and "BASH_FUNC_module%%" in f.fix


@pytest.mark.parametrize("paste, func", [
    ("cerebro-shell-12-bash-cannot-import-module-function.txt", "module"),
    ("3d-dna-40-bash-4.0-old-module-function-format.txt", "module"),
])
def test_exported_module_function_other_threads(paste, func):
    (f,) = fired("exported-module-function-breaks-shell", recorded_paste_facts(paste))
    assert f.severity == "warning" and f.evidence["function"] == func


def test_exporting_the_module_function_on_purpose_is_silent():
    assert not fired("exported-module-function-breaks-shell",
                     told_paste_facts("envmodules-109-export-module-function-request-healthy.txt"))
