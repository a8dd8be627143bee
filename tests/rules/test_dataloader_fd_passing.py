"""dataloader-open-files from errno 24 beside multiprocessing's fd-passing frames (blind set E's real
ticket), and never from errno 24 alone: any program can exhaust its open-files limit."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, paste_facts


def test_errno_24_from_reduction_and_resource_sharer_is_the_dataloaders_fds(tmp_path):
    name = "face-recognition-framework-5-errno-24-too-many-files"
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    (f,) = fired("dataloader-open-files", paste_facts(tmp_path, text, name + ".txt"))
    assert "ran out of file descriptors" in f.message and "set_sharing_strategy('file_system')" in f.fix


def test_errno_24_without_those_frames_is_not_this_diagnosis():
    # The same ticket's error line with the sentence naming the frames cut away: not read at all
    # (a paste of only this is refused, so the rule cannot be asked).
    text = "When i run this step 4. i am getting error message.\nOSERROR: [Errno 24] Too many files open.\n"
    assert not [s for s in find_messages(text) if "dataloader-open-files" in (s.get("rules") or [])]
