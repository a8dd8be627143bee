"""batch-job-memory-limit-exceeded, batch-job-thread-limit-exceeded and batch-script-dos-line-endings
on set P's tickets and on other public pastes of the same classes (tests/fixtures/pastes/SOURCES.md),
through the real catalogue and the paste path; near misses from the same emitters stay silent."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts



def _ticket(tmp_path, name, corpus="tickets_blind_p"):
    text = (FIXTURES / corpus / f"{name}.txt").read_text(encoding="utf-8")
    return paste_facts(tmp_path, text)


def test_torque_vmem_kill_names_the_figures_and_asks_for_vmem(tmp_path):
    (f,) = fired("batch-job-memory-limit-exceeded", _ticket(tmp_path, "hyphy-500-torque-default-vmem-limit"))
    assert f.severity == "error" and "PBS MOM" in f.message
    # TORQUE prints vmem in bytes: 3372163072 B = 3.14 GiB over a 2 GiB default
    assert "used 3.14 GiB, limit 2.00 GiB" in f.message and "vmem 3372163072 exceeded limit 2147483648" in f.message
    assert "vmem=4gb" in f.fix and "qstat -f" in f.fix


def test_moab_memory_violation_reads_megabytes(tmp_path):
    (f,) = fired("batch-job-memory-limit-exceeded", _ticket(tmp_path, "cbio-cluster-251-queue-default-memory-limit"))
    assert f.severity == "error" and f.message.startswith("Moab says")
    assert "used 2.47 GiB, limit 1.10 GiB" in f.message and "qsub -l mem=4gb" in f.fix


@pytest.mark.parametrize("paste, who, option", [
    ("souporcell-20-lsf-term-memlimit.txt", "LSF", "bsub -M"),
    ("canu-530-pbs-pro-mem-exceeded-limit.txt", "PBS MOM", "qsub -l mem="),
    ("sarek-541-torque-memory-resource-limit-mail.txt", "PBS MOM", "qsub -l mem="),
])
def test_other_schedulers_memory_kills(paste, who, option):
    (f,) = fired("batch-job-memory-limit-exceeded", recorded_paste_facts(paste))
    assert f.severity == "error" and who in f.message and option in f.fix


def test_lsf_memory_kill_cites_the_exit_status_as_support():
    (f,) = fired("batch-job-memory-limit-exceeded", recorded_paste_facts("souporcell-20-lsf-term-memlimit.txt"))
    assert "143 = 128+15, is SIGTERM" in f.message


def test_pbs_pro_mem_figures_are_kilobytes():
    (f,) = fired("batch-job-memory-limit-exceeded", recorded_paste_facts("canu-530-pbs-pro-mem-exceeded-limit.txt"))
    # 38427376 kB = 36.65 GiB against 33554432 kB = 32 GiB: ask a quarter above the use
    assert "used 36.65 GiB, limit 32.00 GiB" in f.message and "mem=46gb" in f.fix


@pytest.mark.parametrize("paste", [
    "cbio-cluster-256-torque-walltime-exit-status.txt",   # a walltime kill with Exit_status=-11
    "cbio-cluster-256-exit-status-271-only.txt",          # 256+15 alone: how, not why
    "cbio-cluster-403-job-deleted-by-root.txt",           # deleted by root, no limit named
])
def test_memory_rule_silent_on_other_kills_and_a_bare_exit_status(paste):
    assert not fired("batch-job-memory-limit-exceeded", recorded_paste_facts(paste))


def test_a_bare_exit_status_fires_neither_batch_rule():
    facts = recorded_paste_facts("cbio-cluster-256-exit-status-271-only.txt")
    assert not fired("batch-job-thread-limit-exceeded", facts) and not fired("batch-job-memory-limit-exceeded", facts)


@pytest.mark.parametrize("corpus, ticket", [
    ("tickets_blind_i", "openbabel-2658-slurm-step-exceeded-memory-limit"),
    ("tickets_blind_m", "snana-199-job-step-cgroup-oom-kill"),
])
def test_slurm_memory_kill_stays_host_memory_oom_killed(tmp_path, corpus, ticket):
    # Slurm enforces --mem through the kernel's memory cgroup: MEM006 answers it, this rule does not
    facts = _ticket(tmp_path, ticket, corpus)
    assert fired("host-memory-oom-killed", facts)
    assert not fired("batch-job-memory-limit-exceeded", facts)


def test_lsf_thread_limit_kill(tmp_path):
    (f,) = fired("batch-job-thread-limit-exceeded", _ticket(tmp_path, "carveme-34-lsf-thread-limit-kills-job"))
    assert f.severity == "error" and f.message.startswith("LSF says") and "TERM_THREADLIMIT" in f.message
    assert "143 = 128+15, is SIGTERM" in f.message
    assert "OMP_NUM_THREADS" in f.fix and "bsub -n" in f.fix


@pytest.mark.parametrize("paste, quoted", [
    ("osprey-201-pbs-ncpus-exceeded-sum.txt", "ncpus 11.85 exceeded limit 8 (sum)"),
    ("joblib-1268-pbs-ncpus-exceeded.txt", "ncpus 19.38 exceeded limit 8"),
])
def test_pbs_ncpus_kill(paste, quoted):
    (f,) = fired("batch-job-thread-limit-exceeded", recorded_paste_facts(paste))
    assert f.severity == "error" and quoted in f.message and "ncpus=8" in f.fix


def test_thread_rule_silent_on_a_memory_kill():
    assert not fired("batch-job-thread-limit-exceeded", recorded_paste_facts("souporcell-20-lsf-term-memlimit.txt"))


@pytest.mark.parametrize("ticket, quoted", [
    ("rslurm-84-batch-script-dos-line-breaks", "Batch script contains DOS line breaks"),
    ("alphapulldown-183-pbs-script-crlf-bad-interpreter", "/bin/bash^M: bad interpreter"),
])
def test_dos_line_endings_on_set_p(tmp_path, ticket, quoted):
    (f,) = fired("batch-script-dos-line-endings", _ticket(tmp_path, ticket))
    assert f.severity == "error" and quoted in f.message and "dos2unix job.sh" in f.fix


@pytest.mark.parametrize("paste, quoted", [
    ("knowhere-164-crlf-env-bash-bad-interpreter.txt", "/usr/bin/env: ‘bash\\r’"),
    ("bash-5.2-crlf-job-script.txt", "$'\\r': command not found"),
])
def test_dos_line_endings_elsewhere(paste, quoted):
    (f,) = fired("batch-script-dos-line-endings", recorded_paste_facts(paste))
    assert quoted in f.message


@pytest.mark.parametrize("paste", [
    "cbio-cluster-256-torque-walltime-exit-status.txt",
    "slurm-22.05-srun-execve-command-not-on-path.txt",     # "command not found" of a real missing command
])
def test_line_endings_silent_without_a_carriage_return(paste):
    assert not fired("batch-script-dos-line-endings", recorded_paste_facts(paste))


def test_exit_status_readings_name_the_signal_only_where_there_is_one():
    from hpcdoctor.triage.messages import find_messages
    from rulekit import PASTES

    # PBS's 256+15 and LSF's 128+15 decode to SIGTERM; Slurm's ExitCode=1:0 has no signal at all
    pbs = find_messages((PASTES / "cbio-cluster-256-exit-status-271-only.txt").read_text(encoding="utf-8"))
    assert [(s["id"], s["code"]) for s in pbs if s["family"] == "pbs_exit"] == [("pbs_exit:SIGTERM", 271)]
    lsf = find_messages((PASTES / "souporcell-20-lsf-term-memlimit.txt").read_text(encoding="utf-8"))
    assert [s["id"] for s in lsf if s["family"] == "exitstatus"] == ["exitstatus:SIGTERM"]
    slurm = find_messages((PASTES / "ubuntu-slurm-5-exitcode-1-0.txt").read_text(encoding="utf-8"))
    assert not [s for s in slurm if s["family"] == "slurm_exit"]


# batch-job-cpu-time-limit-exceeded -----------------------------------------------------------------

CPU = "batch-job-cpu-time-limit-exceeded"


@pytest.mark.parametrize("paste, quoted", [
    ("canu-2089-sigxcpu-falconsense.txt", "115123 CPU time limit exceeded (core dumped)"),   # bash's script line
    ("ipyrad-507-vsearch-cpu-time-limit-exceeded.txt", "78%CPU time limit exceeded (core dumped)"),  # after a progress bar
])
def test_sigxcpu_as_the_shell_prints_it(paste, quoted):
    (f,) = fired("batch-job-cpu-time-limit-exceeded", recorded_paste_facts(paste))
    assert f.severity == "error" and "SIGXCPU" in f.message and quoted in f.message
    # the shell's own limit first, then each scheduler's request, counting all threads
    assert "ulimit -St" in f.fix and "qsub -l cput=" in f.fix and "bsub -c" in f.fix and "h_cpu=" in f.fix


def _example(family: str, key: str) -> str:
    from hpcdoctor.knowledge import messages
    return str(messages.families((family,))[0].by_key[key].get("example"))


@pytest.mark.parametrize("family, key, who, option", [
    ("pbs_job_end", "killed-cput", "PBS MOM", "qsub -l cput=04:00:00"),      # limit 7200 s: twice it
    ("pbs_job_end", "killed-pcput", "PBS MOM", "qsub -l pcput=02:00:00"),
    ("pbs_job_end", "torque-mail-cput", "PBS MOM", "qsub -l cput="),
    ("pbs_job_end", "openpbs-mail-cput", "PBS MOM", "qsub -l cput="),
    ("sge", "execd-hard-cpu-limit", "Grid Engine", "qsub -l h_cpu=02:00:00"),
    ("moab", "cputime-usage-limit", "Moab", "qsub -l cput="),
])
def test_each_schedulers_cpu_kill_asks_for_its_own_request(tmp_path, family, key, who, option):
    # the catalogue's example of each emitter's line, read from the catalogue (its source beside it)
    (f,) = fired("batch-job-cpu-time-limit-exceeded", paste_facts(tmp_path, _example(family, key) + "\n"))
    assert f.severity == "error" and who in f.message and option in f.fix and "N times faster" in f.fix


def test_pbs_cput_figures_are_seconds(tmp_path):
    (f,) = fired("batch-job-cpu-time-limit-exceeded", paste_facts(tmp_path, _example("pbs_job_end", "killed-cput") + "\n"))
    assert "used 02:01:40 of CPU time, limit 02:00:00" in f.message


def test_lsf_cpulimit_reason(tmp_path):
    # the keyword and reason as IBM's termination-reason table words them (lsf.toml's family source)
    (f,) = fired("batch-job-cpu-time-limit-exceeded", paste_facts(tmp_path, "TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.\n"))
    assert f.severity == "error" and "LSF" in f.message and "bsub -c" in f.fix


@pytest.mark.parametrize("paste", [
    "cbio-cluster-256-torque-walltime-exit-status.txt",   # TORQUE's walltime mail: slurm-time-limit's
    "pnet-6-cpu-time-limit-exceeded-prose.txt",           # the words in a user's title and sentence
    "cbio-cluster-403-job-deleted-by-root.txt",           # deleted by root, no limit named
    "canu-444-lsf-term-runlimit.txt",                     # LSF's run limit, its summary's "CPU time : 5.69 sec."
    "joblib-1268-pbs-ncpus-exceeded.txt",                 # "PBS: job killed: ncpus ... exceeded limit": CPUs, not cput
])
def test_cpu_time_rule_silent_on_walltime_kills_and_prose(paste):
    assert not fired("batch-job-cpu-time-limit-exceeded", recorded_paste_facts(paste))


def test_a_walltime_kill_stays_the_time_limit_rules():
    facts = recorded_paste_facts("cbio-cluster-256-torque-walltime-exit-status.txt")
    assert fired("slurm-time-limit", facts) and not fired("batch-job-cpu-time-limit-exceeded", facts)


def test_slurm_exitcode_signal_24_is_the_cpu_time_limit(tmp_path):
    # scontrol show job's "ExitCode=%u:%u" (src/scontrol/info_job.c) with signal 24 filled in: the
    # emitter's own format, no public paste recorded. Slurm sends no SIGXCPU itself; the kernel does at
    # RLIMIT_CPU, which Slurm carries from the submitting shell (PropagateResourceLimits)
    text = ("JobId=123456 JobName=run.sh\n   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n"
            "   Requeue=0 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:24\n")
    (f,) = fired(CPU, paste_facts(tmp_path, text))
    assert f.severity == "error" and "ExitCode=0:24" in f.message and "SIGXCPU" in f.message
    assert "sbatch --propagate=NONE" in f.fix and "PropagateResourceLimits" in f.fix and "qsub" not in f.fix


def test_slurm_exitcode_sigkill_is_not_the_cpu_time_limit(tmp_path):
    # the form's own example (signal 9): killed, for a reason the signal does not say
    assert not fired(CPU, paste_facts(tmp_path, "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:9\n"))
