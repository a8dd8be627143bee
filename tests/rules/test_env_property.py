"""Property over the rule catalogue: for every rule with an ``env`` fix, applying what
``hpcdoctor env`` prints (its exports, and for a variable the user set, the value its comment
suggests) to the same facts silences that rule and makes no other rule fire."""

from __future__ import annotations

import copy
import inspect

import pytest

from hpcdoctor import engine
from hpcdoctor.facts import FactView
from hpcdoctor.report import envlines
from rulekit import cpuinfo_facts, facts, nvsmi_node, with_env

H100 = "h100-kvm-1gpu"
JOB = {"SLURM_JOB_ID": "42", "SLURM_CPUS_PER_TASK": "4", "SLURM_NTASKS": "4", "SLURM_NTASKS_PER_NODE": "4"}
TWO_CPUS = {"affinity.allowed_cpus": [0, 1], "affinity.allowed_count": 2}


def _grace(tmp_path):
    g = cpuinfo_facts("linux-ubuntu22.04-neoverse_v2", tmp_path)
    g["facts"]["env"] = {"vars": {}}
    g["facts"]["torch"] = {"installed": True, "version": "2.11.0", "mkldnn": True}
    return g


def _leonardo(tmp_path):
    g = nvsmi_node("telegraf_a100-sxm4-80gb_mig_v12.xml", tmp_path)
    g["facts"]["gpus"][0]["name"] = "NVIDIA A100-SXM-64GB"
    g["facts"]["cpu"] = {"model_name": "Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz", "microarch": "icelake"}
    g["facts"]["torch"] = {"installed": True, "nccl": "2.27.3", "version": "2.5.0"}
    return g


def _zen3_bf16(tmp_path):
    g = cpuinfo_facts("linux-ubuntu20.04-zen3", tmp_path)
    g["facts"]["env"] = {"vars": {"ACCELERATE_MIXED_PRECISION": "bf16"}}
    return g


SCENARIOS = {
    "slurm-4-ranks-threads-unset": lambda tmp: with_env(H100, JOB),
    "torchrun-8-ranks": lambda tmp: with_env(H100, {"LOCAL_WORLD_SIZE": "8", "LOCAL_RANK": "0"}),
    "slurm-4-ranks-16-threads": lambda tmp: with_env(H100, {**JOB, "OMP_NUM_THREADS": "16"}),
    "cpus-per-task-8-on-2-cpus": lambda tmp: with_env(H100, {"SLURM_JOB_ID": "7", "SLURM_CPUS_PER_TASK": "8",
                                                             "SLURM_NTASKS": "1"}, **TWO_CPUS),
    "8-threads-on-2-cpus": lambda tmp: with_env(H100, {"SLURM_JOB_ID": "7", "SLURM_CPUS_PER_TASK": "8",
                                                       "SLURM_NTASKS": "1", "OMP_NUM_THREADS": "8"}, **TWO_CPUS),
    "old-nccl-async-name": lambda tmp: with_env(H100, {"NCCL_ASYNC_ERROR_HANDLING": "1"}),
    "amx-cpu-node": lambda tmp: facts("cpu-kvm-2core"),
    "grace": _grace,
    "leonardo-nccl-2.27": _leonardo,
    "bf16-autocast-on-zen3": _zen3_bf16,
}


def _rules():
    rules, errors = engine.load_rules()
    assert not errors
    return rules


def _evaluate(g):
    findings, _ = engine.evaluate(_rules(), FactView(g["facts"], g["unknown"], {}))
    return findings


def _applied(g, findings):
    """The facts after `eval "$(hpcdoctor env)"`, with the scheduler facts derived again."""
    from hpcdoctor.checks.scheduler import collect

    user = g["facts"]["env"]["vars"]
    text = envlines.render({"findings": [f.to_json() for f in findings]}, "bash", user)
    after = copy.deepcopy(g)
    env = after["facts"]["env"]["vars"]
    for f in findings:
        for name, value in f.env.items():
            if name in user:  # never overridden: the comment names the value, the user applies it
                assert f"{name} is already set" in text
                env[name] = value
            else:
                assert f"export {name}=" in text
                env.setdefault(name, value)  # the first finding's value is the one exported

    class Root:
        def environ(self):
            return env

        def exists(self, path):
            return False

    after["facts"]["scheduler"] = collect(Root(), None)["scheduler"]
    return after


def _rules_with_env_fixes():
    return {r.code for r in _rules() if "env=" in inspect.getsource(r.func)}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_env_exports_silence_their_rule_and_wake_no_other(name, tmp_path):
    g = SCENARIOS[name](tmp_path)
    before = _evaluate(g)
    fixed = {f.code for f in before if f.env}
    assert fixed, f"{name}: no rule with an env fix fired"
    after = _evaluate(_applied(g, before))
    assert not fixed & {f.code for f in after}, [f.message for f in after if f.code in fixed]
    woke = {f.code for f in after} - {f.code for f in before}
    assert not woke, [f"{f.code} {f.message}" for f in after if f.code in woke]


def test_scenarios_cover_every_rule_with_an_env_fix(tmp_path):
    seen = set()
    for i, make in enumerate(SCENARIOS.values()):
        seen |= {f.code for f in _evaluate(make(tmp_path / str(i))) if f.env}
    assert seen == _rules_with_env_fixes()
