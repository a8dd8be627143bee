"""Recognise a known system from the facts: "this looks like a LUMI-G node".

A system matches when its CPU pattern (if any) matches the CPU model or microarchitecture and
every GPU's name matches one of its GPU names (by tokens, as hpcdoctor.knowledge.gpus matches them), or, for CPU-only systems, when no GPU is present and the core
count fits. Several systems can share a node shape (Isambard-AI and JUPITER Booster are both 4x
GH200); all candidates are returned, the caller says so when there is more than one.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Protocol

from hpcdoctor import knowledge
from hpcdoctor.knowledge import gpus as gpu_table


class Facts(Protocol):
    """What recognition reads of the facts (hpcdoctor.facts.FactView has it): the knowledge
    package imports nothing else from hpcdoctor, so it names the shape, not the class."""

    def get(self, path: str, default: Any = None) -> Any: ...

    def gpus(self) -> List[Dict[str, Any]]: ...


def recognise(f: Facts) -> List[Dict[str, Any]]:
    cpu_text = " ".join(str(x) for x in (f.get("cpu.model_name"), f.get("cpu.microarch")) if x)
    gpus = f.gpus()
    names = [str(g.get("name")) for g in gpus if g.get("name")]
    found = []
    for s in knowledge.load("systems").get("system", []):
        if s.get("cpu_match") and not re.search(s["cpu_match"], cpu_text, re.I):
            continue
        if s.get("gpu_names"):
            if not names or not all(gpu_table.name_matches(n, s["gpu_names"]) for n in names):
                continue
            # Without a CPU to go by, a GPU model alone is too common: the node must be whole.
            if not s.get("cpu_match") and len(names) != s.get("gpus_per_node"):
                continue
        else:
            if f.get("gpus") != []:
                continue
            if s.get("cores") and f.get("cpu.cores") not in (None, s["cores"]):
                continue
        if not s.get("cpu_match") and not s.get("gpu_names"):
            continue
        found.append(s)
    return found
