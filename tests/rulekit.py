"""Helpers for rule tests: start from a recorded machine's facts, change what the case needs."""

from __future__ import annotations

import copy
import functools
from typing import Any, Dict, List

from conftest import CPUINFO, NODES
from hpcdoctor import engine, pipeline
from hpcdoctor.facts import FactView
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot


@functools.lru_cache(maxsize=None)
def _gathered(node: str) -> Dict[str, Any]:
    return pipeline.gather(ReplaySysRoot(NODES / node), Options())


@functools.lru_cache(maxsize=None)
def _rules() -> Dict[str, engine.Rule]:
    rules, errors = engine.load_rules()
    assert not errors
    return {r.symbol: r for r in rules}


def facts(node: str, **changes: Any) -> Dict[str, Any]:
    """A recorded node's facts with dotted-path changes: facts("h100-kvm-1gpu", **{"env.vars.X": "1"})."""
    g = copy.deepcopy(_gathered(node))
    for path, value in changes.items():
        set_path(g["facts"], path, value)
        g["unknown"].pop(path, None)
    return g


def cpuinfo_facts(name: str, tmp_path) -> Dict[str, Any]:
    dest = tmp_path / name
    (dest / "fs" / "proc").mkdir(parents=True)
    (dest / "fs" / "proc" / "cpuinfo").write_bytes((CPUINFO / name).read_bytes())
    return pipeline.gather(ReplaySysRoot(dest), Options())


def set_path(tree: Dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    node: Any = tree
    for part in parts[:-1]:
        if isinstance(node, list):
            node = node[int(part)]
        else:
            if not isinstance(node.get(part), (dict, list)):
                node[part] = {}
            node = node[part]
    if isinstance(node, list):
        node[int(parts[-1])] = value
    else:
        node[parts[-1]] = value


def run_rule(symbol: str, gathered: Dict[str, Any], config: Dict[str, Any] = None):
    """(findings, skipped) of one rule over the given facts."""
    return engine.evaluate([_rules()[symbol]], FactView(gathered["facts"], gathered["unknown"], config))


def fired(symbol: str, gathered: Dict[str, Any], config: Dict[str, Any] = None) -> List[engine.Finding]:
    findings, skipped = run_rule(symbol, gathered, config)
    assert not skipped, skipped
    return findings


def nvsmi_node(xml_name: str, tmp_path, env: Dict[str, str] = None) -> Dict[str, Any]:
    """Facts of a node whose only recording is a public `nvidia-smi -q -x` report (plus an env)."""
    import json

    from conftest import PUBLIC

    snap = tmp_path / xml_name.replace(".", "_")
    (snap / "cmd").mkdir(parents=True)
    (snap / "cmd" / "qx.txt").write_text((PUBLIC / "nvsmi" / xml_name).read_text())
    (snap / "cmd" / "env.txt").write_text("".join(f"{k}={v}\n" for k, v in (env or {}).items()))
    (snap / "cmd" / "index.json").write_text(json.dumps([
        {"argv": ["nvidia-smi", "-q", "-x"], "rc": 0, "stdout": "qx.txt", "stderr": ""},
        {"argv": ["env"], "rc": 0, "stdout": "env.txt", "stderr": ""}]))
    return pipeline.gather(ReplaySysRoot(snap), Options())


def gpu_change(node: str, index: int = 0, **changes: Any) -> Dict[str, Any]:
    return facts(node, **{f"gpus.{index}.{k}": v for k, v in changes.items()})


def with_recorded(gathered: Dict[str, Any], tmp_path, outputs: Dict[tuple, str]) -> Dict[str, Any]:
    """Network facts of a node as a check would derive them from recorded command outputs
    (argv -> text), grafted onto another recording's facts."""
    import json

    from hpcdoctor.checks import network

    snap = tmp_path / "net"
    (snap / "cmd").mkdir(parents=True)
    index = []
    for i, (argv, text) in enumerate(outputs.items()):
        (snap / "cmd" / f"{i}.txt").write_text(text)
        index.append({"argv": list(argv), "rc": 0, "stdout": f"{i}.txt", "stderr": ""})
    (snap / "cmd" / "index.json").write_text(json.dumps(index))
    facts_net = network.collect(ReplaySysRoot(snap), None)["network"]
    g = copy.deepcopy(gathered)
    from hpcdoctor.facts import flatten_unknowns

    clean, unknown = flatten_unknowns(facts_net, "network")
    g["facts"]["network"] = clean
    g["unknown"].update(unknown)
    return g


def with_env(node: str, env: Dict[str, str], **changes: Any) -> Dict[str, Any]:
    """A recorded node's facts with variables added to its environment, and the scheduler facts
    rebuilt from it the way the scheduler check derives them."""
    from hpcdoctor.checks.scheduler import collect

    g = facts(node, **changes)
    g["facts"]["env"]["vars"].update(env)

    class Root:
        def environ(self):
            return g["facts"]["env"]["vars"]

        def exists(self, path):
            return False

    g["facts"]["scheduler"] = collect(Root(), None)["scheduler"]
    return g
