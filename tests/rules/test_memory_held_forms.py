"""gpu-memory-in-use on the two forms set C and D brought: vLLM's refusal to start for want of free
memory (blind set D), and torch's old out-of-memory form, whose gap beyond torch's cache also holds
the process's own CUDA context (set C's healthy aphantasia-22 must stay silent, the main corpus's
memory held elsewhere must still be read). Real tickets, read in-process."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, run_rule


def _ticket(tmp_path, corpus: str, name: str):
    return paste_facts(tmp_path, (FIXTURES / corpus / f"{name}.txt").read_text(encoding="utf-8"), name + ".txt")


def test_vllms_refusal_to_start_names_what_was_in_use_and_a_share_that_fits(tmp_path):
    (f,) = fired("gpu-memory-in-use", _ticket(tmp_path, "tickets_blind_d", "vllm-25837-free-memory-less-than-utilization-4gb"))
    assert "3.22 of 4 GiB free" in f.message and "0.78 GiB were in use" in f.message
    assert "--gpu-memory-utilization 0.78" in f.fix


def test_an_old_form_oom_with_a_quarter_of_a_small_card_outside_torch_is_its_own(tmp_path):
    findings, _skipped = run_rule("gpu-memory-in-use", _ticket(tmp_path, "tickets_blind_c", "aphantasia-22-oom-6gb-samples-healthy"))
    assert not findings


def test_an_old_form_oom_with_most_of_the_card_outside_torch_is_still_held_by_others(tmp_path):
    (f,) = fired("gpu-memory-in-use", _ticket(tmp_path, "tickets", "pytorch-40863-oom-memory-held-elsewhere"))
    assert "held by other processes" in f.message
