"""What the text of a paste says besides tool outputs and catalogued messages (those are
hpcdoctor.triage.messages'): NVIDIA GPUs named in prose, and the line the reply's "read" list gives
each message."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional

from hpcdoctor.triage.budget import _in_time

# GPU product names written in a ticket's prose ("16 GB T4 GPU", "GPU NVIDIA TITAN RTX", "I have a
# RTX 3090", "GPU is NVIDIA T1000", "Nvidia GPU A6000"): only whole product names, a brand line (RTX/GTX/TITAN/Quadro)
# with its model number, or a bare model ("T4", "V100S") with NVIDIA/Tesla before it or "GPU" after
# it. Each is resolved by the token matcher (hpcdoctor.knowledge.gpus.lookup); a name it does not resolve to
# one compute capability is left out, never guessed. Quantifiers are bounded (issue 19).
_GPU_IN_PROSE = re.compile(
    r"(?<![\w.-])(?P<name>"
    r"(?:NVIDIA[ \t]{1,3})?(?:GeForce[ \t]{1,3})?(?:RTX|GTX|rtx|gtx|Rtx|Gtx)[ \t]{0,2}A?\d{3,4}(?:[ \t]{0,2}(?:Ti|ti|TI|SUPER|Super|super)(?![\w]))?"
    r"|(?:NVIDIA[ \t]{1,3})?TITAN[ \t]{1,3}(?:RTX|Xp|X|V)(?![\w])"
    r"|(?:NVIDIA[ \t]{1,3})?Quadro[ \t]{1,3}(?:RTX[ \t]{1,3})?[A-Z]{0,2}\d{3,4}(?![\w])"
    r"|(?:(?:NVIDIA|Nvidia|nvidia)[ \t]{1,3}(?:Tesla[ \t]{1,3}|GPU[ \t]{1,3})?|Tesla[ \t]{1,3})[A-Z]{1,2}\d{1,4}[A-Z]{0,2}(?:-[A-Za-z0-9]{1,10}){0,3}(?![\w-])"
    r"|[A-Z]{1,2}\d{1,4}[A-Z]?(?=[ \t]{1,3}GPUs?\b))")


# Every alternative of _GPU_IN_PROSE holds one of these words: lines without any are not tried
# (the whole pattern over 16 MiB of other lines took 4 s; issue 27).
_GPU_WORDS = re.compile(r"RTX|GTX|rtx|gtx|Rtx|Gtx|TITAN|Quadro|NVIDIA|Nvidia|nvidia|Tesla|GPU")


def _gpu_candidates(text: str, deadline: Optional[float]) -> Iterator["re.Match[str]"]:
    """_GPU_IN_PROSE's matches, tried from the line of the next GPU word on, about 64 KB at a time
    (ended at a line end, else at a blank), the clock checked between pieces."""
    pos = 0
    while True:
        _in_time(deadline, "looking for GPU names")
        w = _GPU_WORDS.search(text, pos)
        if w is None:
            return
        start = max(text.rfind("\n", 0, w.start()) + 1, pos)
        end = text.find("\n", w.end() + _SEGMENT)
        if end == -1 or end - w.end() > 2 * _SEGMENT:  # one long line: end at a blank, or cut
            blank = text.find(" ", w.end() + _SEGMENT, w.end() + 2 * _SEGMENT)
            end = min(len(text), w.end() + 2 * _SEGMENT) if blank == -1 else blank
        for m in _GPU_IN_PROSE.finditer(text, start, end):
            yield m
            pos = m.end()
        pos = max(pos, end)


_SEGMENT = 1 << 16


def _spaced(name: str) -> str:
    """Users write "rtx4090" and "gtx1080ti"; the GPU table's names are "RTX 4090", "GTX 1080 Ti"."""
    name = re.sub(r"(?i)\b(rtx|gtx)(?=A?\d)", lambda m: m.group(1).upper() + " ", name)
    return re.sub(r"(?i)(\d)(ti|super)\b", lambda m: f"{m.group(1)} {m.group(2)}", name)


def find_gpu_names(text: str, deadline: Optional[float] = None) -> List[Dict[str, Any]]:
    """NVIDIA GPUs named in a paste's prose (see _GPU_IN_PROSE), one entry per distinct name, each
    with the compute capability the GPU table gives it (the fact ticket.gpus_named). A name two GPUs
    share ("TITAN X": 5.2 or 6.1) has ``cc`` None and both in ``ccs``. Rules read them only where no
    tool output names the node's GPUs."""
    from hpcdoctor.knowledge import gpus

    text = text.replace("\r\n", "\n").replace("\r", "\n")
    found: Dict[str, Dict[str, Any]] = {}
    for m in _gpu_candidates(text, deadline):
        name = _spaced(re.sub(r"[ \t]{1,3}", " ", m.group("name")))
        if name in found or len(found) >= 32:
            continue
        entry = gpus.lookup(name)
        ccs = gpus.capabilities(name) if entry is None else []
        if entry is None and len(ccs) > 1:
            entry = {"cc": None, "ccs": ccs}   # a name two GPUs share: both said, neither chosen
        elif not entry or entry.get("vendor", "nvidia") != "nvidia" or not entry.get("cc"):
            continue
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        found[name] = {"gpu": name, "cc": str(entry["cc"]) if entry["cc"] else None,
                       **({"ccs": entry["ccs"]} if entry.get("ccs") else {}),
                       "line": text.count("\n", 0, m.start()) + 1,
                       "text": text[start:len(text) if end == -1 else end].strip()[:300]}
    return list(found.values())


def _unlisted(symptom: Dict[str, Any]) -> bool:
    return bool(symptom.get("emitter")) or symptom.get("id") == "unlisted-error" or bool(symptom.get("unlisted"))


def to_describe(found: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The records the reply's "read" list shows: a line that a table read is not also quoted as "not
    in hpcdoctor's catalogue" (a form of another family that matched its shape but not its message),
    and a line no table read is quoted once however many forms matched it. Rules still see every record."""
    known = {s["line"] for s in found if not _unlisted(s)}
    quoted: set = set()
    out = []
    for s in found:
        if _unlisted(s):
            if s["line"] in known or s["line"] in quoted:
                continue
            quoted.add(s["line"])
        out.append(s)
    return out


def describe(symptom: Dict[str, Any]) -> str:
    """One line of the reply's "read" list for a catalogued message or an unlisted error line."""
    if symptom.get("emitter"):
        said = symptom["text"]
        # A block whose header line comes before its message (QE's "Error in routine", OpenFOAM's,
        # WRF's, GROMACS's): the message read with it is what the reader needs.
        captured = str(symptom.get("captured") or "").strip()
        if captured and captured not in said:
            said = f"{said[:100]} {captured}"
        return f"line {symptom['line']}: {symptom['emitter']}, not in hpcdoctor's catalogue: {said[:200]}"
    if symptom["id"] == "unlisted-error" or symptom.get("unlisted"):
        return f"line {symptom['line']}: not in hpcdoctor's catalogue: {symptom['text'][:160]}"
    code = f" ({symptom['code']})" if symptom.get("code") not in (None, "") else ""
    return f"line {symptom['line']}: {symptom['family']} {symptom['key']}{code}: {symptom['means']}"
