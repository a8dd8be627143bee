"""Retellings read and quoted, never a diagnosis (knowledge/messages/prose.toml): the same work slower
on some nodes than others, a notebook's kernel that crashed, a process killed, a ninja build failed; on real public pastes
(tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import recorded_paste_facts, run_rule


@pytest.mark.parametrize("paste,key,line", [
    ("ddf-pipeline-85-nodes-stuck-in-low-power-1ghz.txt", "slower-on-some-nodes-said", 3),
    ("suite3d-51-stale-shm-segment-after-crash.txt", "notebook-kernel-crash-said", 1),
    ("ai-composer-9-killed-too-little-memory.txt", "process-killed-said", 3),
    ("flash-attention-347-build-killed-ram.txt", "ninja-build-failed-said", 7)])
def test_read_not_refused(paste, key, line):
    g = recorded_paste_facts(paste)
    assert any(s.get("key") == key and s["line"] == line for s in g["facts"]["ticket"]["symptoms"])


@pytest.mark.parametrize("paste,symbol", [("ddf-pipeline-85-nodes-stuck-in-low-power-1ghz.txt", "cpu-governor-pins-min-frequency"),
                                          ("suite3d-51-stale-shm-segment-after-crash.txt", "stale-shm-segments"),
                                          ("flash-attention-347-build-killed-ram.txt", "host-memory-oom-killed")])
def test_the_words_alone_claim_no_cause(paste, symbol):
    findings, _ = run_rule(symbol, recorded_paste_facts(paste))
    assert findings == []


def test_killed_alone_is_answered_only_as_a_hint():
    # The user's "killed" with nothing else in the paste: the OOM killer named as the kill to confirm,
    # at info (tests/rules/test_held_killed_login_words.py holds its wording and the near misses).
    (hit,) = run_rule("host-memory-oom-killed", recorded_paste_facts("ai-composer-9-killed-too-little-memory.txt"))[0]
    assert hit.severity == "info"
