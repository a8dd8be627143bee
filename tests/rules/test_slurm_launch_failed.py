"""slurm-job-launch-failed-on-node on a real Slurm's own output (22.05.8, a Prolog that exits 1,
recorded on the project's VM) and public pastes of jobs held after their node failed to start them
(tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste, words", [
    # squeue's reason, the node's drain reason and slurmd's prolog line, from a real Slurm
    ("slurm-22.05-prolog-fails-launch-failed-requeued-held.txt", "the node's side (line 8: \"Prolog error"),
    ("burrmill-15-launch-failed-requeued-held.txt", "(launch failed requeued held)"),   # squeue, then scontrol's underscores
    ("c3nl-cluster-24-launch-failed-requeued-held.txt", "(line 1: \"# launch failed requeued held\")"),   # the title alone
])
def test_a_job_held_after_its_node_failed_to_launch_it(paste, words):
    (f,) = fired("slurm-job-launch-failed-on-node", recorded_paste_facts(paste))
    assert f.severity == "error" and words in f.message
    assert "Slurm requeued the job held after its node failed to launch it" in f.message
    assert f.fix.startswith("sinfo -R") and "scontrol release JOBID" in f.fix and "--exclude=NODE" in f.fix


def test_scontrols_underscored_reason_alone_is_read():
    facts = recorded_paste_facts("burrmill-15-launch-failed-requeued-held.txt")
    said = [s for s in facts["facts"]["ticket"]["symptoms"] if s.get("id") == "slurm_launch:launch-failed-requeued-held"]
    assert said and said[0]["line"] == 4   # the first of squeue's rows; scontrol's Reason= line is the same entry


def test_silent_on_a_job_pending_for_its_priority_or_resources():
    # squeue's ordinary reasons (the spool-broken and GRES pastes hold a real Slurm's own listing)
    assert not fired("slurm-job-launch-failed-on-node", recorded_paste_facts("slurm-22.05-gres-count-reported-lower-drain.txt"))


def test_srun_told_by_the_node_that_its_prolog_failed():
    # srun's "Task launch for STEP failed on node NODE: <slurmd's return code>", the Prolog's code
    # (slurm.toml ESLURMD_PROLOG_FAILED, read through the srun-task-launch form)
    facts = recorded_paste_facts("ubuntu-slurm-4-task-launch-job-prolog-failed.txt")
    said = [s for s in facts["facts"]["ticket"]["symptoms"] if s.get("id") == "slurm:ESLURMD_PROLOG_FAILED"]
    assert said and said[0]["line"] == 1
    (f,) = fired("slurm-job-launch-failed-on-node", facts)
    assert f.severity == "error"
    assert "(line 1: \"srun: error: Task launch for 23.0 failed on node hpc: Job prolog failed\")" in f.message
    assert f.fix.startswith("sinfo -R")
