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
    assert fired("allocation-balance-exhausted", recorded_paste_facts("batchtools-199-accounting-qos-policy.txt")) == []
