"""The CPU recordings of bench/cpu_emitters.sh (tests/fixtures/emitters_cpu/README.md): torch 2.13's
rendezvous store and MPICH 4.0.2's Hydra in their own words, read by the rules built from their
source. Open MPI 4.1.4's signal lines are tested with the rule that decodes them."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule

REC = "../emitters_cpu/"


def test_store_waiting_for_a_rank_that_never_started():
    (f,) = fired("c10d-store-unreachable", recorded_paste_facts(REC + "torch-2.13-store-clients-missing.txt"))
    assert f.severity == "error" and "1 of 2 ranks" in f.message


def test_store_port_held_by_another_process():
    (f,) = fired("master-port-in-use", recorded_paste_facts(REC + "torch-2.13-store-port-in-use.txt"))
    assert f.severity == "error" and "29531" in f.message and "MASTER_PORT" in f.fix


def test_hydra_sigill_is_read_as_the_usual_isa_cause_at_info():
    (f,) = fired("cpu-lacks-required-isa", recorded_paste_facts(REC + "mpich-4.0.2-rank-sigILL.txt"))
    # kill -ILL, not a missing instruction: the line gives the usual cause, never a shown one
    assert f.severity == "info" and "Illegal instruction (signal 4)" in f.message


def test_hydra_naming_another_ranks_signal_is_not_read_as_sigill():
    # the same SIGILL run under load: Hydra named SIGPIPE, the signal of the rank it saw end first
    for name in ("mpich-4.0.2-rank-sigILL-seen-as-sigPIPE.txt", "mpich-4.0.2-rank-sigSEGV.txt"):
        findings, _ = run_rule("cpu-lacks-required-isa", recorded_paste_facts(REC + name))
        assert findings == []
