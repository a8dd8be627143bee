"""Known messages in a pasted ticket (knowledge/messages/): the error a framework raised, the
configuration it logged. Only pastes carry them; a live node or a recorded snapshot has none."""

from __future__ import annotations

from typing import Any, Dict

from hpcdoctor.sysroot import Missing, SysRoot

NAME = "ticket"
TIMEOUT = 1.0


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    if root.mode != "replay":
        return {"ticket": {"symptoms": [], "gpus_named": [], "gpus_named_shared": [], "amd_gpus_named": [], "rocm_versions": []}}
    try:
        data = root.probe("ticket", dict)
    except Missing:
        return {"ticket": {"symptoms": [], "gpus_named": [], "gpus_named_shared": [], "amd_gpus_named": [], "rocm_versions": []}}
    symptoms = data.get("symptoms") if isinstance(data, dict) else None
    # NVIDIA GPUs the ticket's text names (hpcdoctor.triage.paste.find_gpu_names), each with its compute
    # capability from the GPU table: what the rules fall back on where no tool output lists GPUs.
    named = data.get("gpus_named") if isinstance(data, dict) else None
    return {"ticket": {"symptoms": [s for s in symptoms or [] if isinstance(s, dict) and isinstance(s.get("id"), str)],
                       "gpus_named": [g for g in named or [] if isinstance(g, dict) and isinstance(g.get("gpu"), str)
                                      and isinstance(g.get("cc"), str)],
                       # A name two GPUs share ("TITAN X": 5.2 or 6.1), with both capabilities: no
                       # compute capability is chosen for it; a rule may answer where both agree.
                       "gpus_named_shared": [g for g in _listed(data, "gpus_named_shared") if isinstance(g.get("gpu"), str)
                                             and isinstance(g.get("ccs"), list) and all(isinstance(c, str) for c in g["ccs"])],
                       # AMD GPUs and ROCm releases the text names (hpcdoctor.triage.amd_text), for
                       # rocm-gpu-not-in-release where no tool output lists the GPUs.
                       "amd_gpus_named": [g for g in _listed(data, "amd_gpus_named")
                                          if isinstance(g.get("gpu"), str) and isinstance(g.get("names"), list)],
                       "rocm_versions": [v for v in _listed(data, "rocm_versions") if isinstance(v.get("series"), str)]}}


def _listed(data: Any, key: str) -> list:
    value = data.get(key) if isinstance(data, dict) else None
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []
