"""slurm-invalid-qos on Slurm's own refusal (slurm_errno.c ESLURM_INVALID_QOS), the job reasons and
slurmctld's log lines (src/slurmctld/job_mgr.c _determine_and_validate_qos), replayed from public
pastes (tests/fixtures/pastes, SOURCES.md there) and the format strings."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.knowledge import messages



@pytest.mark.parametrize("paste, line", [
    ("autosubmit-485-invalid-qos-default-queue.txt", 14),   # a workflow tool's default QOS
    ("rocm-systems-9834-rccl-ci-invalid-qos.txt", 6),        # #SBATCH --qos the partition does not admit
])
def test_the_refusal_is_the_qos_not_the_account(paste, line):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("slurm-invalid-qos", gathered)
    assert f.severity == "error" and f"(line {line}: " in f.message and "Invalid qos specification" in f.message
    assert f.fix.startswith('sacctmgr -n show assoc user="$USER" format=account%20,partition%20,qos%60,defaultqos%20')
    assert "AllowQos" in f.fix and "SBATCH" in f.fix
    assert not fired("slurm-invalid-account", gathered)


@pytest.mark.parametrize("entry, why", [
    ("slurmctld-invalid-qos", 'the QOS "vip_prio": no QOS of that name exists'),
    ("slurmctld-assoc-no-qos-access", 'the QOS "bsc_es": the user\'s association may not use it'),
    ("slurmctld-qos-reservation-only", 'the QOS "maint": it may only be used inside a reservation'),
    ("slurmctld-relative-qos-as-job-qos", 'the QOS "part_gpu": it is a relative partition QOS'),
])
def test_slurmctlds_own_line_says_which_refusal(entry, why):
    family = next(fam for fam in messages.families() if fam.id == "slurm")
    example = next(e.get("example") for e in family.entries if e.key == entry)
    text = "sbatch: error: Batch job submission failed: Invalid qos specification\n" + example + "\n"
    (f,) = fired("slurm-invalid-qos", told_facts(text))
    assert why in f.message and "line 2" in f.message


def test_a_job_held_for_its_qos_and_a_variable_in_the_directive():
    held = "   JobState=PENDING Reason=InvalidQOS Dependency=(null)\n"
    (f,) = fired("slurm-invalid-qos", told_facts(held))
    assert "Reason=InvalidQOS" in f.message
    script = ("#SBATCH --qos=$QOS\n#SBATCH --time=01:00:00\n"
              "sbatch: error: Batch job submission failed: Invalid qos specification\n")
    (f,) = fired("slurm-invalid-qos", told_facts(script))
    assert "sets --qos from $QOS" in f.message and f.fix.startswith('sbatch --qos="$QOS" job.sh')


@pytest.mark.parametrize("paste", [
    "slurm-22.05-requests-beyond-the-node.txt",            # an invalid partition: slurm-invalid-account's
    "slurm-22.05-srun-execve-command-not-on-path.txt",
    "canu-1067-slurm14-time-limit-node-last.txt",
])
def test_silent_without_a_qos_refusal(paste):
    assert not fired("slurm-invalid-qos", recorded_paste_facts(paste))


def test_the_limits_name_sbatch_prints_before_a_policy_refusal_is_read():
    # slurm_reasons.toml form submit-refusal-reason: slurmctld's err_msg, printed by the client
    (f,) = fired("slurm-qos-limit-reached", recorded_paste_facts("asgs-552-sbatch-qosminnode.txt"))
    assert f.severity == "error"
    found = {s["id"] for s in recorded_paste_facts("asgs-552-sbatch-qosminnode.txt")["facts"]["ticket"]["symptoms"]}
    assert "slurm_reasons:QOSMinNode" in found
    assert not fired("slurm-invalid-qos", recorded_paste_facts("asgs-552-sbatch-qosminnode.txt"))
    # the same line naming a wall-time limit is the time request's
    text = ("sbatch: error: QOSMaxWallDurationPerJobLimit\n"
            "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy "
            "(job submit limit, user's size and/or time limits)\n")
    (f,) = fired("slurm-time-request-exceeds-limit", told_facts(text))
    assert "QOSMaxWallDurationPerJobLimit" in f.message
