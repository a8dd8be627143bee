"""The emitters' own output recorded on lent GPU nodes (fixtures/emitters_gpu/, bench/gpu_emitters.py):
labelled before triage read them, held to the judge the ticket corpus is held to. A diagnosis whose
rule exists must fire; no application fault or healthy run is blamed on the node; nothing is
refused or crashes. Symbols still `proposed` are the classes not built yet and are not held."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES
from ticketkit import CATALOGUE, as_score_run, score_mod

EMITTERS = FIXTURES / "emitters_gpu"
MANIFEST = score_mod.load_manifest(EMITTERS)


@pytest.fixture(scope="module")
def scored(triage):
    return {t["id"]: score_mod.judge(t, as_score_run(triage(EMITTERS / f"{t['id']}.txt"))) for t in MANIFEST}


def test_recordings_are_labelled_and_traced_to_their_run():
    ids = [t["id"] for t in MANIFEST]
    assert len(ids) == len(set(ids)) and {p.stem for p in EMITTERS.glob("*.txt")} == set(ids)
    runs = {}
    for path in sorted(EMITTERS.glob("manifest-*.json")):  # one per lease: manifest-<card>[-<which lease>].json
        for case in json.loads(path.read_text())["cases"]:
            runs[f"{path.name[9:13]}-{case['case']}"] = case
    for t in MANIFEST:
        assert t["must"] or t["healthy"], t["id"]
        assert not set(t["must"]) & set(t["must_not"]), t["id"]
        assert set(t.get("proposed", [])) <= set(t["must"]) and not set(t.get("proposed", [])) & CATALOGUE, t["id"]
        assert all(s in CATALOGUE for s in t["must_not"]), t["id"]
        # Every paste is one case's output (the two kernel-log pastes are cuts of one case's).
        case = "h100-dmesg-nvidia" if t["id"].startswith("h100-dmesg") else t["id"]
        if t["id"] == "h200-dmesg-xid-31":
            continue  # read by the lease command after the case ran, not a case of the script
        assert case in runs, t["id"]
        assert runs[case]["rc"] not in ("timeout", "not started"), t["id"]


@pytest.mark.parametrize("tid", [t["id"] for t in MANIFEST])
def test_recording(scored, tid):
    t = next(x for x in MANIFEST if x["id"] == tid)
    r = scored[tid]
    assert not r["traceback"], f"{tid}: {r['stderr_tail']}"
    assert not r["false_positives"], f"{tid}: {r['false_positives']} fired ({r['fired']})"
    held = [s for s in t["must"] if s not in t.get("proposed", [])]
    assert all(s in r["fired"] for s in held), f"{tid}: expected {held}; fired {r['fired']}"
    assert not r["refused"], f"{tid}: a paste with a diagnosis was refused"
