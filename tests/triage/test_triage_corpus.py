"""The real ticket corpus (fixtures/tickets/): the manifest is honest, and triage of the pastes
through the CLI is held to today's score: no traceback, no false positive, no refusal of a paste
that holds a diagnosis, and every expected symbol fires unless the manifest names the gap."""

from __future__ import annotations

import re

import pytest

from ticketkit import CATALOGUE, MANIFEST, TICKETS, as_score_run, score_mod

ISSUE_URL = re.compile(r"^https://github\.com/[A-Za-z0-9][\w.-]*/[\w.-]+/(issues|pull)/[1-9]\d*$")
FIELDS = {"id", "url", "licence", "read", "class", "healthy", "diagnosis", "must", "must_not",
          "proposed", "known_miss"}


@pytest.fixture(scope="module")
def scored(triage):
    """Every paste through `check --from` once (conftest's triage: the CLI's entry point in this
    process), judged by the bench script's own judge against the manifest."""
    return {t["id"]: score_mod.judge(t, as_score_run(triage(TICKETS / f"{t['id']}.txt"))) for t in MANIFEST}


# A healthy control, a diagnosis, one with a known miss, and pastes hpcdoctor declines (exit 2).
CLI_SAMPLE = ["pytorch-121067-macos-email-wrapped-healthy", "yuan2-65-driver-found-11000"]


@pytest.mark.parametrize("tid", CLI_SAMPLE + [t["id"] for t in MANIFEST if t.get("known_miss")][:1])
def test_in_process_triage_is_what_the_cli_prints(triage, tid):
    """The ticket tests read conftest's in-process triage; a fresh process as the bench script runs
    it (installed CLI, HPCDOCTOR_DEBUG=1) gives the same exit status, report and judgement."""
    t = next(x for x in MANIFEST if x["id"] == tid)
    cli = score_mod.run_ticket(t, TICKETS, timeout=120)
    here = as_score_run(triage(TICKETS / f"{tid}.txt"))
    assert (cli["rc"], cli["report"], cli["findings"]) == (here["rc"], here["report"], here["findings"])
    assert cli["stderr"] == here["stderr"]
    assert score_mod.judge(t, cli) == score_mod.judge(t, here)


def test_declined_paste_in_process_is_the_cli_refusal(triage):
    declined = [t for t in MANIFEST if t["healthy"] and triage(TICKETS / f"{t['id']}.txt")["rc"] == 2]
    assert declined, "the corpus holds healthy pastes hpcdoctor declines (prose alone)"
    t = declined[0]
    cli = score_mod.run_ticket(t, TICKETS, timeout=120)
    here = triage(TICKETS / f"{t['id']}.txt")
    assert cli["rc"] == here["rc"] == 2 and cli["stderr"] == here["stderr"]
    assert len(cli["stderr"].strip().splitlines()) == 1, cli["stderr"]


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
