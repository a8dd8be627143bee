"""AMD's list of supported GPUs per ROCm release series (rocm_gpus.toml) and the question a rule
asks of it: does this release list this GPU, by name or by its gfx target?"""

from __future__ import annotations

import re
from typing import Any, Dict, FrozenSet, List, Optional

from hpcdoctor import knowledge

# AMD's support words that still mean the release ships code for the GPU. "community" is the 5.4
# page's "Packages distributed by AMD have dropped support for these GPUs or never enabled support".
SUPPORTED = frozenset({"supported", "deprecated", "full", "non-commercial", "hip", "maintenance"})
_NOISE = frozenset({"AMD", "ATI", "TM", "™", "(TM)", "GRAPHICS"})


def name_key(name: str) -> FrozenSet[str]:
    """A GPU name as a set of words: "AMD Radeon™ RX560" and "Radeon RX 560" are the same GPU,
    "RX 7900 XT" and "RX 7900 XTX" are not."""
    text = re.sub(r"™|\(TM\)|®", " ", str(name or "")).upper()
    text = re.sub(r"\b(RX|MI|W|V)(?=\d)", r"\1 ", text)  # RX560, MI250X, W7900: the model apart
    text = re.sub(r"\b(RX|MI) (\d)", r"\1\2", text)      # then one word again, whichever way it came
    return frozenset(w for w in re.split(r"[\s,]+", text) if w and w not in _NOISE)


def series_of(version: Any) -> Optional[str]:
    """"6.2" of "6.2.41133", "6.2.2" or "6.2"; None where the text is not a ROCm version."""
    m = re.match(r"^\s*(\d{1,2})\.(\d{1,2})(?:[.\-+]|$)", str(version or ""))
    return f"{int(m.group(1))}.{int(m.group(2))}" if m else None


def load_releases(windows: bool = False) -> List[Dict[str, Any]]:
    """AMD's lists per release: Linux's, or (WINDOWS) the HIP SDK for Windows'."""
    return list(knowledge.load("rocm_gpus").get("windows_release" if windows else "release", []))


def release(series: Optional[str], windows: bool = False) -> Optional[Dict[str, Any]]:
    """The table's entry for a release series, or None where AMD's list for it was not read."""
    for r in load_releases(windows):
        if r["series"] == series:
            return r
    return None


def supported_gfx(r: Dict[str, Any]) -> FrozenSet[str]:
    """The gfx targets whose code release ``r`` ships: of the GPUs its page lists as supported, or
    the targets its compatibility matrix lists where only those were read."""
    return frozenset({g["gfx"] for g in r.get("gpu", []) if g["support"] in SUPPORTED} | set(r.get("targets", [])))


_TARGET = re.compile(r"^gfx(?P<gen>\d{1,2}?)(?P<rest>[0-9a-f]{2})$")


def _generation(gfx: str) -> Optional[tuple]:
    """A gfx target as (generation, number within it): gfx90c is (9, 0x0c), gfx1103 (11, 0x03)."""
    m = _TARGET.match(gfx or "")
    return (int(m.group("gen")), int(m.group("rest"), 16)) if m else None


def never_supported(gfx: str) -> Optional[List[str]]:
    """The release series read, where none of them supports the target ``gfx`` and a target of the
    same generation newer than it is supported by one (so ``gfx`` is no future GPU the lists predate);
    None otherwise, or for a string that is no gfx target."""
    at = _generation(gfx)
    if at is None:
        return None
    releases = load_releases()
    if any(gfx in supported_gfx(r) for r in releases):
        return None
    newer = [g for r in releases for g in supported_gfx(r)
             if (_generation(g) or (None,))[0] == at[0] and _generation(g)[1] > at[1]]
    return [r["series"] for r in releases] if newer else None


def listed(r: Dict[str, Any]) -> List[str]:
    """What release ``r``'s entry lists as supported, for a message: names, else its targets."""
    names = [g["name"] for g in r.get("gpu", []) if g["support"] in SUPPORTED]
    return list(dict.fromkeys(names)) if names else list(r.get("targets", []))


def _gfx_of_name(name: str) -> Optional[str]:
    """The gfx target any release's list gives a GPU of this name (the lists agree on it)."""
    key = name_key(name)
    for r in knowledge.load("rocm_gpus").get("release", []):
        for g in r.get("gpu", []):
            if name_key(g["name"]) == key:
                return g["gfx"]
    return None


