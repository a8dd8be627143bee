"""duplicate-libraries on mkl-service's refusal of the Intel threading layer beside GNU OpenMP (real
pastes, tests/fixtures/pastes/SOURCES.md), and silent where a maintainer only explains the message."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_paste_facts



@pytest.mark.parametrize("paste, library", [
    ("hd-bet-9-mkl-intel-layer-with-wheel-libgomp.txt", "libgomp-7c85b1e2.so.1"),   # a wheel's renamed libgomp
    ("rslearn-projects-10-mkl-intel-layer-beaker.txt", "libgomp.so.1"),              # behind log timestamps
    ("../tickets_blind_t/ms-g3d-20-mkl-intel-threading-with-libgomp.txt", "libgomp.so.1"),   # set T, unsealed
    ("../tickets_blind_t/pytorch-ort-102-mkl-intel-threading-with-libgomp.txt", "libgomp.so.1"),
])
def test_mkl_service_refusal_names_the_other_runtime(paste, library):
    (f,) = fired("duplicate-libraries", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"({library})" in f.message and "mkl-service stopped it" in f.message
    assert f.fix.startswith("export MKL_THREADING_LAYER=GNU") and "import numpy before torch" in f.fix


def test_an_explanation_of_the_message_is_silent():
    findings, _ = run_rule("duplicate-libraries", told_paste_facts("mkl-service-14-threading-layer-explained-healthy.txt"))
    assert findings == []
