"""slurm_strerror codes (knowledge/messages/slurm.toml) wired to the rules whose finding they state:
on real public pastes (tests/fixtures/pastes/SOURCES.md) and, where none was found, on the exact
text slurm_strerror gives (src/common/slurm_errno.c @ 284c3b95) filled into the client's own format
string: sbatch.c error("Batch job submission failed: %m"), srun's allocate.c error("Unable to allocate
resources: %m"), fetch_config.c error("%s: failed to fetch remote configs: %m"); each such test says so."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts


def test_access_denied_at_submission_is_the_partitions_refusal():
    gathered = recorded_paste_facts("canu-2329-sbatch-access-denied.txt")
    (f,) = fired("slurm-invalid-account", gathered)
    assert "Access/permission denied" in f.message and "AllocNodes" in f.message and "RootOnly" in f.message
    assert f.fix.startswith("scontrol show partition | grep") and f.severity == "error"


def test_access_denied_outside_a_submission_is_not_the_partitions():
    # slurm_strerror's text after scontrol's words (a user updating another's job): no partition involved
    gathered = told_facts("scontrol: error: slurm_update error: Access/permission denied\n")
    assert not fired("slurm-invalid-account", gathered)


@pytest.mark.parametrize("line, says", [
    # filled in: sbatch.c's format string with slurm_strerror(ESLURM_USER_ID_MISSING) and (ESLURM_PARTITION_ASSOC)
    ("sbatch: error: Batch job submission failed: Invalid user id", "submitted as root"),
    ("sbatch: error: Batch job submission failed: Multiple partition job request not supported when a partition "
     "is set in the association", "several partitions"),
])
def test_partition_refusals_by_code(line, says):
    (f,) = fired("slurm-invalid-account", told_facts(line + "\n"))
    assert says in f.message


def test_backup_controller_in_standby_is_the_primary_out_of_reach():
    gathered = recorded_paste_facts("tensorrt-llm-17709-sbatch-backup-standby.txt")
    (f,) = fired("slurm-controller-unreachable", gathered)
    assert "backup controller" in f.message and "SlurmctldTimeout" in f.message
    assert f.fix.startswith("scontrol ping")
    assert not fired("slurm-controller-overloaded", gathered)


def test_configless_disabled_is_a_configuration_that_cannot_be_fetched():
    # filled in: fetch_config.c's format string with slurm_strerror(ESLURM_CONFIGLESS_DISABLED), as a client prints it
    text = ("sinfo: error: _fetch_child: failed to fetch remote configs: ConfigLess mode is disabled in slurm configuration.\n"
            "sinfo: fatal: Could not establish a configuration source\n")
    (f,) = fired("scheduler-config-broken", told_facts(text))
    assert "enable_configless" in f.message and "line 1" in f.message
    assert "SlurmctldParameters" in f.fix


def test_max_job_count_is_the_controllers_full_job_table():
    # filled in: sbatch.c's retry line and its final format string with slurm_strerror(ESLURM_MAX_JOB_COUNT)
    text = ("sbatch: error: Batch job submission failed: MaxJobCount limit reached\n")
    (f,) = fired("slurm-controller-overloaded", told_facts(text))
    assert "MaxJobCount" in f.message and "MinJobAge" in f.fix


def test_not_top_priority_with_immediate_is_the_queue_order():
    # filled in: srun's allocate.c format string with slurm_strerror(ESLURM_NOT_TOP_PRIORITY)
    text = "srun: error: Unable to allocate resources: Immediate execution impossible, insufficient priority\n"
    (f,) = fired("slurm-fairshare-priority-low", told_facts(text))
    assert "--immediate" in f.message and f.severity == "info"


def test_dependency_problem_from_a_script_that_kept_sbatchs_whole_line():
    gathered = recorded_paste_facts("aws-parallelcluster-288-sbatch-dependency-problem.txt")
    (f,) = fired("slurm-job-dependency-refused", gathered)
    assert "Job dependency problem" in f.message and "Submitted batch job" in f.message
    assert "sbatch --parsable" in f.fix and f.severity == "error"


def test_circular_dependency_is_named_a_loop():
    # filled in: sbatch.c's format string with slurm_strerror(ESLURM_CIRCULAR_DEPENDENCY)
    (f,) = fired("slurm-job-dependency-refused",
                 told_facts("sbatch: error: Batch job submission failed: Circular job dependency\n"))
    assert "loop" in f.message


def test_a_dependency_option_alone_is_silent():
    gathered = told_facts("sbatch --dependency=afterok:123 job.sh\nSubmitted batch job 124\n")
    assert not fired("slurm-job-dependency-refused", gathered)
