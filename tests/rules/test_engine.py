"""The rule engine: declaration, selection, skipping with reasons, ranking."""

from __future__ import annotations

import types

import pytest

from hpcdoctor import engine
from hpcdoctor.engine import Hit, RuleError, rule
from hpcdoctor.facts import FactView, Unknown, flatten_unknowns

DOC = """
    What it detects:
        x
    Why it matters:
        y
    How to fix:
        z
    References:
        - 001_dd2fe1913b91ca0a.txt (TF32)
        - https://example.org/a
"""


def _module(name, *funcs):
    mod = types.ModuleType(name)
    for fn in funcs:
        fn.__module__ = name
        fn._hpcdoctor_rule.module = name
        setattr(mod, fn.__name__, fn)
    return mod


def _rules():
    @rule("TST001", "needs-flags", "warning", "t", impact=2)
    def a(f):
        if "x" in f["cpu.flags"]:
            yield Hit("msg a", "fix a")

    @rule("TST002", "always", "error", "t", impact=1)
    def b(f):
        yield Hit("msg b", "fix b", subject="GPU 1")

    @rule("TST003", "broken", "advice", "t")
    def c(f):
        raise ZeroDivisionError("boom")

    for fn in (a, b, c):
        fn.__doc__ = DOC
        fn._hpcdoctor_rule.docs = engine.parse_docs(DOC)
    return engine.collect_rules([_module("fake_rules", a, b, c)])


def test_docs_and_references_parse():
    docs = engine.parse_docs(DOC)
    assert set(docs) == set(engine.HEADINGS)
    assert engine.parse_references(docs["References"]) == ["001_dd2fe1913b91ca0a.txt (TF32)", "https://example.org/a"]


def test_missing_fact_is_skipped_with_reason_and_broken_rule_contained():
    tree, unknown = flatten_unknowns({"cpu": {"flags": Unknown("cpuinfo unreadable")}})
    findings, skipped = engine.evaluate(_rules(), FactView(tree, unknown))
    assert [f.code for f in findings] == ["TST002"]
    reasons = {s["code"]: s["reason"] for s in skipped}
    assert reasons["TST001"] == "needs cpu.flags: cpuinfo unreadable"
    assert "ZeroDivisionError" in reasons["TST003"]


def test_ranking_puts_errors_first():
    findings, _ = engine.evaluate(_rules(), FactView({"cpu": {"flags": ["x"]}}))
    assert [f.severity for f in findings] == ["error", "warning"]


def test_select_and_ignore():
    rules = _rules()
    assert [r.code for r in engine.select(rules, ["TST00"], ["always"])] == ["TST001", "TST003"]
    assert [r.code for r in engine.select(rules, ["needs-flags"])] == ["TST001"]
    with pytest.raises(RuleError, match="unknown rule 'nope' in --select"):
        engine.select(rules, ["nope"])
    with pytest.raises(RuleError, match="--ignore"):
        engine.select(rules, [], ["TSX"])


def test_duplicate_codes_rejected():
    @rule("TST001", "one", "advice", "t")
    def a(f):
        return ()

    @rule("TST001", "two", "advice", "t")
    def b(f):
        return ()

    with pytest.raises(RuleError, match="already defined"):
        engine.collect_rules([_module("dup_rules", a, b)])


def test_bad_severity_rejected():
    with pytest.raises(RuleError):
        rule("TST009", "x", "critical", "t")


def test_at_or_above():
    fs = [{"severity": "error"}, {"severity": "warning"}, {"severity": "advice"}]
    assert len(engine.at_or_above(fs, "error")) == 1
    assert len(engine.at_or_above(fs, "advice")) == 3
    assert engine.at_or_above(fs, "never") == []


def test_factview_paths():
    v = FactView({"gpus": [{"name": "H100"}], "a": {"b": None}}, {"a.b": "driver gone"})
    assert v["gpus.0.name"] == "H100"
    assert v.get("gpus.5.name") is None
    with pytest.raises(Exception) as exc:
        v["a.b"]
    assert "driver gone" in str(exc.value)
