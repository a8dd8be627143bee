"""The real ticket corpus (fixtures/tickets/): the manifest is honest, and triage of the pastes
through the CLI is held to today's score: no traceback, no false positive, no refusal of a paste
that holds a diagnosis, and every expected symbol fires unless the manifest names the gap."""

from __future__ import annotations

import importlib.util
import re

import pytest

from conftest import FIXTURES, ROOT
from hpcdoctor import engine

TICKETS = FIXTURES / "tickets"
ISSUE_URL = re.compile(r"^https://github\.com/[A-Za-z0-9][\w.-]*/[\w.-]+/(issues|pull)/[1-9]\d*$")
FIELDS = {"id", "url", "licence", "read", "class", "healthy", "diagnosis", "must", "must_not",
          "proposed", "known_miss"}


def _score_module():
    spec = importlib.util.spec_from_file_location("triage_score", ROOT / "bench" / "triage_score.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


score_mod = _score_module()
MANIFEST = score_mod.load_manifest(TICKETS)
CATALOGUE = {r.symbol for r in engine.load_rules()[0]}


@pytest.fixture(scope="module")
def scored():
    """Every paste through the installed CLI once (parallel processes), judged against the manifest."""
    return {r["id"]: r for r in score_mod.score(TICKETS, timeout=120)["results"]}


def test_manifest_is_complete_and_honest():
    ids = [t["id"] for t in MANIFEST]
    assert len(ids) == len(set(ids)), "duplicate ticket ids"
    assert len(ids) >= 60
    healthy = sum(bool(t["healthy"]) for t in MANIFEST)
    assert 0.3 <= healthy / len(ids) <= 0.5, "about 40 % healthy controls"
    on_disk = {p.stem for p in TICKETS.glob("*.txt")}
    assert on_disk == set(ids), "every paste has a manifest entry and every entry a paste"
    for t in MANIFEST:
        assert set(t) <= FIELDS, (t["id"], set(t) - FIELDS)
        assert ISSUE_URL.match(t["url"]), t["url"]
        assert t["licence"] and t["diagnosis"] and t["class"], t["id"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", t["read"]), t["id"]
        assert (TICKETS / f"{t['id']}.txt").read_text(encoding="utf-8").strip(), t["id"]
        if t["healthy"]:
            assert not t["must"], f"{t['id']}: a healthy control expects no diagnosis"
        else:
            assert t["must"], f"{t['id']}: a problem ticket names what must fire"
        assert not set(t["must"]) & set(t["must_not"]), t["id"]
        proposed = set(t.get("proposed", []))
        assert proposed <= set(t["must"]), f"{t['id']}: proposed symbols are ones it expects"
        assert not proposed & CATALOGUE, f"{t['id']}: {proposed & CATALOGUE} exist now; drop 'proposed'"
        for sym in t["must"] + t["must_not"]:
            assert sym in CATALOGUE or sym in proposed or any(
                sym in o.get("proposed", []) for o in MANIFEST), f"{t['id']}: unknown symbol {sym}"
        for sym, reason in t.get("known_miss", {}).items():
            assert sym in t["must"], f"{t['id']}: known_miss {sym} is not expected"
            assert len(reason.strip()) > 20, f"{t['id']}: known_miss {sym} needs a reason"


@pytest.mark.parametrize("tid", [t["id"] for t in MANIFEST])
def test_ticket(scored, tid):
    t = next(x for x in MANIFEST if x["id"] == tid)
    r = scored[tid]
    assert not r["traceback"], f"{tid}: {r['stderr_tail']}"
    assert not r["false_positives"], f"{tid}: {r['false_positives']} fired ({r['fired']})"
    known = t.get("known_miss", {})
    missed = [s for s in t["must"] if s not in r["fired"]]
    unexplained = [s for s in missed if s not in known]
    assert not unexplained, f"{tid}: expected {unexplained} to fire; fired {r['fired']}"
    if r["refused"]:
        assert missed and set(missed) <= set(known), f"{tid}: a paste with a diagnosis was refused"
    stale = [s for s in known if s in r["fired"]]
    assert not stale, f"{tid}: {stale} fire now; remove them from known_miss in tickets.toml"
