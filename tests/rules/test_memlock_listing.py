"""mpi-memlock-limit from an older UCX's bare verbs failure and the user's own limits listing:
the four shells' forms as recorded on the development VM, set H's public ticket (unsealed after
its final sealed score), and silence where the listing says unlimited or no verbs call failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import PASTES, fired, paste_facts, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

SET_H = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_h"
UCX_8229 = (SET_H / "ucx-8229-ibv-create-cq-memlock-64k.txt").read_text()
# A real bash listing line with the limit lifted (Open MPI users list, "ulimit -a" on a cluster node).
UNLIMITED = "max locked memory       (kbytes, -l) unlimited\n"


@pytest.mark.parametrize("shell", ["memlock-bash", "memlock-zsh", "memlock-dash", "memlock-tcsh"])
def test_each_shells_listing_gives_the_limit_in_kb(shell):
    got = [s for s in find_messages((PASTES / "ulimit-four-shells-memlock-64k.txt").read_text())
           if s["id"] == f"ulimit:{shell}"]
    assert [s["kbytes"] for s in got] == ["64"]


def test_an_older_ucx_create_cq_enomem_with_64_kb_shown_is_the_memlock_limit(tmp_path):
    (f,) = fired("mpi-memlock-limit", paste_facts(tmp_path, UCX_8229))
    assert "current: 64 kB, line 12" in f.message and "ulimit -l" in f.fix


def test_silent_when_the_listing_says_unlimited(tmp_path):
    lines = UCX_8229.splitlines()
    text = "\n".join(ln if not ln.startswith("max locked memory") else UNLIMITED.rstrip() for ln in lines)
    assert "(kbytes, -l) unlimited" in text
    assert not fired("mpi-memlock-limit", paste_facts(tmp_path, text))


def test_silent_on_a_finite_limit_without_a_failed_verbs_call():
    assert not fired("mpi-memlock-limit", recorded_paste_facts("ulimit-four-shells-memlock-64k.txt"))
