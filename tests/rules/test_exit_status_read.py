"""Exit statuses above 128 (knowledge/messages/exitstatus.toml: bash's 128+N) read and quoted with
the signal they name, never a diagnosis: 137 is SIGKILL from the OOM killer, a limit or kill -9 alike.
On a real public paste (tests/fixtures/pastes, SOURCES.md there) and the wordings tools print."""

from __future__ import annotations

import pytest

from rulekit import paste_facts, recorded_paste_facts, run_rule


def _exit(g):
    return [s for s in g["facts"]["ticket"]["symptoms"] if s.get("family") == "exitstatus"]


def test_exit_code_137_is_read_as_sigkill_and_claims_no_oom():
    g = recorded_paste_facts("cbio-cluster-232-exit-137-node-oom-killer.txt")
    (s,) = _exit(g)
    assert s["key"] == "SIGKILL" and s["line"] == 1
    # only a hint: the signal is named, its sender is left to the kernel's log (the site found the OOM killer there)
    findings, _ = run_rule("host-memory-oom-killed", g)
    assert [f.severity for f in findings] == ["info"]
    assert "nothing in the paste says who sent it" in findings[0].message and "journalctl -k" in findings[0].fix


@pytest.mark.parametrize("text,key", [
    ("subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 137.\n", "SIGKILL"),
    ("Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)\n", "SIGSEGV"),
    ("make: *** [all] Error 1\nexited with code 134\n", "SIGABRT")])
def test_the_wordings_tools_print(tmp_path, text, key):
    assert [s["key"] for s in _exit(paste_facts(tmp_path, text))] == [key]


@pytest.mark.parametrize("text", ["exit code 1\n", "exit status 12\n", "exit code 1370\n", "exit code 200\n"])
def test_ordinary_statuses_are_not_signals(text):
    from hpcdoctor.triage.messages import find_messages
    assert [s for s in find_messages(text) if s.get("family") == "exitstatus"] == []
