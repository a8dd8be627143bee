"""Every catalogued example, pasted alone, fires each rule its entry feeds, or the entry says what else
that rule reads (`needs`).

An entry's `rules` is a promise: a user who pastes this message gets that finding. Nothing held the
promise before: an entry could name a rule whose guards it can never pass, and the user got the
message's meaning and no finding (issue 24: set Q's ENOLCK and ch-run lines were known and fed
nothing). The examples are the emitters' own lines from real pastes or sources, so this is a test on
real text. A `needs` that the example alone satisfies is stale and fails too: the guard it describes
is gone.
"""

from __future__ import annotations

import functools

import pytest

from hpcdoctor import engine, pipeline
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import messages
from hpcdoctor.runner import Options
from hpcdoctor.triage.paste import open_paste


@functools.lru_cache(maxsize=None)
def _rules():
    rules, errors = engine.load_rules()
    assert not errors
    return {r.symbol: r for r in rules}


def _cases():
    known = _rules()
    for fam in messages.families():
        for entry in fam.entries:
            named = [r for r in entry.get("rules") or [] if r in known]   # proposed rules have no code yet
            if entry.get("example") and named:
                yield pytest.param(entry, named, id=entry.id)


def _fired(example: str, symbols, tmp_path):
    path = tmp_path / "ticket.txt"
    path.write_text(example + "\n", encoding="utf-8")
    with open_paste([str(path)]) as (root, _recognised, _notes):
        g = pipeline.gather(root, Options())
    view = FactView(g["facts"], g["unknown"], None)
    findings, _skipped = engine.evaluate([_rules()[s] for s in symbols], view)
    return {x.symbol for x in findings}


@pytest.mark.parametrize("entry, named", list(_cases()))
def test_an_example_fires_the_rules_it_feeds_unless_it_says_what_else_they_read(entry, named, tmp_path):
    needs = entry.get("needs") or {}
    fired = _fired(str(entry.get("example")), named, tmp_path)
    silent = [s for s in named if s not in fired and s not in needs]
    stale = [s for s in named if s in fired and s in needs]
    assert not silent, (f"{entry.id}: its example, pasted alone, fires none of {silent}: map it to a rule that "
                        "states it, or say in `needs` what else the rule reads")
    assert not stale, f"{entry.id}: `needs` says {stale} read more than the example, but the example alone fires them"


def test_the_check_can_fail_both_ways(tmp_path):
    # nvidia-smi's "couldn't communicate with the NVIDIA driver" is gpu-driver-unusable's on its own;
    # its "No devices were found" needs an NVIDIA GPU shown, as a node without one answers the same
    lost = messages.families(("nvidia_smi",))[0].by_key["couldnt-communicate"]
    assert "needs" not in lost.data
    assert "gpu-driver-unusable" in _fired(str(lost.get("example")), ["gpu-driver-unusable"], tmp_path)
    no_devices = messages.families(("nvidia_smi",))[0].by_key["no-devices-found"]
    assert "gpu-driver-unusable" in (no_devices.get("needs") or {})
    assert "gpu-driver-unusable" not in _fired(str(no_devices.get("example")), ["gpu-driver-unusable"], tmp_path)
