"""An unknown is never a pass: checks that matter and did not finish, in every output."""

from __future__ import annotations

import json
import os

import sys

import jsonschema

from conftest import ROOT, run_cli

SCHEMA = json.loads((ROOT / "hpcdoctor" / "schema" / "report.schema.json").read_text())
# A named interpreter makes the torch probe matter; no interpreter starts within 10 ms, so at
# least that probe is always unknown, whatever this machine's speed.
TINY = ("--budget", "0.01", "--python", sys.executable)


def _hanging_tool(tmp_path, name="nvidia-smi"):
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    tool = bindir / name
    tool.write_text("#!/bin/sh\nexec sleep 60\n")
    tool.chmod(0o755)
    return {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_nhc_with_no_time_to_probe_drains_with_a_reason():
    res = run_cli("nhc", *TINY)
    assert res.returncode == 1, res.stdout + res.stderr
    lines = res.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hpcdoctor: ")
    assert "budget" in lines[0]


def test_check_with_no_time_to_probe_never_says_no_findings():
    res = run_cli("check", *TINY)
    assert "✓ no findings" not in res.stdout
    assert "Could not check" in res.stdout and "? python" in res.stdout
    assert res.returncode in (1, 3), res.stdout
    doc = json.loads(run_cli("check", *TINY, "--format", "json", "--fail-on", "never").stdout)
    quiet = run_cli("check", "--budget", "0.01", "--python", sys.executable, "--select", "GPU001")
    assert "no findings in what could be checked" in quiet.stdout and quiet.returncode == 3
    assert doc["unchecked"]


def test_quiet_says_incomplete_in_one_line_and_fails():
    res = run_cli("check", *TINY, "--quiet", "--fail-on", "error")
    assert res.returncode == 3
    assert [ln for ln in res.stdout.splitlines() if ln.startswith("hpcdoctor: incomplete: could not check")]


def test_fail_on_never_is_never_a_failure_even_when_incomplete():
    res = run_cli("check", *TINY, "--fail-on", "never", "--select", "GPU001")
    assert res.returncode == 0
    assert "no findings in what could be checked" in res.stdout


def test_json_lists_unchecked_probes_and_validates():
    res = run_cli("check", *TINY, "--format", "json", "--select", "GPU001")
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, SCHEMA)
    probes = {u["area"]: u["reason"] for u in doc["unchecked"]}
    assert "budget" in probes["python"]
    assert res.returncode == 3


def test_markdown_says_what_could_not_be_checked():
    res = run_cli("check", *TINY, "--format", "markdown", "--select", "GPU001")
    assert "No problems found." not in res.stdout
    assert "No problems found in what could be checked." in res.stdout
    assert "**Could not be checked**" in res.stdout


def test_hanging_nvidia_smi_drains_in_nhc(tmp_path):
    res = run_cli("nhc", "--budget", "1.5", env=_hanging_tool(tmp_path))
    assert res.returncode == 1, res.stdout + res.stderr
    assert res.stdout.startswith("hpcdoctor: could not check gpu")


def test_site_may_keep_an_unknown_gpu_from_draining(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[health]\nunknown_gpu = "warn"\n')
    res = run_cli("nhc", "--budget", "1.5", "--config", str(cfg), env=_hanging_tool(tmp_path))
    assert res.returncode == 0 and res.stdout == ""
    assert "could not check gpu" in res.stderr and "not draining" in res.stderr


def test_unknown_gpu_policy_is_validated(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[health]\nunknown_gpu = "ignore"\n')
    res = run_cli("nhc", "--config", str(cfg))
    assert res.returncode == 2 and "unknown_gpu" in res.stderr


def test_a_python_that_does_not_exist_is_not_a_pass():
    res = run_cli("check", "--python", "/nonexistent/python")
    assert res.returncode == 3, res.stdout
    assert "/nonexistent/python does not exist" in res.stdout
    res = run_cli("check", "--python", "/nonexistent/python", "--format", "json")
    assert [u for u in json.loads(res.stdout)["unchecked"] if u["area"] == "python"]


def test_unchecked_rules_of_what_matters():
    from hpcdoctor.verdict import unchecked

    base = {"source": {"mode": "live"}, "depth": "fast",
            "facts": {"cpu": {}, "affinity": {}, "gpus": []}, "unknown": {"torch": "no python3"}}
    assert unchecked(base) == []  # a torch stack nobody asked about does not hold the verdict open
    assert [u["area"] for u in unchecked(base, python_named=True)] == ["python"]
    gpu_unknown = dict(base, facts={"cpu": {}, "affinity": {}}, unknown={"gpus": "nvidia-smi -q -x timed out"})
    assert [u["area"] for u in unchecked(gpu_unknown)] == ["gpu"]
    assert unchecked(dict(gpu_unknown, source={"mode": "paste"})) == []
