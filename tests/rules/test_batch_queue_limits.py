"""A PBS/TORQUE server refusing a job over its queue's maximum, read from the server's own words
(knowledge/messages/pbs.toml) in real public pastes (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule, told_facts
from hpcdoctor.triage.messages import find_messages

WALLTIME = "e3sm-1318-qsub-walltime-exceeds-queue-max.txt"
MEM = "cbio-cluster-93-qsub-mem-exceeds-queue-max.txt"


def test_walltime_over_the_queue_maximum_is_the_time_rule_with_the_pbs_fix():
    (f,) = fired("slurm-time-request-exceeds-limit", recorded_paste_facts(WALLTIME))
    assert "the PBS server refuses the job for its walltime (line 9" in f.message
    assert "longer than the queue's maximum (resources_max.walltime)" in f.message
    assert f.fix.startswith("qstat -Q -f QUEUE") and "qsub -l walltime=" in f.fix and "sbatch" not in f.fix
    assert not fired("batch-queue-mem-limit-exceeded", recorded_paste_facts(WALLTIME))


def test_memory_over_the_queue_maximum():
    (f,) = fired("batch-queue-mem-limit-exceeded", recorded_paste_facts(MEM))
    assert "refuses the job for its memory request (line 11" in f.message
    assert "the mem asked for is larger than the queue's maximum (resources_max.mem)" in f.message
    assert f.fix.startswith("qstat -Q -f QUEUE") and "qsub -l mem=" in f.fix
    assert not fired("slurm-time-request-exceeds-limit", recorded_paste_facts(MEM))



def test_a_refusal_that_names_no_resource_or_another_feeds_neither_rule():
    # the server's texts from TORQUE's svr_jobfunc.c / attr_fn_resc.c and OpenPBS's pbs_messages.c
    for text in ("qsub: submit error (Job exceeds queue resource limits MSG=cannot satisfy queue max nodect requirement)\n",
                 "qsub: submit error (Job exceeds queue resource limits MSG=Cannot satisfy queue min walltime requirement)\n",
                 "qsub: Job violates queue and/or server resource limits\n"):
        assert find_messages(text), text   # read, not refused
        g = told_facts(text)
        assert not fired("batch-queue-mem-limit-exceeded", g) and not fired("slurm-time-request-exceeds-limit", g)


def test_server_scope_and_other_memory_resources_are_named():
    (f,) = fired("batch-queue-mem-limit-exceeded",
                 told_facts("qsub: submit error (Job exceeds queue resource limits MSG=cannot satisfy server max pvmem requirement)\n"))
    assert "the pvmem asked for is larger than the server's maximum (resources_max.pvmem)" in f.message


def test_a_users_sentence_naming_a_walltime_above_the_queue_maximum():
    # roryk/ipython-cluster-helper#44: bcbio's TORQUE job files ask for 239 hours; the 'all' queue's maximum is 23:59:59
    (f,) = fired("slurm-time-request-exceeds-limit", recorded_paste_facts(
        "../tickets_blind_y/ipython-cluster-helper-44-torque-walltime-over-queue-max.txt"))
    assert "239:00:00" in f.message and "23:59:59" in f.message and "line 11" in f.message
    assert "resources_(max|default)" in f.fix


def test_a_walltime_within_the_queue_maximum_is_not_this():
    facts = told_facts("The job file has walltime=12:00:00, and the maximum walltime is 23:59:59 for that queue\n")
    assert run_rule("slurm-time-request-exceeds-limit", facts)[0] == []
    assert not fired("slurm-time-request-exceeds-limit", facts)
