"""GPU product names to what hpcdoctor knows about them (``knowledge/gpus.toml``), by tokens.

A name as NVML, nvidia-smi, collect_env, rocm-smi or amd-smi writes it ("NVIDIA A100-SXM4-80GB",
"Tesla V100-PCIE-16GB", "AMD Instinct MI300X OAM") is split into upper-case tokens. An entry's name
matches when all of its tokens are among them: "A100" is not "A1000", "T4" is not "T400". Where
several entries match, one whose tokens contain another's is the more specific and wins ("Quadro
RTX 5000" over a bare "RTX 5000"); entries left tied must agree on the compute capability (or gfx),
or the answer is None: an unknown, never a guess.

``lookup(name)`` is the one entry point; ``compute_capability(name)`` the "name -> CC" question.
A site adds or overrides GPUs with ``[[gpu]]`` entries in its config: they are passed in, as
``site=`` (the entries) to each lookup, and answer before the shipped table. Nothing is set
globally, so two diagnoses with two configs in one process cannot see each other's GPUs.
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

_Entry = Tuple[str, Dict[str, Any], List[FrozenSet[str]]]


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


def _most_specific(candidates: Sequence[Tuple[str, Dict[str, Any], List[FrozenSet[str]]]],
                   have: FrozenSet[str]) -> Dict[int, Tuple[str, Dict[str, Any]]]:
    """The entries matching ``have``, a match yielding to one whose tokens strictly contain its own
    (the more specific name), by entry identity."""
    hits = [(kind, e, p) for kind, e, patterns in candidates for p in patterns if p <= have]
    kept = [h for h in hits if not any(h[2] < other[2] for other in hits)]
    return {id(e): (kind, e) for kind, e, _ in kept}


def _best(candidates: Sequence[Tuple[str, Dict[str, Any], List[FrozenSet[str]]]],
          have: FrozenSet[str]) -> Optional[Dict[str, Any]]:
    entries = _most_specific(candidates, have)
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


class GpuTable:
    """The shipped entries, with a site's ``[[gpu]]`` entries answering first; answers memoised
    (every rule looks a GPU up)."""

    def __init__(self, site: Sequence[Dict[str, Any]] = ()) -> None:
        self._site: List[_Entry] = [("site", dict(e), _patterns(e)) for e in site]
        self._answers: Dict[str, Optional[Dict[str, Any]]] = {}

    def lookup(self, name: Optional[str]) -> Optional[Dict[str, Any]]:
        key = name or ""
        if key not in self._answers:
            if len(self._answers) > 4096:
                self._answers.clear()  # a test feeding all of pci.ids, not a run: keep memory flat
            have = tokens(key)
            self._answers[key] = ((_best(self._site, have) if self._site else None)
                                  or (_best(_table(), have) if have else None))
        found = self._answers[key]
        return dict(found) if found else None


_SHIPPED = GpuTable()


@functools.lru_cache(maxsize=16)
def _with_site(key: str) -> GpuTable:
    import json

    return GpuTable(json.loads(key))


def table(site: Optional[Sequence[Dict[str, Any]]] = None) -> GpuTable:
    """The table a lookup uses: the shipped one, or one with ``site``'s entries first."""
    if not site:
        return _SHIPPED
    import json

    return _with_site(json.dumps([dict(e) for e in site], sort_keys=True, default=str))


def lookup(name: Optional[str], site: Optional[Sequence[Dict[str, Any]]] = None) -> Optional[Dict[str, Any]]:
    """What hpcdoctor knows about a GPU named ``name``, or None when it does not know it.

    The result carries ``id``, ``kind`` ("sku": with datasheet figures; "model": name, compute
    capability and segment only; "site": from ``site``, the site config's [[gpu]] entries;
    "ambiguous": several entries that agree on ``cc``/``gfx``), ``cc`` or ``gfx``, ``segment`` and
    ``source``."""
    return table(site).lookup(name)


def compute_capability(name: Optional[str], site: Optional[Sequence[Dict[str, Any]]] = None) -> Optional[str]:
    """CUDA compute capability ("8.9") of an NVIDIA GPU by name, or None where unknown."""
    found = lookup(name, site)
    cc = found.get("cc") if found else None
    return str(cc) if cc else None


def capabilities(name: Optional[str]) -> List[str]:
    """The compute capabilities the shipped table's most specific NVIDIA entries give ``name``, lowest
    first: one where lookup() resolves it, several where the name is two GPUs that lookup() leaves
    unknown (a bare "TITAN X": the Maxwell GTX TITAN X, 5.2, or the Pascal TITAN X, 6.1)."""
    have = tokens(name or "")
    if not have:
        return []
    entries = _most_specific(_table(), have).values()
    ccs = {str(e["cc"]) for _, e in entries if e.get("vendor", "nvidia") == "nvidia" and e.get("cc")}
    return sorted(ccs, key=lambda c: tuple(int(x) for x in c.split(".")))


def datasheet(name: Optional[str], site: Optional[Sequence[Dict[str, Any]]] = None) -> Optional[Dict[str, Any]]:
    """The [[sku]] (or site) entry with datasheet figures for this exact SKU, or None."""
    found = lookup(name, site)
    return found if found and found.get("kind") in ("sku", "site") else None


def name_matches(name: Optional[str], names: Sequence[str]) -> bool:
    """Whether a GPU name matches any of ``names`` by the table's rule (all tokens present)."""
    have = tokens(name or "")
    return any(p and p <= have for p in (tokens(n) for n in names))
