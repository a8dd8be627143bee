"""allocation-balance-exhausted (rules/allocations.py) on set Q's ticket and another thread's paste."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts

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


def test_slurm_grptresmins_reason_is_the_allocation_but_not_its_running_cap():
    # slurmctld's refusal as slurm_reasons.toml's submit-refusal-reason form reads it (job_mgr.c _job_create
    # sends job_state_reason_string(acct_reason); the names are job_state_reason.c's)
    (f,) = fired("allocation-balance-exhausted", told_facts("sbatch: error: AssocGrpCPUMinutesLimit\n"))
    assert "GrpTRESMins" in f.message and "AssocGrpCPUMinutesLimit" in f.message
    assert not fired("allocation-balance-exhausted", told_facts("sbatch: error: AssocGrpCPURunMinutesLimit\n"))


def _findings(name):
    from conftest import report_of
    from rulekit import PASTES
    return report_of("check", "--from", str(PASTES / name))["findings"]


def test_a_real_squeue_of_jobs_held_at_assocgrpbillingminutes():
    # Pitt CRC's user manual: `squeue -M smp` of its cluster, five jobs held at AssocGrpBillingMinutes
    # beside per-account caps (MaxMemoryPerAccount, MaxCpuPerAccount), Resources and Priority
    found = {f["symbol"]: f for f in _findings("pitt-crc-onramp-squeue-assocgrpbillingminutes.txt")}
    f = found["allocation-balance-exhausted"]
    assert f["severity"] == "error" and "GrpTRESMins" in f["message"]
    assert f["evidence"]["ticket.line"] == 4 and "mts178 PD" in f["evidence"]["ticket.text"]
    assert f["evidence"]["message"] == "slurm_reasons:AssocGrpBillingMinutes"
    # a spent allocation does not free itself as jobs end: slurm-qos-limit-reached ("starts when usage falls
    # below it") answers the running-jobs cap of line 9 only, not the billing-minutes lines 4-8
    q = found["slurm-qos-limit-reached"]
    assert q["severity"] == "warning" and q["evidence"]["ticket.line"] == 9 and "MaxMemoryPerAccount" in q["message"]


def test_every_accumulated_usage_reason_names_the_allocation_rule_and_no_running_cap():
    import re

    from hpcdoctor.knowledge import messages
    fam = messages.families(("slurm_reasons",))[0]
    minutes = [k for k in fam.by_key if re.fullmatch(r"(?:Assoc|QOS)Grp[A-Za-z]{0,12}Min(?:utes)?(?:Limit)?", k)]
    grp = [k for k in minutes if "Run" not in k]
    assert len(grp) == 18 and len(minutes) > len(grp)
    for k in minutes:
        want = ["slurm-qos-limit-reached"] if "Run" in k else ["allocation-balance-exhausted"]
        assert list(fam.by_key[k].get("rules")) == want, k
