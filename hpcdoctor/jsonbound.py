"""JSON from outside (snapshots, reports, payloads, pastes) with its nesting bounded.

The standard decoder stops near 1,000 levels with RecursionError, and every walk over the result
(facts, diff, the reporters) is recursive too: a document 950 levels deep parsed, then raised
RecursionError in whichever walk came first (issue 27). No report hpcdoctor reads nests deeper
than a dozen levels, so past MAX_DEPTH a document is refused as a ValueError, like any malformed
one, before anything walks it."""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


def depth_over(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether containers nest deeper than ``limit`` (an explicit stack: no recursion)."""
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if level > limit:
            return True
        stack.extend((c, level + 1) for c in children if isinstance(c, (dict, list)))
    return False


def loads(text: Any) -> Any:
    """json.loads, raising ValueError (never RecursionError) for a document nested too deep."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    if depth_over(value):
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return value
