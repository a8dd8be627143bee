"""GPU product names to what hpcdoctor knows about them (``knowledge/gpus.toml``), by tokens.

A name as NVML, nvidia-smi, collect_env, rocm-smi or amd-smi writes it ("NVIDIA A100-SXM4-80GB",
"Tesla V100-PCIE-16GB", "AMD Instinct MI300X OAM") is split into upper-case tokens. An entry's name
matches when all of its tokens are among them: "A100" is not "A1000", "T4" is not "T400". Where
several entries match, one whose tokens contain another's is the more specific and wins ("Quadro
RTX 5000" over a bare "RTX 5000"); entries left tied must agree on the compute capability (or gfx),
or the answer is None: an unknown, never a guess.

``lookup(name)`` is the one entry point; ``compute_capability(name)`` the "name -> CC" question.
A site adds or overrides GPUs with ``[[gpu]]`` entries in its config (``set_site``).
"""

from __future__ import annotations

import functools
import re
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from hpcdoctor import knowledge

_SPLIT = re.compile(r"[^A-Z0-9.]+")
# "80 GB", "80GB", "144G" are one token; NVML and pci.ids write memory sizes all three ways.
_SIZE = re.compile(r"\b(\d+)\s?G(?:I?B)?\b")
# Words that name the vendor or the product line, not the model: "NVIDIA GeForce RTX 4090" is
# "RTX 4090". "Tesla" stays: "Tesla M40" (5.2) is not "GRID M40" (5.0).
_NOISE = frozenset({"NVIDIA", "AMD", "ATI", "CORPORATION", "GEFORCE", "RADEON", "INSTINCT", "GPU", "TM", "R"})

_site: List[Tuple[str, Dict[str, Any], List[FrozenSet[str]]]] = []
_answers: Dict[str, Optional[Dict[str, Any]]] = {}


def tokens(name: str) -> FrozenSet[str]:
    text = _SIZE.sub(r" \1GB ", (name or "").upper())
    return frozenset(t.strip(".") for t in _SPLIT.split(text) if t.strip(".") and t.strip(".") not in _NOISE)


@functools.lru_cache(maxsize=None)
def _table() -> Tuple[Tuple[str, Dict[str, Any], List[FrozenSet[str]]], ...]:
    """The shipped entries with their names already split: a GPU is looked up by every rule."""
    data = knowledge.load("gpus")
    return tuple((kind, e, _patterns(e)) for kind in ("sku", "model") for e in data.get(kind, []))


def _patterns(entry: Dict[str, Any]) -> List[FrozenSet[str]]:
    return [p for p in (tokens(n) for n in entry.get("names", [])) if p]


def _best(candidates: Sequence[Tuple[str, Dict[str, Any], List[FrozenSet[str]]]],
          have: FrozenSet[str]) -> Optional[Dict[str, Any]]:
    hits = [(kind, e, p) for kind, e, patterns in candidates for p in patterns if p <= have]
    # A match yields to one whose tokens strictly contain its own: the more specific name.
    kept = [h for h in hits if not any(h[2] < other[2] for other in hits)]
    entries = {id(e): (kind, e) for kind, e, _ in kept}
    if not entries:
        return None
    if len(entries) == 1:
        kind, e = next(iter(entries.values()))
        return {**e, "kind": kind}
    values = list(entries.values())
    common: Dict[str, Any] = {"id": None, "kind": "ambiguous",
                              "ambiguous": sorted(str(e.get("id")) for _, e in values)}
    for key in ("vendor", "cc", "gfx", "segment", "tensor_rate", "c2c"):
        seen = {str(e.get(key)) for _, e in values}
        if len(seen) == 1:
            common[key] = values[0][1].get(key)
        elif key in ("cc", "gfx", "vendor"):
            return None  # the names disagree on what the GPU is: unknown, not a guess
    return common


def lookup(name: Optional[str]) -> Optional[Dict[str, Any]]:
    """What hpcdoctor knows about a GPU named ``name``, or None when it does not know it.

    The result carries ``id``, ``kind`` ("sku": with datasheet figures; "model": name, compute
    capability and segment only; "site": from the site config; "ambiguous": several entries that
    agree on ``cc``/``gfx``), ``cc`` or ``gfx``, ``segment`` and ``source``."""
    key = name or ""
    if key not in _answers:
        if len(_answers) > 4096:
            _answers.clear()  # a test feeding all of pci.ids, not a run: keep memory flat
        have = tokens(key)
        found = (_best(_site, have) if _site else None) or (_best(_table(), have) if have else None)
        _answers[key] = found
    found = _answers[key]
    return dict(found) if found else None


def compute_capability(name: Optional[str]) -> Optional[str]:
    """CUDA compute capability ("8.9") of an NVIDIA GPU by name, or None where unknown."""
    found = lookup(name)
    cc = found.get("cc") if found else None
    return str(cc) if cc else None


def datasheet(name: Optional[str]) -> Optional[Dict[str, Any]]:
    """The [[sku]] (or site) entry with datasheet figures for this exact SKU, or None."""
    found = lookup(name)
    return found if found and found.get("kind") in ("sku", "site") else None


def name_matches(name: Optional[str], names: Sequence[str]) -> bool:
    """Whether a GPU name matches any of ``names`` by the table's rule (all tokens present)."""
    have = tokens(name or "")
    return any(p and p <= have for p in (tokens(n) for n in names))


def set_site(entries: Sequence[Dict[str, Any]]) -> None:
    """Use the site config's [[gpu]] entries before the shipped tables (until the next call)."""
    _site[:] = [("site", dict(e), _patterns(e)) for e in entries]
    _answers.clear()
