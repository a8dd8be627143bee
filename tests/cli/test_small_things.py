"""Small things a user trips on: closed pipes, archive names, pyenv shims, diff wording."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import NODES, run_cli


def _exit_of_writer(*args):
    """The exit code of hpcdoctor writing into a pipe the reader has already closed."""
    cmd = " ".join([sys.executable, "-m", "hpcdoctor", *args])
    res = subprocess.run(["bash", "-c", f"{cmd} | true; exit ${{PIPESTATUS[0]}}"], capture_output=True, text=True,
                         timeout=60)
    return res.returncode, res.stderr


def test_a_closed_pipe_is_not_a_failure():
    for args in (("check", "--fail-on", "never"), ("explain", "THR001"), ("rules",)):
        rc, err = _exit_of_writer(*args)
        assert rc == 0 and "Traceback" not in err and "BrokenPipe" not in err, (args, rc, err)


def test_a_closed_pipe_keeps_the_verdict():
    rc, _ = _exit_of_writer("check", "--from", str(NODES / "cpu-kvm-2core"), "--fail-on", "advice")
    assert rc == 1  # advice findings at --fail-on advice: still a failure, read or not


def test_snapshot_refuses_archive_names_it_cannot_write(tmp_path):
    for name in ("out.zip", "out.tar"):
        res = run_cli("snapshot", str(tmp_path / name))
        assert res.returncode == 2 and ".tar.gz" in res.stderr, res.stderr
        assert not (tmp_path / name).exists()


def test_python_line_names_the_interpreter_a_shim_runs(tmp_path):
    shim = tmp_path / "shims" / "python3"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    res = run_cli("check", "--python", str(shim), "--format", "json", "--fail-on", "never")
    torch = json.loads(res.stdout)["facts"]["torch"]
    assert torch["target_python"] == sys.executable and torch["invoked_as"] == str(shim)
    text = run_cli("check", "--python", str(shim), "--fail-on", "never").stdout
    python_line = next(ln for ln in text.splitlines() if ln.startswith("Python"))
    assert sys.executable in python_line


def test_diff_of_a_live_report_and_a_snapshot_of_the_same_node(tmp_path):
    snap, report = tmp_path / "snap", tmp_path / "live.json"
    assert run_cli("snapshot", str(snap)).returncode == 0
    run_cli("check", "--format", "json", "-o", str(report), "--fail-on", "never")
    res = run_cli("diff", str(report), str(snap), "--format", "json")
    paths = {d["path"] for d in json.loads(res.stdout)["facts"]}
    assert not paths & {"amd.error", "nvidia.error"}, paths
