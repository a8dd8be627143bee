"""`check` run from a virtual environment asks python3 on PATH, which may not be the venv's: the
Python line says which interpreter it asked and how it was chosen, and when that one has no torch
but hpcdoctor's own interpreter has, it names that one with the flag. Real interpreters: a bare
venv with no torch first on PATH, and the test interpreter with the CPU build of torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

from conftest import NODES, torch_python


@pytest.fixture(scope="module")
def py():
    py = torch_python()
    if subprocess.run([py, "-c", "import hpcdoctor"], capture_output=True).returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"{py} has torch but not hpcdoctor: install both in one environment")
        pytest.skip(f"{py} has torch but not hpcdoctor")
    return py


@pytest.fixture(scope="module")
def bare(tmp_path_factory):
    """A venv without pip or torch: the system python3 a user gets when the venv is not activated."""
    folder = tmp_path_factory.mktemp("bare")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True, timeout=120)
    python3 = folder / "venv" / "bin" / "python3"
    assert subprocess.run([str(python3), "-c", "import torch"], capture_output=True).returncode != 0
    return python3


def _check(py, path_first, *args):
    # One run gives both: the terminal report on stdout and the JSON report in --output's file
    # (the way a job log keeps both), so each interpreter is asked once, not twice.
    env = dict(os.environ, NO_COLOR="1", PATH=f"{path_first}{os.pathsep}{os.environ.get('PATH', '')}")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        text = subprocess.run([py, "-m", "hpcdoctor", "check", "--fail-on", "never", "--format", "json", "--output", out,
                               *args], capture_output=True, text=True, env=env, timeout=120)
        assert text.returncode == 0, text.stderr
        with open(out) as f:
            report = json.load(f)
    (line,) = [x for x in text.stdout.splitlines() if x.startswith("Python")]
    assert report["facts"]["torch"] is not None, report["unknown"].get("torch")
    return line, report["facts"]["torch"]


def test_no_torch_on_path_names_the_interpreter_that_has_it(py, bare):
    line, torch = _check(py, bare.parent)
    assert torch["installed"] is False and torch["target_python"] == str(bare)
    assert torch["chosen_by"] == "python3 on PATH"
    assert torch["own_python"]["path"] == py and torch["own_python"]["torch"]
    assert f"no torch installed in {bare} (python3 on PATH)" in line, line
    assert f"hpcdoctor's own {py} has torch {torch['own_python']['torch']}: add --python {py}" in line, line


def test_the_named_interpreter_gets_no_advice(py, bare):
    """--python is the user's choice: said as it is, with no other interpreter offered."""
    line, torch = _check(py, bare.parent, "--python", str(bare))
    assert torch["chosen_by"] == "--python" and "own_python" not in torch
    assert line.rstrip().endswith(f"no torch installed in {bare}"), line


def test_torch_on_path_is_named_with_how_it_was_chosen(py):
    # The venv's own bin folder first, as activating it does (a link elsewhere would lose the venv).
    folder = os.path.dirname(py)
    assert os.path.exists(os.path.join(folder, "python3")), folder
    line, torch = _check(py, folder)
    assert torch["installed"] is True and "own_python" not in torch
    assert line.endswith(" (python3 on PATH)") and f"torch {torch['version']}" in line, line


def test_a_replay_says_nothing_about_the_replaying_machine(py, bare):
    _, torch = _check(py, bare.parent, "--from", str(NODES / "h100-kvm-1gpu"))
    assert "chosen_by" not in torch and "own_python" not in torch


def test_diff_leaves_out_how_hpcdoctor_was_run(py, bare, tmp_path):
    """A live report (with the hint) against a snapshot of the same node: the hint is no difference."""
    env = dict(os.environ, PATH=f"{bare.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    report, snap = tmp_path / "live.json", tmp_path / "snap"
    for args in (["check", "--format", "json", "-o", str(report), "--fail-on", "never"], ["snapshot", str(snap)]):
        assert subprocess.run([py, "-m", "hpcdoctor", *args], env=env, capture_output=True, timeout=120).returncode == 0
    assert "own_python" in json.loads(report.read_text())["facts"]["torch"]
    res = subprocess.run([py, "-m", "hpcdoctor", "diff", str(report), str(snap), "--format", "json"],
                         env=env, capture_output=True, text=True, timeout=120)
    paths = {d["path"] for d in json.loads(res.stdout)["facts"]}
    assert not {p for p in paths if p.startswith(("torch.chosen_by", "torch.own_python"))}, paths
