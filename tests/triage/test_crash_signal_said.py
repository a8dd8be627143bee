"""A segmentation fault or bus error named in the user's own sentence (sets B and N had these pastes
refused as unreadable): the words are read, so the paste is answered with what could not be judged;
they name the signal and not its cause, so nothing is alarmed. A shell's own report line stays the
shell family's."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from
from rulekit import message_ids


@pytest.mark.parametrize("rel, line", [
    ("tickets_blind_b/manigaussian-16-bus-error-eval-docker.txt", 1),
    # the quoted "Segmentation\nFault" is wrapped across two lines of the paste
    ("tickets_blind_n/fds-1424-segfault-stack-limit.txt", 13),
])
def test_a_crash_signal_in_the_users_words_is_read_not_refused(rel, line):
    got = check_from(FIXTURES / rel)
    assert got["rc"] == 0, got["stderr"]
    (said,) = [s for s in got["doc"]["facts"]["ticket"]["symptoms"] if s.get("id") == "prose:crash-signal-said"]
    assert said["line"] == line
    assert not [f for f in got["doc"]["findings"] if f["severity"] in ("error", "warning")]


@pytest.mark.parametrize("text, shell", [
    ("Segmentation fault (core dumped)\n", "shell:segmentation-fault"),
    ("bash: line 1: 4242 Bus error               ./a.out\n", "shell:bus-error"),
])
def test_a_shells_report_line_is_not_read_as_the_users_words(text, shell):
    ids = message_ids(text)
    assert shell in ids and "prose:crash-signal-said" not in ids


def test_a_program_said_to_give_a_segfault_is_read_a_general_mention_is_not():
    assert "prose:crash-signal-said" in message_ids("the solver gives a segmentation fault on 64 ranks\n")
    assert "prose:crash-signal-said" not in message_ids("segmentation faults are hard to debug\n")
