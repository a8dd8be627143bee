"""CernVM-FS's own words (knowledge/messages/cvmfs.toml) as fuse-mount-client-died reads them: the
loader's failure table decoded, cvmfs_config probe at warning only where no loader failure explains
it, and a plain question left unanswered (set U's paste; tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

SYM = "fuse-mount-client-died"


def test_the_loaders_failure_code_is_decoded_and_is_not_a_dead_client():
    text = (PASTES / "aaroc-devops-260-cvmfs-probe-failed-file-catalog.txt").read_text()
    found = {s["id"]: s for s in find_messages(text)}
    assert "cvmfs:kFailCatalog" in found and "cvmfs:probe-failed" in found
    assert "root file catalog could not be loaded" in found["cvmfs:kFailCatalog"]["means"]
    assert not fired(SYM, recorded_paste_facts("aaroc-devops-260-cvmfs-probe-failed-file-catalog.txt"))


def test_a_plain_question_whether_the_server_is_down_is_not_answered():
    # cvmfs/cvmfs#4109 (set U): only "unable to mount ... Is there a issue with the server?"; the
    # stuck client mount was the reporter's later finding, not in the paste
    assert not fired(SYM, recorded_paste_facts("../tickets_blind_u/cvmfs-4109-stuck-client-mount-autofs.txt"))
