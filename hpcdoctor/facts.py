"""Facts: what the checks found, as one JSON document, with Unknowns that carry their reason.

Checks build plain dicts and lists and put ``Unknown("why")`` wherever a value could not be had.
``flatten_unknowns`` turns the tree into the serialisable form: the value becomes ``null`` and the
reason lands in the document's ``unknown`` map under the fact's dotted path, so a reader of the
JSON and a rule both learn why, not just that, a fact is missing.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

SCHEMA_VERSION = "2.0"


class Unknown:
    """A fact that could not be established, and why."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = str(reason)

    def __bool__(self) -> bool:
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unknown) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash(("Unknown", self.reason))

    def __repr__(self) -> str:
        return f"Unknown({self.reason!r})"


def flatten_unknowns(tree: Any, prefix: str = "") -> Tuple[Any, Dict[str, str]]:
    """Replace every Unknown by None; return the clean tree and {dotted path: reason}."""
    unknown: Dict[str, str] = {}

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, Unknown):
            unknown[path] = node.reason
            return None
        if isinstance(node, dict):
            return {str(k): walk(v, f"{path}.{k}" if path else str(k)) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            return [walk(v, f"{path}.{i}") for i, v in enumerate(node)]
        if isinstance(node, (set, frozenset)):
            return sorted(node)
        if isinstance(node, float) and not math.isfinite(node):
            # NaN and infinities are not JSON; a reading that gave one was not a reading.
            unknown[path] = f"not a finite number ({node!r})"
            return None
        return node

    return walk(tree, prefix), unknown


def finite(tree: Any, unknown: Optional[Dict[str, str]] = None, prefix: str = "") -> Any:
    """``tree`` with every NaN or infinity replaced by None (its path and reason added to
    ``unknown`` when given), so that the JSON written is strict JSON."""

    def walk(node: Any, path: str) -> Any:
        if isinstance(node, float) and not math.isfinite(node):
            if unknown is not None:
                unknown[path] = f"not a finite number ({node!r})"
            return None
        if isinstance(node, dict):
            return {k: walk(v, f"{path}.{k}" if path else str(k)) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            return [walk(v, f"{path}.{i}") for i, v in enumerate(node)]
        return node

    return walk(tree, prefix)


class MissingFact(Exception):
    """Raised by FactView when a rule needs a fact that is absent or Unknown."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


_ABSENT = object()


class ListedEnv(dict):
    """The part of a job's environment that a pasted report lists: every variable under its
    prefixes, and nothing about any other. Asking for one it cannot know raises MissingFact, so
    a rule that needs it is skipped rather than told the variable is unset."""

    def __init__(self, listed: Mapping[str, str], prefixes: Sequence[str], hidden: Sequence[str], source: str) -> None:
        super().__init__(listed)
        self.prefixes, self.hidden, self.source = tuple(prefixes), tuple(hidden), source

    def covers(self, name: str) -> bool:
        return name.startswith(self.prefixes) and not any(h in name.lower() for h in self.hidden)

    def _known(self, name: str) -> None:
        if not dict.__contains__(self, name) and not self.covers(name):
            if not self.prefixes:  # a ticket's own export lines: they say what was set, nothing more
                raise MissingFact(f"env.vars.{name}", f"the paste's {self.source} set only "
                                                      f"{', '.join(sorted(dict.keys(self))[:6])}")
            raise MissingFact(f"env.vars.{name}", f"the pasted {self.source} lists only "
                                                  f"{', '.join(p + '*' for p in self.prefixes)} variables")

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        self._known(name)
        return dict.get(self, name, default)

    def __getitem__(self, name: str) -> Any:
        self._known(name)
        return dict.__getitem__(self, name)

    def __contains__(self, name: object) -> bool:
        if isinstance(name, str):
            self._known(name)
        return dict.__contains__(self, name)


class FactView:
    """Read-only access to facts by dotted path for rules.

    ``view["cpu.flags"]`` raises MissingFact (the engine reports the rule as skipped with the
    reason); ``view.get("cpu.governor")`` returns None instead. Lists are indexed by number:
    ``gpus.0.name``.
    """

    def __init__(self, facts: Dict[str, Any], unknown: Optional[Dict[str, str]] = None,
                 config: Optional[Dict[str, Any]] = None) -> None:
        self.facts = facts
        self.unknown = unknown or {}
        self.config = config or {}

    def _lookup(self, path: str) -> Any:
        node: Any = self.facts
        for part in path.split("."):
            if isinstance(node, dict):
                node = node.get(part, _ABSENT)
            elif isinstance(node, list) and part.isdecimal() and int(part) < len(node):
                node = node[int(part)]
            else:
                return _ABSENT
            if node is _ABSENT:
                return _ABSENT
        return node

    def reason(self, path: str) -> str:
        """Why a fact is missing: its own reason, or the nearest enclosing one."""
        probe = path
        while probe:
            if probe in self.unknown:
                return self.unknown[probe]
            probe = probe.rpartition(".")[0]
        return "not collected"

    def __getitem__(self, path: str) -> Any:
        value = self._lookup(path)
        if value is _ABSENT or value is None or isinstance(value, Unknown):
            reason = value.reason if isinstance(value, Unknown) else self.reason(path)
            raise MissingFact(path, reason)
        listed = self._lookup("env.listed") if path == "env.vars" else None
        if isinstance(listed, dict):
            return ListedEnv(value, listed.get("prefixes") or (), listed.get("hidden") or (), str(listed.get("source")))
        return value

    def get(self, path: str, default: Any = None) -> Any:
        value = self._lookup(path)
        if value is _ABSENT or value is None or isinstance(value, Unknown):
            return default
        return value

    def has(self, path: str) -> bool:
        return self.get(path) is not None

    def env(self, name: str) -> Optional[str]:
        """A job environment variable, or None when unset. Raises MissingFact when the
        environment itself is unknown (a snapshot without it)."""
        return self["env.vars"].get(name)

    def gpus(self) -> List[Dict[str, Any]]:
        gpus = self.get("gpus")
        return gpus if isinstance(gpus, list) else []

    def gpu_known(self, name: Any) -> Optional[Dict[str, Any]]:
        """What hpcdoctor knows of a GPU by name, the site config's [[gpu]] entries first."""
        from hpcdoctor.knowledge import gpus

        return gpus.lookup(name, self.config.get("gpu")) if isinstance(name, str) else None

    def gpu_datasheet(self, name: Any) -> Optional[Dict[str, Any]]:
        """The datasheet entry (shipped [[sku]] or the site's) of exactly this GPU, or None."""
        from hpcdoctor.knowledge import gpus

        return gpus.datasheet(name, self.config.get("gpu")) if isinstance(name, str) else None


def iter_paths(tree: Any, prefix: str = "") -> Iterator[Tuple[str, Any]]:
    """Every leaf of a facts tree as (dotted path, value); used by diff and by tests."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from iter_paths(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(tree, list) and tree and all(isinstance(x, (dict, list)) for x in tree):
        for i, v in enumerate(tree):
            yield from iter_paths(v, f"{prefix}.{i}")
    else:
        yield prefix, tree
