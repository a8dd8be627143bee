"""Slurm's --x11: slurmctld's refusal on a cluster without PrologFlags=X11 (slurm-request-names-unknown)
and srun's own set-up failures on the submitting host (knowledge/messages/slurm_x11.toml), from a
recording of the real clients (the live run is tests/workflows/test_slurm_client_refusals.py)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_x11_refused_by_slurmctld_is_the_missing_prologflags():
    # recorded from Debian's srun and salloc 22.05.8 on the test cluster (no PrologFlags=X11)
    facts = recorded_paste_facts("slurm-22.05-srun-x11-without-prologflags.txt")
    (f,) = fired("slurm-request-names-unknown", facts)
    assert "line 5" in f.message and "PrologFlags=X11" in f.message
    assert "slurm_x11:no-magic-cookie" in {s["id"] for s in facts["facts"]["ticket"]["symptoms"]}
