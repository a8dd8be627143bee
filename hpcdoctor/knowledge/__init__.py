"""Everything hpcdoctor knows, as data and the lookups over it: the TOML tables in this folder
(GPUs, torch wheels, systems, CPU models, thresholds, message catalogues) and the modules
that read them (``gpus``, ``wheels``, ``systems``, ``microarch``, ``expect``, ``messages``).

This package imports nothing else from hpcdoctor, so checks, rules, triage and reporters can all
depend on it without an import circle."""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any, Dict, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on the oldest supported Python in CI
    import tomli as tomllib

KNOWLEDGE_DIR = Path(__file__).parent


def version_of(value: Any) -> Any:
    """A packaging Version, or None when the text is not a version (local tags like +cu126 kept).
    One parser for the tables (wheels, drivers) and the rules that compare against them."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(str(value))
    except InvalidVersion:
        return None


@functools.lru_cache(maxsize=None)
def load(name: str) -> Dict[str, Any]:
    with open(KNOWLEDGE_DIR / f"{name}.toml", "rb") as fh:
        return tomllib.load(fh)


def reference_title(ref: str) -> str:
    """Human title of a reference item ('001_....txt (section)' or a URL)."""
    key = ref.split()[0]
    seed = load("sources").get("seeds", {}).get(key)
    if seed:
        rest = ref[len(key):].strip()
        return f"{seed['title']} {rest}".strip()
    return ref


_DATE = r"\b20\d\d-\d\d-\d\d\b"


def provenance(config: Optional[Dict[str, Any]] = None) -> list:
    """Per knowledge table: its entries, the dates its sources were read and the sources it cites,
    so a support engineer sees how current the tool's knowledge is (``hpcdoctor knowledge``)."""
    out = []
    for path in sorted(KNOWLEDGE_DIR.glob("*.toml")):
        data = load(path.stem)
        sources: list = []
        dates: set = set()
        entries = 0
        undated = 0
        # A date at the top of a table covers every entry in it (torch_wheels.toml).
        table_dated = any(re.search(_DATE, str(data.get(k, ""))) for k in ("date", "read"))

        def walk(node: Any, key: str = "") -> None:
            nonlocal entries, undated
            if isinstance(node, dict):
                if any(k in node for k in ("source", "url", "title", "pattern")):
                    entries += 1
                    own = " ".join(str(node.get(k, "")) for k in ("source", "url", "date", "read"))
                    # "not re-read <date>: <what was searched>" records a failed search, not a reading:
                    # such an entry stays undated until it carries a read (or date) of its own.
                    unread = "not re-read" in str(node.get("source", "")) and not (node.get("read") or node.get("date"))
                    if not table_dated and (unread or not re.search(_DATE, own)):
                        undated += 1
                for k, v in node.items():
                    walk(v, k)
            elif isinstance(node, list):
                for v in node:
                    walk(v, key)
            elif isinstance(node, str):
                if key in ("source", "url", "date", "read"):
                    dates.update(re.findall(_DATE, node))
                if key in ("source", "url") and node not in sources:
                    sources.append(node)

        walk(data)
        out.append({"table": path.stem, "file": f"hpcdoctor/knowledge/{path.name}", "entries": entries,
                    "undated": undated, "dates": sorted(dates), "sources": sources})
    site = (config or {}).get("knowledge")
    site_wheels = list((site or {}).get("wheel") or []) + list((site or {}).get("rocm_wheel") or [])
    if site:
        out.append({"table": "site config [knowledge]", "file": str((config or {}).get("_path")),
                    "entries": len(site_wheels) + len(site.get("release_driver") or {}),
                    "undated": sum(not re.search(_DATE, str(w.get("source", ""))) for w in site_wheels),
                    "dates": sorted({d for w in site_wheels for d in re.findall(_DATE, str(w.get("source", "")))}),
                    "sources": [str(w.get("source") or "site config, no source given") for w in site_wheels]
                    + ([f"index_url = {site['index_url']}"] if site.get("index_url") else [])})
    return out
