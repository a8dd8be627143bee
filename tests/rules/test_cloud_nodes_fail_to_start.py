"""cloud-nodes-fail-to-start on real pastes of Slurm power saving gone wrong (aws-parallelcluster
#5919: not resumed by ResumeTimeout; SchedMD/slurm #131: power_save: program exit status; aws-eda-
slurm-cluster #55: State=DOWN+CLOUD+POWERED_DOWN), and silent where the paste shows only jobs
pending for Resources and idle~ / idle# / idle% nodes (the ordinary states of a cloud cluster)."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts


def test_resumetimeout_line_names_the_node():
    (f,) = fired("cloud-nodes-fail-to-start", recorded_paste_facts("parallelcluster-5919-not-resumed-by-resumetimeout.txt"))
    assert "ua1-pipeline-dy-i6i4-1" in f.message and "ResumeTimeout" in f.message and f.severity == "error"
    assert "sinfo -R" in f.fix and "state=resume" in f.fix


def test_power_save_program_exit_status():
    (f,) = fired("cloud-nodes-fail-to-start", recorded_paste_facts("slurm-131-power-save-program-exit-status.txt"))
    assert "exit status 1" in f.message and f.severity == "error"


def test_a_node_left_down_and_powered_down_is_a_warning():
    (f,) = fired("cloud-nodes-fail-to-start", recorded_paste_facts("aws-eda-slurm-cluster-55-node-down-cloud-powered-down.txt"))
    assert "DOWN+CLOUD+POWERED_DOWN" in f.message and f.severity == "warning"


def test_the_reason_and_sinfos_down_tilde():
    # the reason as sinfo -R prints it, and sinfo's default listing (power_save.c, slurm_protocol_defs.c: filled in)
    text = ("$ sinfo -R\nREASON               USER      TIMESTAMP           NODELIST\n"
            "ResumeTimeout reached slurm     2026-01-01T09:00:00 cloud-[1-4]\n"
            "$ sinfo\nPARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\ncloud*       up   infinite      4  down~ cloud-[1-4]\n")
    (f,) = fired("cloud-nodes-fail-to-start", told_facts(text))
    assert "ResumeTimeout" in f.message and f.severity == "error"


def test_silent_on_pending_jobs_and_resting_cloud_nodes(tmp_path):
    text = ("$ sinfo\nPARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n"
            "compute*     up   infinite     10  idle~ compute-[1-10]\n"
            "compute*     up   infinite      2  idle# compute-[11-12]\n"
            "compute*     up   infinite      1  idle% compute-13\n"
            "$ squeue\n             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "               233   compute test.slm     mike PD       0:00      1 (Resources)\n")
    assert not fired("cloud-nodes-fail-to-start", paste_facts(tmp_path, text))

