"""slurm-node-failure on the other batch systems' words for a node of the job lost
(knowledge/messages/pbs_node_down.toml, pbs_exit.toml, lsf.toml, flux.toml, htcondor.toml, sge.toml),
each answered with that batch system's own commands; the neighbours that say no host was lost (a
job kept running, one that never started, a disconnect that may reconnect, an eviction, a program
that failed on one node) are read and stay silent. Real pastes: tests/fixtures/pastes/SOURCES.md."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages


def test_htcondors_failed_reconnect_is_a_lost_host_with_htcondors_fix():
    g = recorded_paste_facts("pycbc-2596-htcondor-reconnection-failed.txt")
    (f,) = fired("slurm-node-failure", g)
    assert f.severity == "error"
    assert f.message.startswith("HTCondor ended (or requeued) the job") and "line 5" in f.message
    assert "condor_history -l 6509789 " in f.fix and 'Machine != "CRUSH-SUGWG-OSG-10-5-137-88"' in f.fix
    assert "sacct" not in f.fix and "sbatch" not in f.fix
    assert not fired("slurm-time-limit", g)


def test_torques_sister_eof_names_the_lost_node_with_pbss_fix():
    g = recorded_paste_facts("ompi-users-16021-torque-sister-eof.txt")
    (f,) = fired("slurm-node-failure", g)
    assert f.message.startswith("PBS ended (or requeued) the job") and "line 2" in f.message
    assert "pbsnodes n314" in f.fix and "tracejob" in f.fix and "sacct" not in f.fix


def test_fluxs_node_failure_note_fires_with_fluxs_fix():
    (f,) = fired("slurm-node-failure", recorded_paste_facts("flux-core-6653-flux-jobs-node-failure.txt"))
    assert f.message.startswith("Flux ended (or requeued) the job") and "node failure on elcap8767" in f.message
    assert "flux resource drain" in f.fix and "--requires=-host:elcap8767" in f.fix and "sinfo" not in f.fix


@pytest.mark.parametrize("text, who, node", [
    # the emitters' own format strings, values filled in (no public paste found for these wordings)
    ("03/02/2024 10:11:12  S    Job requeued, execution node r1i0n5 down\n", "PBS", "r1i0n5"),   # OpenPBS server
    ("Aborted by PBS Server \nJob deleted, execution node r1i0n5 down\n", "PBS", "r1i0n5"),        # its abort mail
    ("03/02/2024 10:11:12;0008;pbs_mom;Job;1234.pbs01;node EOF 1 (r1i0n5)\n", "PBS", "r1i0n5"),   # OpenPBS MOM
    ("lost communication with r1i0n5 for > 300 secs, killing job now\n", "PBS", "r1i0n5"),
    ("lost connection to MS on r1i0n4\n", "PBS", "r1i0n4"),
    ("=>> PBS: job killed: node 1 (n022) requested job terminate, 'EOF' (code 1099) - received SISTER_EOF "
     "attempting to communicate with sister MOM's\n", "PBS", "n022"),                              # TORQUE MOM
    ("    Exit_status = -14\n", "PBS", None),                                                      # JOB_EXEC_RERUN_SIS_FAIL
    ("    Exit_status = -20\n", "PBS", None),                                                      # JOB_EXEC_RERUN_MS_FAIL
    ("TERM_REMOVE_HUNG_JOB: job removed from LSF.\n", "LSF", None),
    ("TERM_SLURM: job terminated abnormally in SLURM (node failure).\n", "LSF", None),
    ("0.912s: job.exception type=exec severity=0 node failure on fluke12 (rank 11)\n", "Flux", "fluke12"),
    ("job.exception type=exec severity=0 lost contact with job shell on broker fluke12 (rank 11)\n", "Flux", "fluke12"),
])
def test_each_schedulers_node_loss_fires_with_its_own_commands(text, who, node):
    (f,) = fired("slurm-node-failure", told_facts(text))
    assert f.severity == "error" and f.message.startswith(f"{who} ended (or requeued) the job")
    assert "sacct" not in f.fix and "sbatch --exclude" not in f.fix
    assert (node or "NODE") in f.fix


def test_a_mom_log_line_names_the_job():
    (f,) = fired("slurm-node-failure", told_facts("03/02/2024 10:11:12;0008;pbs_mom;Job;1234.pbs01;node EOF 1 (r1i0n5)\n"))
    assert f.fix.startswith("tracejob 1234 ") and "pbsnodes r1i0n5" in f.fix


def test_grid_engines_pushed_rescheduling_is_info_it_is_qmod_rj_too():
    # MSG_RU_MSGFILEINFO (daimh/sge 05d828f msg_qmaster.h) as a messages file line, values filled in
    (f,) = fired("slurm-node-failure", told_facts(
        "05/04/2011 03:36:38|worker|master|I|Pushed rescheduling of job 4711.1 on host node17\n"))
    assert f.severity == "info" and f.message.startswith("Grid Engine rescheduled or ended the job off its host")
    assert "qmod -rj" in f.message and "qhost -h node17" in f.fix and "h='!node17'" in f.fix


def test_grid_engines_reaping_is_info_too():
    (f,) = fired("slurm-node-failure", told_facts("05/04/2011 03:36:38|worker|master|I|Reaping not restartable job 4711.1\n"))
    assert f.severity == "info" and f.fix.startswith("qacct -j 4711 ")


def test_slurms_own_line_keeps_slurms_fix():
    (f,) = fired("slurm-node-failure", told_facts(
        "slurmstepd: error: *** JOB 1234 ON node17 CANCELLED AT 2024-03-02T10:11:12 DUE TO NODE FAILURE, "
        "SEE SLURMCTLD LOG FOR DETAILS ***\n"))
    assert f.message.startswith("Slurm ended the job") and "sacct -j 1234" in f.fix


@pytest.mark.parametrize("paste", [
    "pycbc-2596-htcondor-disconnected-only.txt",   # a disconnect that may still reconnect
    "flux-core-4195-exec-start-failed.txt",       # the program missing on the nodes: exec exceptions, no node lost
    "fedml-588-mpirun-rank-exited-signal-11-segfault.txt",   # a rank's segfault on one node
])
def test_silent_where_no_host_was_lost(paste):
    assert not fired("slurm-node-failure", recorded_paste_facts(paste))


@pytest.mark.parametrize("text, symptom", [
    # the emitters' own format strings, values filled in: read and quoted back, no finding
    ("Job never started, execution node r1i0n5 down\n", "pbs_node_down:openpbs-job-never-started-node-down"),
    ("ignoring node EOF 1 from failed mom r1i0n5 as job is tolerant of node failures\n",
     "pbs_node_down:openpbs-node-eof-tolerated"),
    ("lost communication with r1i0n5, not killing job yet\n", "pbs_node_down:openpbs-lost-communication-waiting"),
    ("job not running, may have been requeued on node failure\n", "pbs_node_down:openpbs-obit-not-running"),
    ("=>> PBS: job killed: node 1 (n022) requested job terminate, 'badpoll' (code 1001)\n",
     "pbs_node_down:torque-sister-killdone-badpoll"),
    ("=>> PBS: job killed: node 1 (r1i0n5) requested job die, code 15009\n", "pbs_job_end:killed-sister-node"),
    ("    Exit_status = -11\n", "pbs_exit:JOB_EXEC_RERUN"),          # qrerun (OpenPBS) or TORQUE's walltime
    ("TERM_ZOMBIE: job exited while LSF is not available.\n", "lsf:TERM_ZOMBIE"),
    ("004 (123.000.000) 03/27 15:12:43 Job was evicted.\n", "htcondor:event-evicted"),
    ("007 (123.000.000) 03/27 15:12:43 Shadow exception!\n", "htcondor:event-shadow-exception"),
    ("Forced rescheduling of job 4711.1 on host node17\n", "sge:qmaster-forced-rescheduling"),
    ("failed       25  : rescheduling\n", "sge:qacct-failed-25"),
    ("The job 4711.1 is not restartable\n", "sge:qmaster-not-restartable"),
])
def test_neighbours_are_read_but_are_no_node_failure(text, symptom):
    assert symptom in {s["id"] for s in find_messages(text)}
    assert not fired("slurm-node-failure", told_facts(text))
