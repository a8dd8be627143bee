"""slurm-request-names-unknown on slurmctld's refusals of a name the cluster does not have, or cannot
use now (slurm_strerror's texts after sbatch's, srun's and salloc's prefixes, filled in from
src/sbatch/sbatch.c, src/srun/allocate.c and src/salloc/salloc.c at slurm-25-05-8-1: the public
threads found retype them in lower case or in a tool's own words); silent on an account, QOS or
feature refusal, which other rules answer, and on a request alone."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, told_facts


def test_a_reservation_named_in_the_script_is_quoted_with_the_command_that_lists_them():
    text = ("#!/bin/bash\n#SBATCH --reservation=denali\n#SBATCH -n 1\nsrun hostname\n"
            "sbatch: error: Batch job submission failed: Requested reservation is invalid\n")
    (f,) = fired("slurm-request-names-unknown", told_facts(text))
    assert "Requested reservation is invalid" in f.message and "a reservation (--reservation)" in f.message
    assert 'line 2 names it: "#SBATCH --reservation=denali"' in f.message
    assert f.fix.startswith("scontrol show reservation") and "--reservation denali" in f.fix
    assert f.severity == "error"


@pytest.mark.parametrize("line, says, command", [
    ("sbatch: error: Batch job submission failed: Invalid node name specified", "not a node of this cluster", "sinfo -N -o '%N %P %T'"),
    ("srun: error: Unable to allocate resources: Requested nodes not in this partition", "not in the job's partition", "sinfo -N"),
    ("srun: error: Unable to allocate resources: Required node not available (down, drained or reserved)", "down, drained or reserved", "sinfo -N -o '%N %P %T %E'"),
    ("sbatch: error: Batch job submission failed: Invalid license specification", "a licence", "scontrol show licenses"),
    ("salloc: error: Job submit/allocate failed: Invalid wckey specification", "a wckey", "sacctmgr -n show wckeys users=\"$USER\""),
    ("sbatch: error: Batch job submission failed: Invalid Trackable RESource (TRES) specification", "trackable resource", "sacctmgr -n show tres"),
    ("sbatch: error: Batch job submission failed: Invalid cluster name", "a cluster (-M/--clusters)", "sacctmgr -n show clusters"),
    ("sbatch: error: Batch job submission failed: Required partition not available (inactive or drain)", "inactive or draining", "sinfo -s"),
    ("salloc: error: Job submit/allocate failed: Partition in DOWN state", "DOWN", "sinfo -s"),
    ("sbatch: error: Batch job submission failed: Time limit specification required, but not provided", "no time limit", "sinfo -o '%P %l %L'"),
])
def test_each_refusal_names_what_was_refused_and_lists_what_exists(line, says, command):
    (f,) = fired("slurm-request-names-unknown", told_facts(line + "\n"))
    assert says in f.message and f.fix.startswith(command)


def test_the_node_named_by_a_short_option_is_quoted():
    text = "#SBATCH -w gpu-07\nsbatch: error: Batch job submission failed: Invalid node name specified\n"
    (f,) = fired("slurm-request-names-unknown", told_facts(text))
    assert '"#SBATCH -w gpu-07"' in f.message and "(line 1 sets -w gpu-07)" in f.fix


def test_silent_on_other_refusals_and_on_a_request_alone(tmp_path):
    for line in ("sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified",
                 "sbatch: error: Batch job submission failed: Invalid qos specification",
                 "sbatch: error: Batch job submission failed: Invalid feature specification"):
        assert not fired("slurm-request-names-unknown", told_facts(line + "\n"))
    assert not fired("slurm-request-names-unknown", paste_facts(tmp_path, "#!/bin/bash\n#SBATCH --reservation=denali\nsrun hostname\n"))
