"""allocation-balance-exhausted (rules/allocations.py) on set Q's ticket and another thread's paste."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts

Q = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_q"


def test_bank_plugin_refusal_quotes_the_request(tmp_path):
    gathered = paste_facts(tmp_path, (Q / "canu-1164-allocation-balance-exceeded.txt").read_text(encoding="utf-8"))
    (f,) = fired("allocation-balance-exhausted", gathered)
    assert f.severity == "error" and "51022 SUs" in f.message and "sshare" in f.fix


def test_nearly_spent_allocation_in_another_thread():
    (f,) = fired("allocation-balance-exhausted", recorded_paste_facts("radical-pilot-1079-bank-limit-balance.txt"))
    assert "19 SUs" in f.message and "29 are left" in f.message


def test_a_submit_limit_is_not_a_spent_allocation():
    assert not fired("allocation-balance-exhausted", recorded_paste_facts("batchtools-199-accounting-qos-policy.txt"))


def _told(text):
    from rulekit import facts
    from hpcdoctor.triage.messages import find_messages
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


def test_slurm_grptresmins_reason_is_the_allocation_but_not_its_running_cap():
    # slurmctld's refusal as slurm_reasons.toml's submit-refusal-reason form reads it (job_mgr.c _job_create
    # sends job_state_reason_string(acct_reason); the names are job_state_reason.c's)
    (f,) = fired("allocation-balance-exhausted", _told("sbatch: error: AssocGrpCPUMinutesLimit\n"))
    assert "GrpTRESMins" in f.message and "AssocGrpCPUMinutesLimit" in f.message
    assert not fired("allocation-balance-exhausted", _told("sbatch: error: AssocGrpCPURunMinutesLimit\n"))
