"""The rule catalogue and the knowledge base, checked as a whole."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpcdoctor import engine, knowledge

RULES, ERRORS = engine.load_rules()
TESTS = "\n".join(p.read_text() for p in Path(__file__).parent.parent.rglob("test_*.py"))
SEEDS = set(knowledge.load("sources")["seeds"])


def test_loads_without_errors_and_codes_are_unique():
    assert not ERRORS
    assert len({r.code for r in RULES}) == len(RULES) == len({r.symbol for r in RULES})


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.symbol)
def test_rule_is_documented_under_the_fixed_headings(rule):
    for head in engine.HEADINGS:
        assert rule.docs.get(head, "").strip(), f"{rule.code} lacks '{head}'"
    assert rule.references
    assert 1 <= rule.impact <= 10 and rule.title


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.symbol)
def test_every_reference_resolves(rule):
    for ref in rule.references:
        key = ref.split()[0]
        assert key in SEEDS or re.match(r"^https?://\S+$", key), f"{rule.code}: {ref}"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.symbol)
def test_rule_has_a_firing_and_a_silent_test(rule):
    sym = re.escape(rule.symbol)
    assert re.search(rf"(=|assert|len\()\s*fired\(\"{sym}\"", TESTS), f"no test makes {rule.symbol} fire"
    assert re.search(rf"not fired\(\"{sym}\"", TESTS) or re.search(rf"for sym in \([^)]*\"{sym}\"", TESTS), \
        f"no test keeps {rule.symbol} silent"


def test_seed_references_exist_when_the_shared_folder_is_there():
    seeds_dir = Path(__file__).resolve().parents[3] / "shared" / "seeds"
    if not seeds_dir.is_dir():
        pytest.skip("../shared is not beside this checkout")
    assert SEEDS <= {p.name for p in seeds_dir.iterdir()}


@pytest.mark.parametrize("name", ["gpus", "thresholds", "cuda"])
def test_every_knowledge_entry_has_a_source(name):
    data = knowledge.load(name)
    if name == "cuda":
        assert data["source"]
        return
    entries = [e for key in ("sku", "model") for e in data.get(key, [])] if name == "gpus" else list(data.values())
    assert entries
    for e in entries:
        assert e.get("source"), e


def test_gpu_skus_are_complete_and_consistent():
    skus = {s["id"]: s for s in knowledge.load("gpus")["sku"]}
    for needed in ("v100-sxm2", "a100-40gb", "a100-sxm4-80gb", "a100-sxm-64gb", "h100-sxm", "h100-pcie", "h100-64gb",
                   "h200", "gh200", "b200", "l40s", "mi250x", "mi300x"):
        assert needed in skus
    for s in skus.values():
        assert s["vendor"] in ("nvidia", "amd") and isinstance(s["has_bf16"], bool) and isinstance(s["has_tf32"], bool)
        assert (s.get("cc") is not None) == (s["vendor"] == "nvidia")
        if s.get("bf16") and s.get("fp32"):
            assert s["bf16"] > s["fp32"]
    assert skus["v100-sxm2"]["has_bf16"] is False and skus["v100-sxm2"]["has_tf32"] is False
    assert skus["mi250x"]["gcds"] == 2
