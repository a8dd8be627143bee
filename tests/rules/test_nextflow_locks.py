"""Nextflow's locks in its launch directory (knowledge/messages/nextflow_locks.toml): the resume
cache that would not open is a file-system lock fault; the run history's "Can't lock file", whose
words say the same, is thrown by its source only when another Nextflow holds the lock. Real pastes
from set Y (unsealed), one of each."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages

CACHE = "../tickets_blind_y/nextflow-1310-cache-db-scratch-no-file-locks.txt"
HISTORY = "../tickets_blind_y/mcmicro-127-nextflow-history-lock-concurrent-runs-healthy.txt"


def test_cache_db_that_will_not_open_is_the_launch_directorys_locks():
    (f,) = fired("fs-file-locking-unsupported", recorded_paste_facts(CACHE))
    assert f.severity == "error" and "resume cache" in f.message and "line 10" in f.message
    assert f.fix.startswith('findmnt -T "$PWD"') and '-w "$OLDPWD/work"' in f.fix


def test_history_lock_held_by_a_second_run_is_not_the_file_system():
    facts = recorded_paste_facts(HISTORY)
    assert "nextflow_locks:history-lock-held" in {s["id"] for s in facts["facts"]["ticket"]["symptoms"]}
    assert run_rule("fs-file-locking-unsupported", facts)[0] == []


def test_session_lock_is_another_run_not_the_file_system():
    ids = {s["id"] for s in find_messages(
        "ERROR ~ Unable to acquire lock on session with ID 84f1e8a2-6b3c-4c6d-9d0e-2f1a3b4c5d6e\n\n"
        "Common reasons of this error are:\n - You are trying to resume the execution of an already running pipeline\n")}
    assert ids == {"nextflow_locks:session-lock-held"}
