"""What the GPU rule modules share: the GPU list (or the rule is skipped), a GPU's subject line,
and the facts-or-pasted-message choice of the health rules."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from hpcdoctor.engine import Hit
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, facts_or_ticket


def subject(g: Dict[str, Any]) -> str:
    return f"GPU {g.get('index')}"


def gpu_list(f: FactView) -> List[Dict[str, Any]]:
    """The GPUs, or MissingFact when the GPU facts are Unknown (the rule is then skipped)."""
    gpus = f["gpus"]
    return gpus if isinstance(gpus, list) else []


def as_int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def facts_or_told(f: FactView, symbol: str, from_facts: Callable[[], List[Hit]],
                  told: Callable[[Dict[str, Any]], Hit]) -> List[Hit]:
    """What the gathered GPU facts establish; where they are unknown or establish nothing, the
    pasted message (catalogued as feeding ``symbol``) that says the same. Unknown facts with no
    such message stay unknown: the rule is skipped."""
    return facts_or_ticket(from_facts, (told(s) for s in catalogued(f, symbol)[:1]))
