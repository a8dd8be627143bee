"""A shell's bare "Bus error" (set M's two tickets whose cause was a full disk): one info finding that
names both causes a mapping's SIGBUS has, a full /dev/shm and a full file system, with the df that
tells them apart; never an error, never a second finding from disk-full."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, run_rule

SET_M = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_m"


@pytest.mark.parametrize("name", ["lanenet-lane-detection-210-disk-full-bus-error", "repenrich-21-disk-full-bus-error"])
def test_a_bare_bus_error_names_both_causes_once(tmp_path, name):
    g = paste_facts(tmp_path, (SET_M / f"{name}.txt").read_text(encoding="utf-8"))
    (f,) = fired("shm-too-small", g)
    assert f.severity == "info" and "/dev/shm" in f.message and "full file system" in f.message
    assert "df -h /dev/shm" in f.fix and "df -i ." in f.fix
    findings, _skipped = run_rule("disk-full", g)   # a paste records no free space: skipped, not fired
    assert findings == []
