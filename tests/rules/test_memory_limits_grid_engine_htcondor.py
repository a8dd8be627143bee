"""Set R's class of issue 24: Grid Engine's and HTCondor's memory-limit wordings (batch-job-memory-
limit-exceeded), through the real catalogue and the paste path. Pastes are set R's and the public
ones in tests/fixtures/pastes/SOURCES.md; near misses from the same emitters stay silent."""

from __future__ import annotations


from conftest import FIXTURES
from rulekit import fired, paste_facts, told_facts



def _r(tmp_path, name):
    return paste_facts(tmp_path, (FIXTURES / "tickets_blind_r" / f"{name}.txt").read_text(encoding="utf-8"))


# -- Grid Engine and HTCondor -------------------------------------------------------------------

def test_grid_engine_abort_mail_names_the_h_vmem_kill(tmp_path):
    (f,) = fired("batch-job-memory-limit-exceeded", _r(tmp_path, "mgatk-36-sge-h-vmem-limit-exceeded"))
    assert f.severity == "error" and "Grid Engine's execd" in f.message and "h_vmem" in f.message
    assert "failed execd enforced h_vmem limit because:" in f.message and "qsub -l h_vmem=" in f.fix


def test_grid_engine_abort_mail_without_a_limit_is_silent():
    # the same mail's format (reaper_execd.c) with failed 100 "assumedly after job": a signal, no limit named;
    # the record as a site's documentation quotes it (find_string "died through signal", 2026-11-27)
    text = (" Max vmem         = 1.965M\nfailed assumedly after job because:\n"
            "job 8974017.1 died through signal KILL (9)\n")
    assert not fired("batch-job-memory-limit-exceeded", told_facts(text))
