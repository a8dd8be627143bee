"""What the GPU rule modules share: the GPU list (or the rule is skipped), a GPU's subject line,
and the facts-or-pasted-message choice of the health rules."""

from __future__ import annotations

from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, facts_or_ticket


def subject(g) -> str:
    return f"GPU {g.get('index')}"


def gpu_list(f: FactView):
    """The GPUs, or MissingFact when the GPU facts are Unknown (the rule is then skipped)."""
    gpus = f["gpus"]
    return gpus if isinstance(gpus, list) else []


def as_int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def facts_or_told(f: FactView, symbol, from_facts, told):
    """What the gathered GPU facts establish; where they are unknown or establish nothing, the
    pasted message (catalogued as feeding ``symbol``) that says the same. Unknown facts with no
    such message stay unknown: the rule is skipped."""
    return facts_or_ticket(from_facts, (told(s) for s in catalogued(f, symbol)[:1]))
