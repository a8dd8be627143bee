"""slurm-array-exceeds-max-array-size: Slurm's refusal of a job array, read beside the array asked
for. The real paste is set Y's (unsealed); the real refusal from slurmctld is in
tests/workflows/test_slurm_client_refusals.py."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule, told_facts

REFUSED = "sbatch: error: Batch job submission failed: Invalid job array specification\n"


def test_an_array_sized_from_an_input_file_past_max_array_size():
    (f,) = fired("slurm-array-exceeds-max-array-size",
                 recorded_paste_facts("../tickets_blind_y/hapsolo-1-array-larger-than-max-array-size.txt"))
    assert f.severity == "error" and "indices up to 20876 (20876 tasks" in f.message and "1001" in f.message
    assert "scontrol show config" in f.fix and "seq 1 1000 20876" in f.fix and "--array=0-999" in f.fix


def test_steps_and_lists_are_counted_and_a_small_array_is_not_blamed_on_the_limit():
    (f,) = fired("slurm-array-exceeds-max-array-size", told_facts(f"#SBATCH --array=0-4000:2,5001%10\n{REFUSED}"))
    assert "indices up to 5001 (2002 tasks" in f.message
    (g,) = fired("slurm-array-exceeds-max-array-size", told_facts(f"$ sbatch --array=1-50 job.sh\n{REFUSED}"))
    assert g.severity == "info" and "1-50" in g.message and "malformed" in g.message


def test_an_array_request_alone_is_no_fault():
    facts = told_facts("#SBATCH --array=1-20876\n#SBATCH --time=01:00:00\nSubmitted batch job 123\n")
    assert run_rule("slurm-array-exceeds-max-array-size", facts)[0] == []
    assert not fired("slurm-array-exceeds-max-array-size", facts)

