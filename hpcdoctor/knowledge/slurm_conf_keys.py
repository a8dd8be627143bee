"""Which keys Slurm's configuration parser knows, from which release to which.

The table (slurm_conf_keys.toml beside this module) was read from SchedMD/slurm's s_p_options_t
arrays at the first and last tag of every major release 14.11 .. 25.05
(bench/slurm_conf_keys_scan.py). A key the table lacks is unknown to every release read: misspelt,
or from a release after 25.05 (the lookups say None, never guess).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Dict, Optional, Tuple

from hpcdoctor import knowledge


@lru_cache(maxsize=1)
def _table() -> Dict[str, Any]:
    return knowledge.load("slurm_conf_keys")


@lru_cache(maxsize=1)
def _by_name() -> Dict[Tuple[str, str], Dict[str, Any]]:
    return {(str(k["file"]), str(k["name"]).lower()): k for k in _table().get("key", [])}


def releases() -> Tuple[str, ...]:
    return tuple(_table()["releases"])


def lookup(name: str, file: str = "slurm.conf") -> Optional[Dict[str, Any]]:
    """The table's entry for a key of ``file`` (slurm.conf, cgroup.conf, gres.conf), matched as
    Slurm matches it (case-insensitively); None for a key no release read knows."""
    return _by_name().get((file, name.strip().lower()))


def previous(release: str) -> Optional[str]:
    """The major release before ``release`` among those read; None for the oldest."""
    rs = releases()
    i = rs.index(release) if release in rs else -1
    return rs[i - 1] if i > 0 else None


def newer_than_oldest(entry: Dict[str, Any]) -> bool:
    """True where the key is known from a release after the oldest read (so a parser that does
    not know it is older than that release), not dropped since."""
    return entry["since"] != releases()[0] and not entry.get("removed") and not entry.get("known")
