"""Environment-module tickets through the whole command (`check --from PASTE`): the module
system's own lines are read, named in the report, and answered as errors; a module error never
passes for a refusal (exit 2), and nothing else in those pastes is mistaken for a GPU or torch
problem."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from

PASTES = FIXTURES / "pastes"


@pytest.mark.parametrize("name, symptom, symbol", [
    ("hiop-524-lmod-unknown-and-not-loadable.txt", "lmod:e_Failed_Load", "module-unknown"),
    ("lmod-592-unknown-module-name-on-later-line.txt", "lmod:e_Failed_Load", "module-unknown"),
    ("rrfs-workflow-962-lmod-unknown-inside-modulefile.txt", "lmod:hub-requires-loading", "module-unknown"),
    ("envmodules-192-unable-to-locate-gcc.txt", "envmodules:locate-modulefile", "module-unknown"),
    ("trixie-17-modules32-unable-to-locate-conda.txt", "envmodules:locate-modulefile", "module-unknown"),
    ("batchspawner-246-slurm-script-module-command-not-found.txt", "shell:module-command-not-found", "module-command-missing"),
])
def test_a_module_ticket_is_read_and_answered(name, symptom, symbol):
    res = check_from(PASTES / name)
    assert res["rc"] == 1, res["stderr"]
    doc = res["doc"]
    read = {s["id"] for s in doc["facts"]["ticket"]["symptoms"]}
    assert symptom in read
    findings = {f["symbol"]: f for f in doc["findings"]}
    assert findings[symbol]["severity"] == "error"
    # only the module rules answer: no GPU, driver or torch finding from a module ticket
    # (Modules 3.2's own line also names the tool's release: environment-modules-too-old, a module rule too)
    assert set(findings) <= {"module-unknown", "module-not-loadable", "module-conflict", "module-command-missing",
                             "environment-modules-too-old"}
