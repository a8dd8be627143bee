"""The real ticket corpus (fixtures/tickets/) as the ticket tests read it: its folder and its
manifest, read by bench/triage_score.py (the scorer the corpus tests hold triage to)."""

from __future__ import annotations

import importlib.util

from conftest import FIXTURES, ROOT
from hpcdoctor import engine

TICKETS = FIXTURES / "tickets"


def _score_module():
    spec = importlib.util.spec_from_file_location("triage_score", ROOT / "bench" / "triage_score.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


score_mod = _score_module()
MANIFEST = score_mod.load_manifest(TICKETS)
CATALOGUE = {r.symbol for r in engine.load_rules()[0]}


def as_score_run(run: dict) -> dict:
    """conftest's triage result in the shape bench/triage_score.py judges."""
    doc = run["doc"]
    findings = {f["symbol"]: f["severity"] for f in (doc or {}).get("findings", [])}
    return {"rc": run["rc"], "findings": findings, "stderr": run["stderr"], "report": doc is not None}
