"""Known messages in a pasted ticket (knowledge/messages/): the error a framework raised, the
configuration it logged. Only pastes carry them; a live node or a recorded snapshot has none."""

from __future__ import annotations

from typing import Any, Dict

from hpcdoctor.sysroot import Missing, SysRoot

NAME = "ticket"
TIMEOUT = 1.0


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    if root.mode != "replay":
        return {"ticket": {"symptoms": [], "gpus_named": []}}
    try:
        data = root.probe("ticket", dict)
    except Missing:
        return {"ticket": {"symptoms": [], "gpus_named": []}}
    symptoms = data.get("symptoms") if isinstance(data, dict) else None
    # NVIDIA GPUs the ticket's text names (hpcdoctor.triage.paste.find_gpu_names), each with its compute
    # capability from the GPU table: what the rules fall back on where no tool output lists GPUs.
    named = data.get("gpus_named") if isinstance(data, dict) else None
    return {"ticket": {"symptoms": [s for s in symptoms or [] if isinstance(s, dict) and isinstance(s.get("id"), str)],
                       "gpus_named": [g for g in named or [] if isinstance(g, dict) and isinstance(g.get("gpu"), str)
                                      and isinstance(g.get("cc"), str)]}}
