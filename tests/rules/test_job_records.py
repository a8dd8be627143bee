"""A job's end as the scheduler's own accounting records it (knowledge/messages/slurm_job_state.toml,
sge.toml's qacct failed codes): a state that names a cause feeds the rule that names it (Slurm's
OUT_OF_MEMORY feeds host-memory-oom-killed, TIMEOUT slurm-time-limit, NODE_FAIL and BOOT_FAIL
slurm-node-failure, PREEMPTED slurm-job-preempted); one that names none (COMPLETED, FAILED with exit
1, RUNNING, qacct's failed 0 and 100) is read and quoted back, never a warning. Real pastes:
tests/fixtures/pastes/SOURCES.md."""

from __future__ import annotations

import pytest

from rulekit import _rules, fired, recorded_paste_facts, told_facts
from hpcdoctor import engine
from hpcdoctor.facts import FactView
from hpcdoctor.triage.messages import find_messages



def _loud(g):
    findings, _skipped = engine.evaluate(list(_rules().values()), FactView(g["facts"], g["unknown"], None))
    return [f.symbol for f in findings if f.severity in ("error", "warning")]


@pytest.mark.parametrize("paste, quoted", [
    ("smk-simple-slurm-29-seff-state-out-of-memory.txt", "State: OUT_OF_MEMORY (exit code 0)"),
    ("squeezemeta-524-slurm-mail-run-time-out-of-memory.txt", "Run time 00:26:24, OUT_OF_MEMORY"),
])
def test_slurms_out_of_memory_record_is_the_oom_kill(paste, quoted):
    (f,) = fired("host-memory-oom-killed", recorded_paste_facts(paste))
    assert f.message.startswith("Slurm recorded the job as OUT_OF_MEMORY") and quoted in f.message
    # read after the job ended: no $SLURM_JOB_ID, the user's jobs that ended that way
    assert f.fix.startswith("sacct -u $USER -S now-7days -s OUT_OF_MEMORY -o JobID,State,ReqMem,MaxRSS")
    assert "$SLURM_JOB_ID" not in f.fix and "--mem" in f.fix


@pytest.mark.parametrize("paste, read", [
    ("maestrowf-405-sacct-completed.txt", "slurm_job_state:COMPLETED"),
    ("slurm-minus-9-sacct-failed-exit-1.txt", "slurm_job_state:FAILED"),
    ("gooseslurm-32-scontrol-show-job-running.txt", "slurm_job_state:RUNNING"),
    ("canu-1279-qacct-failed-0-exit-status-1.txt", "sge:qacct-failed-0"),
    ("clusterscheduler-66-qacct-failed-100-assumedly-after-job.txt", "sge:qacct-failed-100"),
])
def test_a_record_that_names_no_cause_is_read_and_fires_nothing(paste, read):
    g = recorded_paste_facts(paste)
    symptoms = g["facts"]["ticket"]["symptoms"]
    assert read in {s["id"] for s in symptoms}
    assert _loud(g) == []


@pytest.mark.parametrize("text, symbol", [
    # scontrol show job (src/scontrol/info_job.c @ 284c3b95: "JobState=%s Reason=%s"), values filled in
    ("   JobState=OUT_OF_MEMORY Reason=OutOfMemory Dependency=(null)\n", "host-memory-oom-killed"),
    ("   JobState=TIMEOUT Reason=TimeLimit Dependency=(null)\n", "slurm-time-limit"),
    ("   JobState=NODE_FAIL Reason=NodeDown Dependency=(null)\n", "slurm-node-failure"),
    ("   JobState=BOOT_FAIL Reason=None Dependency=(null)\n", "slurm-node-failure"),
    ("   JobState=PREEMPTED Reason=None Dependency=(null)\n", "slurm-job-preempted"),
    # sacct rows (src/sacct/print.c @ 284c3b95): the full word, and cut by the default ten-character column
    ("4361185      squeezMeta     normal OUT_OF_MEMORY   00:26:24 \n", "host-memory-oom-killed"),
    ("4361185.ba+       batch            OUT_OF_ME+      0:125 \n", "host-memory-oom-killed"),
    ("4361185|squeezMeta|normal|OUT_OF_MEMORY|0:125\n", "host-memory-oom-killed"),
    ("12345              sim     gpu   BOOT_FAIL   00:00:00 \n", "slurm-node-failure"),
    # seff (contribs/seff/seff @ 284c3b95)
    ("State: TIMEOUT (exit code 0)\n", "slurm-time-limit"),
])
def test_each_record_of_a_cause_feeds_its_rule(text, symbol):
    (f,) = fired(symbol, told_facts(text))
    assert f.severity in ("error", "warning")


@pytest.mark.parametrize("text, read", [
    ("6564055      hello_wor+     pdebug    wbronze          1 CANCELLED by 51234      0:0 \n", "slurm_job_state:CANCELLED"),
    ("6564055      hello_wor+     pdebug    wbronze          1 CANCELLED+      0:0 \n", "slurm_job_state:CANCELLED"),
    ("   JobState=DEADLINE Reason=DeadLine Dependency=(null)\n", "slurm_job_state:DEADLINE"),
    ("failed       26  : opening input/output file\n", "sge:qacct-failed-26"),
    ("failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit\n", "sge:qacct-failed-37"),
])
def test_a_state_without_a_cause_is_quoted_not_fired(text, read):
    g = told_facts(text)
    symptoms = g["facts"]["ticket"]["symptoms"]
    assert read in {s["id"] for s in symptoms}
    assert _loud(g) == []


def test_the_cancelling_uid_and_the_exit_code_are_kept():
    (s,) = [s for s in find_messages("6564055   hello   pdebug  CANCELLED by 51234      0:0 \n")
            if s["family"] == "slurm_job_state"]
    assert s["uid"] == "51234" and s["jobid"] == "6564055"
    (s,) = [s for s in find_messages("State: FAILED (exit code 2)\n") if s["family"] == "slurm_job_state"]
    assert s["key"] == "FAILED" and s["exit"] == "2"


def test_words_that_are_not_a_record_are_not_read():
    # CUDA's enum name and a prose "failed" are not a state column nor qacct's field
    text = ("CUDA_ERROR_OUT_OF_MEMORY: out of memory\n3 tests FAILED\nfailed to open file: 2 : x\n"
            "State: the job OUT_OF_MEMORY\n")
    assert [s for s in find_messages(text) if s["family"] in ("slurm_job_state", "sge")] == []


def test_lsfs_preemption_is_answered_with_lsfs_commands():
    # bacct -l's "Completed <exit>; TERM_...: ..." (IBM termination_reasons_lsf.html), values filled in
    (f,) = fired("slurm-job-preempted",
                 told_facts("Mon May  6 22:58:03: Completed <exit>; TERM_PREEMPT: job killed after preemption.\n"))
    assert f.message.startswith("LSF preempted the job") and "TERM_PREEMPT" in f.message
    assert "bqueues -l" in f.fix and "#BSUB -r" in f.fix and "sacct" not in f.fix and "scontrol" not in f.fix
