"""Helpers for rule tests: start from a recorded machine's facts, change what the case needs."""

from __future__ import annotations

import copy
import functools
import re
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


# -- pastes ------------------------------------------------------------------------------------

PASTES = NODES.parent / "pastes"


def file_facts(tmp_path, files: Dict[str, str]) -> Dict[str, Any]:
    """The facts of a node whose recorded file system holds FILES ({"/proc/sys/kernel/x": "2\n"}) and
    nothing else, through the real checks over a replay."""
    for path, text in files.items():
        target = tmp_path / "fs" / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return pipeline.gather(ReplaySysRoot(tmp_path), Options())


def told_facts(text: str, node: str = "h100-kvm-1gpu") -> Dict[str, Any]:
    """A recorded node with TEXT's catalogued messages as its ticket: what a rule reads of a paste,
    without the paste path (which refuses a text that names nothing else it recognises)."""
    from hpcdoctor.triage.messages import find_messages

    return facts(node, **{"ticket.symptoms": find_messages(text)})


def told_paste_facts(name: str, node: str = "h100-kvm-1gpu") -> Dict[str, Any]:
    """told_facts of one recorded paste in fixtures/pastes: a near miss the paste path refuses
    (nothing in it is tool output it reads), read for its messages."""
    return told_facts((PASTES / name).read_text(encoding="utf-8"), node)


def paste_facts(tmp_path, text: str, name: str = "ticket.txt") -> Dict[str, Any]:
    """The facts of TEXT read as a pasted ticket, through the real paste path (open_paste)."""
    from hpcdoctor.triage.paste import open_paste

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with open_paste([str(path)]) as (root, _recognised, _notes):
        return pipeline.gather(root, Options())


def ticket_file_facts(tmp_path, path, text: str = None) -> Dict[str, Any]:
    """The facts of a corpus ticket's paste at PATH (or of TEXT in its place, under the same name),
    through the real paste path."""
    return paste_facts(tmp_path, path.read_text(encoding="utf-8") if text is None else text, path.name)


def read_paste(path) -> str:
    """A corpus ticket's paste, as the tests that edit it in memory read it."""
    return path.read_text(encoding="utf-8")


def message_ids(text: str) -> set:
    """The catalogue ids of every message read in TEXT (family:key)."""
    from hpcdoctor.triage.messages import find_messages

    return {s["id"] for s in find_messages(text)}


def recorded_paste_facts(name: str) -> Dict[str, Any]:
    """The facts of one recorded paste in fixtures/pastes, through the real paste path."""
    from hpcdoctor.triage.paste import open_paste

    with open_paste([str(PASTES / name)]) as (root, _recognised, _notes):
        return pipeline.gather(root, Options())


# -- benchmark figures -------------------------------------------------------------------------

def recorded_h100_bench() -> Dict[str, Any]:
    """bench.txt of the recorded H100 in the payload's JSON shape (largest size per dtype)."""
    text = (NODES / "h100-kvm-1gpu" / "bench.txt").read_text()
    gemm = {}
    for n, dtype, tf in re.findall(r"^gemm n=(\d+) (\w+) ([\d.]+) TFLOP/s", text, re.M):
        if int(n) == 8192:
            gemm[dtype] = {"n": 8192, "tflops": float(tf)}
    d2d = float(re.search(r"^d2d ([\d.]+) GB/s", text, re.M).group(1))
    pinned = float(re.search(r"^h2d pinned=True ([\d.]+)", text, re.M).group(1))
    pageable = float(re.search(r"^h2d pinned=False ([\d.]+)", text, re.M).group(1))
    return {"gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "gemm": gemm,
                      "memory": {"d2d_gbs": d2d, "h2d_pinned_gbs": pinned, "h2d_pageable_gbs": pageable}}],
            "allreduce": {"not_applicable": "one device"}}


def h100_with_bench(bench=None) -> Dict[str, Any]:
    g = facts("h100-kvm-1gpu")
    g["facts"]["bench"] = bench or recorded_h100_bench()
    return g


def derived_peak(name, cc, sms, clk, dtype="bf16"):
    """The GEMM peak knowledge derives for a GPU with no datasheet entry, and why."""
    from hpcdoctor.knowledge import expect

    return expect.gemm({"name": name, "compute_capability": cc, "clocks": {"sm_max_mhz": clk}}, dtype, {}, sms)


def renamed_node(name, dtype, tflops) -> Dict[str, Any]:
    """The recorded H100 node's facts with the GPU renamed and one GEMM figure measured."""
    g = h100_with_bench()
    for gpu in (g["facts"]["gpus"][0], g["facts"]["bench"]["gpus"][0]):
        gpu["name"] = name
    g["facts"]["bench"]["gpus"][0]["gemm"] = {dtype: {"n": 8192, "tflops": tflops}}
    return g
