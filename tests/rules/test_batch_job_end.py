"""slurm-time-limit on the other batch systems' words for the same end: a PBS MOM's (TORQUE, OpenPBS)
"=>> PBS: job killed: walltime", LSF's TERM_RUNLIMIT, Grid Engine's execd hard wall-clock line
(knowledge/messages/pbs_job_end.toml, lsf.toml, sge.toml); their other limits are read, not fired."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, who, fix", [
    ("canu-444-lsf-term-runlimit.txt", "LSF stopped the job", "#BSUB -W "),
    ("vsc-user-docs-175-pbs-walltime-killed.txt", "PBS stopped the job", "#PBS -l walltime="),
])
def test_a_real_walltime_kill_fires_with_its_schedulers_fix(paste, who, fix):
    (f,) = fired("slurm-time-limit", recorded_paste_facts(paste))
    assert f.message.startswith(who) and "not a failure of the program" in f.message
    assert fix in f.fix and "sacct" not in f.fix and "#SBATCH" not in f.fix


@pytest.mark.parametrize("text, who", [
    # the emitters' own format strings, values filled in
    ("=>> PBS: job killed: walltime 86415 exceeded limit 86400\n", "PBS"),          # OpenPBS / TORQUE MOM
    ("Job exceeded its walltime limit. Job was aborted\nSee Administrator for help\n", "PBS"),  # TORQUE's mail
    ("Job exceeded resource walltime\nSee job standard error file\n", "PBS"),      # OpenPBS's mail
    ("05/04/2011 03:36:38|  main|master|W|job 48.1 exceeded hard wallclock time - initiate terminate method\n",
     "Grid Engine"),
    ("Mon May  6 22:58:03: Completed <exit>; TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n", "LSF"),
])
def test_each_schedulers_walltime_words_fire(text, who):
    (f,) = fired("slurm-time-limit", told_facts(text))
    assert f.message.startswith(f"{who} stopped the job")


@pytest.mark.parametrize("text, symptom", [
    ("=>> PBS: job killed: mem job total 4323312 kb exceeded limit 3145728 kb\n", "pbs_job_end:killed-mem"),
    ("=>> PBS: job killed: vmem 21488939008 exceeded limit 21474836480\n", "pbs_job_end:killed-vmem"),
    ("=>> PBS: job killed: cput 7300 exceeded limit 7200\n", "pbs_job_end:killed-cput"),
    ("Job exceeded some resource limit (walltime, mem, etc.). Job was aborted\n", "pbs_job_end:torque-mail-some-limit"),
    ("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.\n", "lsf:TERM_MEMLIMIT"),
    ("TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.\n", "lsf:TERM_CPULIMIT"),
    ("failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit\n", "sge:qacct-failed-37"),
])
def test_other_limits_are_read_but_are_not_the_time_limit(text, symptom):
    assert symptom in {s["id"] for s in find_messages(text)}
    assert not fired("slurm-time-limit", told_facts(text))


@pytest.mark.parametrize("paste", [
    "cbio-cluster-403-job-deleted-by-root.txt",           # "Terminated", deleted by root: no limit line
    "e3sm-1318-qsub-walltime-exceeds-queue-max.txt",      # qsub refused a walltime request: not a kill
])
def test_silent_without_a_kill_at_the_time_limit(paste):
    assert not fired("slurm-time-limit", recorded_paste_facts(paste))


def test_slurms_own_line_keeps_slurms_fix():
    (f,) = fired("slurm-time-limit", told_facts(
        "slurmstepd: error: *** JOB 3884617 ON node023 CANCELLED AT 2018-08-19T16:30:21 DUE TO TIME LIMIT ***\n"))
    assert f.message.startswith("Slurm stopped the job") and "sacct -j 3884617" in f.fix


def test_moabs_wallclock_cancel_in_torques_mail_fires_with_moabs_fix():
    # MLimit.c's MRMJobCancel(J, "MOAB_INFO:  job exceeded wallclock limit\n"), in the mail TORQUE sent
    (f,) = fired("slurm-time-limit", recorded_paste_facts("magetbrain-20-moab-job-exceeded-wallclock-limit.txt"))
    assert f.message.startswith("Moab stopped the job") and "MOAB_INFO" in f.message
    assert "checkjob" in f.fix and "#PBS -l walltime=" in f.fix and "sacct" not in f.fix


@pytest.mark.parametrize("text, who", [
    ("MAUI_INFO:  job exceeded wallclock limit\n", "Moab"),   # Maui's MLimit.c (TempleHPC/maui-scheduler c486472)
    ("JOBWCVIOLATION:  job '1234' in state 'Running' has exceeded its wallclock limit (3600) by 00:01:05 "
     "(job will be cancelled)  job start time: Mon Jan  5 10:00:00\n", "Moab"),
    ("    Exit_status = -29\n", "PBS"),                          # OpenPBS JOB_EXEC_KILL_WALLTIME (mom_main.c)
])
def test_moab_and_openpbs_exit_words_fire(text, who):
    (f,) = fired("slurm-time-limit", told_facts(text))
    assert f.message.startswith(f"{who} stopped the job")


@pytest.mark.parametrize("text", [
    "    Exit_status = -28\n",                               # JOB_EXEC_KILL_CPUT: CPU time, not wall time
    "job 10086537 exceeded DISK usage hard limit (3700 > 3600)\n",
])
def test_other_exit_codes_and_moab_limits_are_not_the_time_limit(text):
    assert not fired("slurm-time-limit", told_facts(text))


@pytest.mark.parametrize("text", [
    # user_job_policy.cpp's hold reasons (htcondor e81dc42) and the hold codes they set, values filled in
    "HoldReason = \"The job exceeded allowed job duration of 2+00:00:00\"\n",
    "HoldReason = \"The job exceeded allowed execute duration of 12:00:00\"\n",
    "HoldReasonCode = 47\n",
])
def test_htcondors_duration_holds_fire_with_htcondors_fix(text):
    (f,) = fired("slurm-time-limit", told_facts(text))
    assert f.message.startswith("HTCondor stopped the job") and "condor_q -hold" in f.fix


def test_htcondors_memory_hold_is_not_the_time_limit():
    assert not fired("slurm-time-limit", told_facts("HoldReasonCode = 34\n"))
