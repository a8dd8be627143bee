"""Healthy pastes that hold a program's recognisable words are read, not refused, and fire nothing
at warning or above (set J's healthy controls, tests/fixtures/pastes, SOURCES.md there): numexpr's
thread notes (numexpr 2.14.2 numexpr/utils.py) and Lmod 7.1's words for a cache bug (TACC/Lmod tag 7.1)."""

from __future__ import annotations

import pytest

from rulekit import _rules, recorded_paste_facts
from hpcdoctor import engine
from hpcdoctor.facts import FactView


@pytest.mark.parametrize("paste, read", [
    ("comfyui-fizznodes-83-numexpr-thread-note-healthy.txt", "threads:numexpr-safe-limit"),
    ("deoldify-459-numexpr-8-threads-note-healthy.txt", "threads:numexpr-safe-limit"),
    ("lmod-204-cached-loads-bug-fixed-in-release-healthy.txt", "lmod:lmod7-unable-to-load-module"),
])
def test_a_healthy_note_is_read_and_fires_nothing(paste, read):
    g = recorded_paste_facts(paste)   # a paste with nothing readable is refused before this
    symptoms = g["facts"]["ticket"]["symptoms"]
    assert read in {s["id"] for s in symptoms}
    assert all(not s.get("rules") for s in symptoms)
    findings, _skipped = engine.evaluate(list(_rules().values()), FactView(g["facts"], g["unknown"], None))
    assert not [f.symbol for f in findings if f.severity in ("error", "warning")]
