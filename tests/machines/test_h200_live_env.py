"""The lease of 2026-11-27 on an H200 (Firecracker VM, driver 580.159.04, torch 2.11.0+cu130):
bench/gpu_live_env.sh ran the live `check` with one variable of the job's environment set at a time.
Each report holds the facts the node gave live; the rules that read the environment are run again
on those facts, so today's rules are held to a real GPU node's readings, not to facts made here."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES
from rulekit import run_rule

LEASE = FIXTURES / "gpu_acceptance" / "h200-fc-2026-11-27"
ENV_RULES = ("no-gpu-visible", "torch-alloc-conf-invalid", "nccl-net-unavailable")


def _live(name: str) -> dict:
    return json.loads((LEASE / f"{name}.json").read_text())


@pytest.mark.parametrize("name,symbol,said", [
    ("visible-empty", "no-gpu-visible", "CUDA_VISIBLE_DEVICES is empty"),
    ("visible-index", "no-gpu-visible", "CUDA_VISIBLE_DEVICES is '3'"),
    ("visible-first-bad", "no-gpu-visible", "CUDA stops at '5'"),
    ("alloc-conf", "torch-alloc-conf-invalid", "did you mean 'expandable_segments'?"),
    ("nccl-net", "nccl-net-unavailable", "no RDMA"),
])
def test_a_variable_that_breaks_the_job_is_an_error_on_the_live_gpu_node(name, symbol, said):
    doc = _live(name)
    live = [f for f in doc["findings"] if f["symbol"] == symbol]
    assert live and live[0]["severity"] == "error" and said in live[0]["message"], doc["findings"]
    again, skipped = run_rule(symbol, {"facts": doc["facts"], "unknown": doc["unknown"]})
    assert not skipped and [(f.severity, f.message) for f in again] == [("error", live[0]["message"])]
    # The node's GPU is there and named: the variable hides it, the driver does not.
    assert doc["facts"]["gpus"][0]["name"] == "NVIDIA H200"


def test_the_same_node_without_the_variables_gives_none_of_them():
    doc = _live("plain")
    assert not {f["symbol"] for f in doc["findings"]} & set(ENV_RULES)
    for symbol in ENV_RULES:
        findings, skipped = run_rule(symbol, {"facts": doc["facts"], "unknown": doc["unknown"]})
        assert findings == [] and not skipped, (symbol, findings, skipped)
