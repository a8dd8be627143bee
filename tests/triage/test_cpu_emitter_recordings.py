"""The CPU recordings of bench/cpu_emitters.sh (tests/fixtures/emitters_cpu/README.md): torch 2.13's
rendezvous store and MPICH 4.0.2's Hydra in their own words, read by the rules built from their
source, and Open MPI 4.1.4's signal line decoded (knowledge/messages/signals.toml)."""

from __future__ import annotations

from rulekit import PASTES, fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages

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


def test_open_mpi_sigill_line_is_decoded_to_the_isa_hint():
    (f,) = fired("cpu-lacks-required-isa", recorded_paste_facts(REC + "openmpi-4.1.4-rank-sigILL.txt"))
    assert f.severity == "info" and "signal 4 (Illegal instruction)" in f.message


def test_open_mpi_other_signals_are_not_read_as_sigill():
    for sig in ("SEGV", "BUS", "KILL"):
        findings, _ = run_rule("cpu-lacks-required-isa", recorded_paste_facts(REC + f"openmpi-4.1.4-rank-sig{sig}.txt"))
        assert findings == []


def test_open_mpi_box_without_the_signal_line_is_read_not_refused():
    # under load Open MPI 4.1.4 printed only its "terminated normally, but" box: read, and no cause given
    text = (PASTES.parent / "emitters_cpu" / "openmpi-4.1.4-rank-sigILL-no-signal-line.txt").read_text()
    assert [s["id"] for s in find_messages(text)] == ["openmpi:errmgr:normal-termination-but"]
    findings, _ = run_rule("cpu-lacks-required-isa", recorded_paste_facts(REC + "openmpi-4.1.4-rank-sigILL-no-signal-line.txt"))
    assert findings == []