def judge(series: Optional[str], name: Optional[str] = None, gfx: Optional[str] = None,
          windows: bool = False) -> Optional[Dict[str, Any]]:
    """What release ``series``'s list says of a GPU: None where the release's list is unknown or the
    GPU is one it lists as supported (or a GPU whose gfx target it supports); else a dict with
    ``why`` ("listed-unsupported", "gfx-unlisted", "name-unlisted"), the entry where one is
    listed, the release and ``supported_by`` (the series whose list has the GPU as supported).
    Where the release's entry holds targets only, a GPU whose target no list gives is unknown (None).
    WINDOWS: the HIP SDK for Windows' list of that release."""
    r = release(series, windows)
    if r is None or not (name or gfx):
        return None
    base = gfx.split(":")[0] if gfx else None
    key = name_key(name) if name else None
    entry = next((g for g in r.get("gpu", []) if key and name_key(g["name"]) == key), None)
    ok_gfx = supported_gfx(r)
    if entry is not None and entry["support"] in SUPPORTED:
        return None
    if entry is not None:
        base = base or entry["gfx"]
    else:
        base = base or (_gfx_of_name(name) if name else None)
        if base in ok_gfx:
            return None  # a GPU this list does not name, of a target whose code the release ships
        if base is None and "gpu" not in r:
            return None  # a name no list gives a target, against a list of targets: cannot be judged
        if "gpu" not in r and _kept_by_last_named_list(r["series"], base):
            return None  # the matrix leaves out deprecated targets its pages still list
    why = "listed-unsupported" if entry is not None else ("gfx-unlisted" if base else "name-unlisted")
    return {"why": why, "entry": entry, "gfx": base, "release": r, "supported_by": supported_by(key, base, windows)}


def _order(series: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", series))


def _kept_by_last_named_list(series: str, gfx: str) -> bool:
    """Whether the nearest earlier release whose page names GPUs still ships ``gfx``'s code. AMD's
    compatibility matrix lists fewer targets than its pages (for 6.0-6.2 it leaves out gfx906,
    which the pages list as deprecated), so a target missing from a targets-only entry is judged
    only once a named list has dropped it."""
    named = [r for r in knowledge.load("rocm_gpus").get("release", [])
             if "gpu" in r and _order(r["series"]) < _order(series)]
    if not named:
        return True
    last = max(named, key=lambda r: _order(r["series"]))
    return any(g["gfx"] == gfx and g["support"] in SUPPORTED for g in last["gpu"])


def supported_by(key: Optional[FrozenSet[str]], gfx: Optional[str], windows: bool = False) -> List[str]:
    """The release series whose list has this GPU (by name, else by gfx target) as supported."""
    out = []
    for r in load_releases(windows):
        ok = [g for g in r.get("gpu", []) if g["support"] in SUPPORTED and
              ((key is not None and name_key(g["name"]) == key) or (gfx and g["gfx"] == gfx))]
        if ok or (gfx and gfx in r.get("targets", [])):
            out.append(r["series"])
    return out


_PCI_ID = re.compile(r"\b1002:([0-9a-fA-F]{4})\b")


def kfd_chip(text: str) -> Optional[Dict[str, Any]]:
    """The chip of the table's ``kfd_chip`` list (one the kernel's KFD never drives, or HAWAII, only
    experimentally) that a line naming an AMD GPU names: by lspci -nn's "1002:6810" device id, else by
    a pci.ids device name ("Curacao XT / Trinidad XT [Radeon R7 370 / R9 270X/370X]", lshw's product)
    standing as words of its own in the line. None where the line names none of them."""
    chips = knowledge.load("rocm_gpus").get("kfd_chip", [])
    for m in _PCI_ID.finditer(text or ""):
        did = m.group(1).lower()
        for c in chips:
            if did in c["ids"]:
                return c
    named = [(n, c) for c in chips for n in c["names"]]
    for n, c in sorted(named, key=lambda nc: -len(nc[0])):
        if re.search(r"(?<![\w/-])" + re.escape(n) + r"(?![\w/-])", text or ""):
            return c
    return None
