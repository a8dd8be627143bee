"""Advice right for the node in front of it: the CPUs a rank may run on are the truth, the
allocation's numbers a claim; one severity story per rule."""

from __future__ import annotations

import json

from conftest import NODES, report_of, run_main
from hpcdoctor import engine
from hpcdoctor.report import envlines, rank
from rulekit import fired, with_env

TWO_CPUS = {"affinity.allowed_cpus": [0, 1], "affinity.allowed_count": 2}
JOB = {"SLURM_JOB_ID": "7", "SLURM_CPUS_PER_TASK": "8", "SLURM_NTASKS": "1"}


def test_cpus_per_task_above_the_allowed_cpus_advises_the_allowed_count():
    g = with_env("h100-kvm-1gpu", JOB, **TWO_CPUS)
    (f,) = fired("omp-threads-unset", g)
    assert "should use 2 thread(s)" in f.message and "SLURM_CPUS_PER_TASK=8" in f.message
    assert f.fix.startswith("export OMP_NUM_THREADS=2 ") and f.env["OMP_NUM_THREADS"] == "2"
    doc = {"findings": [f.to_json()]}
    assert "export OMP_NUM_THREADS=2" in envlines.render(doc, "bash", g["facts"]["env"]["vars"])


def test_eight_threads_on_two_allowed_cpus_fire_and_show_in_the_rank_report():
    g = with_env("h100-kvm-1gpu", {**JOB, "OMP_NUM_THREADS": "8"}, **TWO_CPUS)
    (mismatch,) = fired("omp-threads-mismatch", g)
    assert mismatch.severity == "warning" and "2 CPU(s)" in mismatch.message
    (over,) = fired("cpu-oversubscribed", g)
    assert "8 threads on 2 allowed CPUs" in over.message
    doc = {"facts": g["facts"], "unknown": g["unknown"], "findings": [mismatch.to_json(), over.to_json()]}
    line = rank.line(doc)
    assert "warning omp-threads-mismatch" in line and "warning cpu-oversubscribed" in line
    assert not line.endswith("ok")


def test_rank_report_json_prints_json():
    res = run_main("check", "--rank-report", "--format", "json", "--from", str(NODES / "h100-kvm-1gpu"))
    record = json.loads(res.stdout)
    assert record["host"] == "vm" and record["cpus"] == "0-15" and isinstance(record["findings"], list)


def test_a_rule_severity_is_one_story_in_rules_explain_and_findings():
    rules, _ = engine.load_rules()
    thr001 = engine.find_rule(rules, "THR001")
    (f,) = fired("omp-threads-unset", with_env("h100-kvm-1gpu", {"LOCAL_WORLD_SIZE": "8", "LOCAL_RANK": "0"}))
    assert f.severity == "warning" and f.severity in thr001.also
    explain = run_main("explain", "THR001").stdout.splitlines()[0]
    assert "advice (warning when several ranks share this node)" in explain
    listing = json.loads(run_main("rules", "--format", "json").stdout)
    assert next(r for r in listing if r["code"] == "THR001")["also"] == thr001.also
    table = [ln for ln in run_main("rules").stdout.splitlines() if "THR001" in ln]
    assert "advice/warning" in table[0]


def test_an_undeclared_severity_is_a_rule_failure_not_a_second_story():
    @engine.rule("TST999", "test-undeclared", "advice", "a test rule")
    def undeclared(f):
        yield engine.Hit(message="m", fix="true", severity="error")

    findings, skipped = engine.evaluate([undeclared._hpcdoctor_rule], None)
    assert not findings and "not declared" in skipped[0]["reason"]


def test_live_report_reads_json():
    doc = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"))
    assert doc["unchecked"] == []
