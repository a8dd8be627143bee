"""slurm-constraint-feature-undefined on real refusals of a --constraint (PTATO #4: a pipeline's
#SBATCH --constraint=avx2; pyjip #52: no constraint shown) and on slurmctld's own log lines (their
format strings filled in: no public paste of them was found); silent on a request alone and on
another refusal."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts


def test_the_pipelines_constraint_is_quoted_with_the_refusal():
    (f,) = fired("slurm-constraint-feature-undefined", recorded_paste_facts("ptato-4-constraint-feature-not-on-cluster.txt"))
    assert "Invalid feature specification" in f.message and '"avx2"' in f.message and "line 25" in f.message
    assert f.fix.startswith('sinfo -o "%20N %f"') and "--constraint=avx2" in f.fix
    assert f.severity == "error"


def test_a_refusal_without_the_request_says_where_a_constraint_can_come_from():
    (f,) = fired("slurm-constraint-feature-undefined", recorded_paste_facts("pyjip-52-sbatch-invalid-feature-specification.txt"))
    assert "SBATCH_CONSTRAINT" in f.message and '"' + "avx2" not in f.message


def test_slurmctlds_log_names_the_feature():
    # slurmctld 23.02+'s verbose line and its info line (job_scheduler.c format strings, filled in)
    text = ("sbatch: error: Batch job submission failed: Invalid feature specification\n"
            "slurmctld: verbose: Job specs feature skylake is not usable on any node: skylake&ib\n"
            "slurmctld: Job specs has invalid feature list: skylake&ib\n")
    (f,) = fired("slurm-constraint-feature-undefined", told_facts(text))
    assert '"skylake"' in f.message and "slurmctld's log" in f.message


def test_prefer_is_named_for_its_own_refusal():
    text = "salloc: error: Job submit/allocate failed: Invalid preferred feature specification\n"
    (f,) = fired("slurm-constraint-feature-undefined", told_facts(text))
    assert "--prefer" in f.message


def test_silent_on_a_constraint_alone_and_on_another_refusal(tmp_path):
    text = ("#!/bin/bash\n#SBATCH --constraint=avx2\n#SBATCH -n 1\nsrun hostname\n"
            "sbatch: error: Batch job submission failed: Invalid qos specification\n")
    assert not fired("slurm-constraint-feature-undefined", paste_facts(tmp_path, text))
    assert not fired("slurm-constraint-feature-undefined", told_facts("#SBATCH -C knl\n"))
