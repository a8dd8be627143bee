"""disk-full (SYS005) on a user's sentence that a disk is full, with no program's ENOSPC line: quoted
back at info (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, quoted", [
    ("cbio-cluster-18-disk-full-said.txt", "gpu-2-9 disk is full, jobs that need space in /tmp are failing"),
    ("hpcfund-92-tmp-full-login-node.txt", "\\tmp full in HPCFund login node"),
])
def test_a_disk_said_full_is_quoted_back_at_info(paste, quoted):
    (f,) = fired("disk-full", recorded_paste_facts(paste))
    assert f.severity == "info" and quoted in f.message and "no program's line" in f.message
    assert f.fix.startswith('df -h "${TMPDIR:-/tmp}"')


def test_a_disk_getting_full_is_not_said_full():
    text = (PASTES / "pyscope-159-warn-when-disk-getting-full.txt").read_text(encoding="utf-8")
    assert not [s for s in find_messages(text) if s["id"] == "prose:disk-full-said"]
