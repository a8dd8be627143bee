"""The JSON report: the document itself, as strict JSON."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional

from hpcdoctor.facts import finite


def strict_json(doc: Any, **kw: Any) -> str:
    """JSON that strict parsers accept: NaN and infinities become null, and where the document
    has an ``unknown`` map, the reason is recorded there."""
    unknown = doc.get("unknown") if isinstance(doc, dict) else None
    more: Optional[Dict[str, str]] = dict(unknown) if isinstance(unknown, dict) else None
    clean = finite(doc, more)
    if more is not None:
        clean["unknown"] = more
    return json.dumps(clean, allow_nan=False, default=str, **kw)


def render(doc: Dict[str, Any]) -> str:
    return strict_json(doc, indent=2, sort_keys=False) + "\n"
