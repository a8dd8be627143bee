"""xla-built-without-optimizations on XLA's slow-operation alarm as users pasted it
(tests/fixtures/pastes/SOURCES.md): an unoptimised XLA's words are a warning, a released XLA's
long compile is no finding."""

from __future__ import annotations

import json

import pytest

from conftest import run_main
from rulekit import PASTES, fired, recorded_paste_facts


def test_a_debug_build_of_xla_is_a_warning():
    (f,) = fired("xla-built-without-optimizations", recorded_paste_facts("jax-3323-xla-built-without-optimizations.txt"))
    assert f.severity == "warning" and "XLA was built without compiler optimizations" in f.message
    assert "pip install --force-reinstall -U jax jaxlib" in f.fix and "-c opt" in f.fix


def test_through_check_from():
    res = run_main("check", "--format", "json", "--from", str(PASTES / "jax-3323-xla-built-without-optimizations.txt"))
    symbols = {x["symbol"]: x["severity"] for x in json.loads(res.stdout)["findings"]}
    assert symbols.get("xla-built-without-optimizations") == "warning"


@pytest.mark.parametrize("paste", ["tapnet-53-long-xla-compile-expected-healthy.txt",
                                   "openxla-23924-very-slow-compile-healthy.txt",
                                   "jax-21300-constant-folding-opt-build-healthy.txt"])
def test_a_released_xla_compiling_long_is_no_finding(paste):
    # the alarm of an optimised build ("Very slow compile?", "The operation took", "This isn't
    # necessarily a bug") is read as what it is, and nothing fires
    gathered = recorded_paste_facts(paste)
    assert not fired("xla-built-without-optimizations", gathered)
    ids = {s.get("id") for s in gathered["facts"]["ticket"]["symptoms"]}
    assert ids & {"xla:very-slow-compile", "xla:constant-folding-slow"}
    res = run_main("check", "--format", "json", "--from", str(PASTES / paste))
    assert [x["symbol"] for x in json.loads(res.stdout)["findings"] if x["severity"] in ("error", "warning")] == []
