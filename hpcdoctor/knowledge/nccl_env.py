"""Which environment variables NCCL and torch.distributed read, and from which release to which.

The table (nccl_env.toml beside this module) was read from NCCL's source at every v2 release tag
and from torch's wheels; see its header for how. A release outside the scanned range is unknown:
the lookups answer None for it rather than guess that it reads or ignores a name.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor import knowledge

READERS = ("nccl", "torch")


@lru_cache(maxsize=1)
def _table() -> Dict[str, Any]:
    return knowledge.load("nccl_env")


@lru_cache(maxsize=1)
def _by_name() -> Dict[str, Tuple[Dict[str, Any], ...]]:
    out: Dict[str, List[Dict[str, Any]]] = {}
    for v in _table().get("variable", []):
        out.setdefault(str(v["name"]), []).append(v)
    return {k: tuple(v) for k, v in out.items()}


def entries(name: str) -> Tuple[Dict[str, Any], ...]:
    """The table's entries for a name (one per reader that reads it); () for a name none reads."""
    return _by_name().get(name, ())


def names(reader: Optional[str] = None) -> List[str]:
    return sorted(n for n, es in _by_name().items() if reader is None or any(e["reader"] == reader for e in es))


def scanned(reader: str) -> Tuple[str, str]:
    """The oldest and newest release of ``reader`` the table was read from."""
    versions = _table()[f"{reader}_versions"]
    return str(versions[0]), str(versions[-1])


def _key(reader: str, version: Any) -> Optional[Tuple[int, ...]]:
    v = knowledge.version_of(str(version).split("+")[0]) if version is not None else None
    if v is None:
        return None
    # torch was read at the last patch of each minor release: the minor is what the table knows.
    return tuple(v.release[:2]) if reader == "torch" else tuple((list(v.release) + [0, 0])[:3])


def in_scanned_range(reader: str, version: Any) -> bool:
    key = _key(reader, version)
    oldest, newest = scanned(reader)
    return key is not None and _key(reader, oldest) <= key <= _key(reader, newest)  # type: ignore[operator]


def reads(entry: Dict[str, Any], version: Any) -> Optional[bool]:
    """Whether the release ``version`` of the entry's reader reads it: None where the version is
    unreadable or outside the releases the table was read from."""
    reader = entry["reader"]
    if not in_scanned_range(reader, version):
        return None
    key = _key(reader, version)
    last = entry.get("last") or scanned(reader)[1]
    return _key(reader, entry["first"]) <= key <= _key(reader, last)  # type: ignore[operator]


def closest(name: str, cutoff: float = 0.8) -> Optional[str]:
    """The real variable a name most looks like (a typo's target), or None where none is close.
    Only names of the same family are candidates: a TORCH_NCCL_ typo is not an NCCL_ variable."""
    family = "TORCH_" if name.startswith("TORCH_") else "NCCL_"
    pool = [n for n in _by_name() if n.startswith(family)]
    found = difflib.get_close_matches(name, pool, n=1, cutoff=cutoff)
    return found[0] if found else None


def newer_than_scanned(reader: str, version: Any) -> bool:
    """A release past the newest the table was read from: it may read names the table lacks."""
    key = _key(reader, version)
    return key is not None and key > _key(reader, scanned(reader)[1])  # type: ignore[operator]


def before_first(entry: Dict[str, Any], version: Any) -> bool:
    key = _key(entry["reader"], version)
    return key is not None and key < _key(entry["reader"], entry["first"])  # type: ignore[operator]


def label(reader: str, version: str) -> str:
    """How a table version is said: torch by its minor release (read at its last patch)."""
    return ".".join(version.split(".")[:2]) if reader == "torch" else version


def from_plugin(entry: Dict[str, Any]) -> bool:
    """Read by a plugin NCCL's repository ships (ext-*, plugins/): a separate library, built and
    loaded on its own, so the NCCL release says nothing about whether it is read."""
    where = str(entry.get("source", "")).split(" ")
    return entry["reader"] == "nccl" and len(where) > 1 and where[1].startswith(("plugins/", "ext-"))
