"""What a paste's text says of an AMD GPU under ROCm, outside any tool output the recogniser
reads: the GPU's name (lspci's "[AMD/ATI] Navi 21 [Radeon RX 6800/6800 XT / 6900 XT]", a
"Radeon RX 560" or "Instinct MI250X" in prose) and the ROCm release (an /opt/rocm-6.2.0 path,
rocminfo's "rocminfo-rocm-5.3.0" source path, a "rocm-hip-libraries 5.4.3-2" package, a torch
"+rocm6.2" wheel, collect_env's "ROCM used to build PyTorch: 6.2.41133", libamdhip64.so.5.4.x).
Rule rocm-gpu-not-in-release (SW053) reads them as the facts ticket.amd_gpus_named and
ticket.rocm_versions. Every quantifier is bounded (issue 19)."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

from hpcdoctor.triage.budget import _in_time

# lspci names the chip, then the boards in brackets; the chip alone where there is no bracket
# (an APU's "Barcelo", "Renoir"). A chip may carry a slash ("Curacao XT / Trinidad XT [Radeon R7 370 /
# R9 270X/370X]", pci.ids 1002:6810).
_LSPCI = re.compile(r"\[AMD/ATI\][ \t]{1,3}(?P<chip>[A-Za-z0-9][A-Za-z0-9 ./\-]{0,40}?)[ \t]{0,3}"
                    r"(?:\[(?P<boards>[^\]\n]{1,100})\]|\(rev|$)", re.M)
_PROSE = re.compile(
    r"(?<![\w-])(?P<name>(?:AMD[ \t]{1,3})?(?:"
    r"Radeon(?:™|\(TM\))?[ \t]{1,3}(?:"
    r"(?:PRO|Pro)[ \t]{1,3}[WV][ \t]?\d{3,4}[A-Z]{0,2}(?:[ \t]{1,3}Dual[ \t]Slot)?"
    r"|RX[ \t]{0,2}\d{3,4}[A-Z]{0,1}(?:[ \t]{1,3}(?:XTX|XT|GRE))?"
    r"|VII|R[579][ \t]{1,3}\d{3}X?|\d{3}M)"
    r"|Instinct(?:™)?[ \t]{1,3}MI[ \t]?\d{2,3}[A-Z]{0,2})"
    r"|AMD[ \t]{1,3}RX[ \t]{0,2}\d{3,4}[A-Z]{0,1}(?:[ \t]{1,3}(?:XTX|XT|GRE))?)(?![\w-])")
_DISPLAY = re.compile(r"VGA compatible controller|Display controller|3D controller|Processing accelerators")
_WORDS = re.compile(r"Radeon|Instinct|AMD/ATI|AMD[ \t]{1,3}RX[ \t]{0,2}\d")
# "AMD RX580": AMD's own lists name the board "AMD Radeon RX 580", and a name is matched by its words.
_AMD_RX = re.compile(r"^AMD RX ?")
_VERSION = re.compile(
    r"(?:/opt/rocm-|(?<![\w-])rocm(?:info)?-rocm-|(?<![\w/.-])rocm-(?=\d)|\+rocm|ROCM used to build PyTorch:[ \t]{1,3}"
    r"|rocm-(?:hip-libraries|core|hip-runtime|dev|libs)[ \t:=_]{1,3}|HIP runtime version:[ \t]{1,3}"
    r"|ROCm(?:™)?[ \t]{1,3}(?:[Vv]ersion[ \t:]{1,3})?|libamdhip64\.so\.)"
    r"(?P<v>\d{1,2}\.\d{1,2})(?![\d])(?:\.\d{1,6})?")
_MAX = 16


def _line(text: str, at: int) -> Dict[str, Any]:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return {"line": text.count("\n", 0, at) + 1, "text": text[start:len(text) if end == -1 else end].strip()[:300]}


def _boards(chip: str, boards: Optional[str]) -> List[str]:
    """lspci's "Radeon RX 6800/6800 XT / 6900 XT" as the boards it names; the chip where none."""
    if not boards:
        return [chip.strip()]
    parts = [p.strip() for p in re.split(r"[ \t]{0,2}/[ \t]{0,2}", boards) if p.strip()]
    out, stem = [], ""
    for p in parts[:8]:
        m = re.match(r"^(.*?)(\d{3,4}.*)$", p)
        if m and m.group(1).strip():
            stem = m.group(1)
            out.append(p)
        elif stem and m:
            out.append(stem + p)  # "6800 XT" after "Radeon RX 6800"
        else:
            out.append(p)
    return out


def find_amd_gpus(text: str, deadline: Optional[float] = None) -> List[Dict[str, Any]]:
    """AMD GPUs the text names, each with the board names it may be ("names")."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    found: Dict[str, Dict[str, Any]] = {}
    pos = 0
    while len(found) < _MAX:
        _in_time(deadline, "looking for AMD GPU names")
        w = _WORDS.search(text, pos)
        if w is None:
            break
        start = text.rfind("\n", 0, w.start()) + 1
        end = text.find("\n", w.end())
        end = len(text) if end == -1 else end
        line = text[start:min(end, start + 4096)]
        # An [AMD/ATI] line that is not a display device is the GPU's HDMI audio or a chipset part.
        for m in (_LSPCI.finditer(line) if _DISPLAY.search(line) else ()):
            names = _boards(m.group("chip"), m.group("boards"))
            key = " / ".join(names)
            found.setdefault(key, {"gpu": key, "names": names, "lspci": True, **_line(text, start + m.start())})
        if "[AMD/ATI]" not in line:
            for m in _PROSE.finditer(line):
                name = _AMD_RX.sub("AMD Radeon RX ", re.sub(r"[ \t]{1,3}", " ", m.group("name")))
                found.setdefault(name, {"gpu": name, "names": [name], **_line(text, start + m.start())})
        pos = end + 1
    return list(found.values())[:_MAX]


def find_rocm_versions(text: str, deadline: Optional[float] = None) -> List[Dict[str, Any]]:
    """The ROCm release series the text names, one entry per series, at its first line."""
    _in_time(deadline, "looking for ROCm versions")
    found: Dict[str, Dict[str, Any]] = {}
    for m in _VERSION.finditer(text):
        v = m.group("v")
        series = f"{int(v.split('.')[0])}.{int(v.split('.')[1])}"
        if series not in found:
            found[series] = {"series": series, **_line(text, m.start())}
        if len(found) >= _MAX:
            break
    return list(found.values())
