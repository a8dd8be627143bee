"""Microarchitecture detection with archspec's data, fed from any /proc/cpuinfo.

``archspec.cpu.host()`` reads the running machine's /proc/cpuinfo and ``platform.machine()``,
which would make a replayed snapshot report the support engineer's laptop. Here the partial
microarchitecture is built from the SysRoot's cpuinfo and matched against archspec's targets
with archspec's own compatibility checks, choosing the most specific candidate the way
archspec does.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

# archspec costs ~25 ms to import (it loads its JSON database), so only the cpu check pays it.
import archspec.cpu.detect as _detect
from archspec.cpu.microarchitecture import TARGETS, generic_microarchitecture


def _vendor(arch: str, block: Dict[str, str]) -> str:
    if arch == "x86_64":
        return block.get("vendor_id", "generic")
    if arch == "aarch64":
        code = block.get("CPU implementer")
        if not code:
            return "generic"
        vendors = _detect.TARGETS_JSON["conversions"]["arm_vendors"]
        return vendors.get(code, code)
    if arch.startswith("ppc64"):
        return "IBM"
    return "generic"


def _compatible(arch: str, info, target) -> bool:
    root = TARGETS.get(arch)
    if root is None:
        return False
    in_family = target == root or root in target.ancestors
    if arch == "x86_64":
        return in_family and target.vendor in (info.vendor, "generic") and target.features.issubset(info.features)
    if arch == "aarch64":
        if target.vendor == "generic" and target.name != "aarch64":
            return False
        return (root == target.family and target.vendor in (info.vendor, "generic")
                and target.features.issubset(info.features))
    if arch.startswith("ppc64"):
        return in_family and target.generation <= info.generation
    return in_family and target.vendor == "generic"


def detect(arch: str, block: Dict[str, str], flags: List[str], generation: int = 0) -> Optional[Dict[str, object]]:
    """Best archspec target for one cpuinfo processor block of the given ISA family."""
    if arch not in TARGETS:
        return None
    info = _detect.partial_uarch(
        vendor=_vendor(arch, block),
        features=set(flags),
        generation=generation,
        cpu_part=block.get("CPU part", "") if arch == "aarch64" else "",
    )
    candidates = [t for t in TARGETS.values() if _compatible(arch, info, t)]
    if not candidates:
        best = generic_microarchitecture(arch)
        return {"name": best.name, "vendor": info.vendor, "ancestors": []}

    def rank(t):
        return len(t.ancestors), len(t.features)

    generic = [c for c in candidates if c.vendor == "generic"]
    best_generic = max(generic, key=rank) if generic else TARGETS[arch]
    if info.cpu_part and any(c.cpu_part == info.cpu_part for c in candidates):
        candidates = [c for c in candidates if c.cpu_part == info.cpu_part]
    specific = [c for c in candidates if c > best_generic]
    best = max(specific, key=rank) if specific else best_generic
    return {
        "name": best.name,
        "vendor": info.vendor,
        "ancestors": [a.name for a in best.ancestors],
    }


# Names users know for the CPUID features a hypervisor most often masks.
FEATURE_GROUPS = (("amx", "AMX"), ("avx512", "AVX-512"), ("vaes", "VAES"), ("vpclmulqdq", "VPCLMULQDQ"),
                  ("sha_ni", "SHA"), ("avx2", "AVX2"))


def from_model(vendor: str, family: Optional[int], model: Optional[int]) -> Optional[str]:
    """The archspec target an x86 family/model number is (knowledge/cpu_models.toml), or None."""
    from hpcdoctor import knowledge

    if family is None or model is None:
        return None
    for entry in knowledge.load("cpu_models").get("model", []):
        if entry["vendor"] == vendor and entry["family"] == family and \
                any(lo <= model <= hi for lo, hi in entry["models"]):
            return str(entry["target"])
    return None


def reconcile(arch: str, by_flags: Optional[str], by_model: Optional[str], flags: List[str],
              hypervisor: bool) -> Tuple[Optional[str], Optional[str]]:
    """(microarchitecture, note) when the flags and the model number disagree. The model wins
    when the flags name an older generation of the same line (masked features); the note says
    what the flags lack and who hid it, since what the guest can execute is what the flags say."""
    if not by_model or by_model == by_flags or by_model not in TARGETS or arch != "x86_64":
        return by_flags, None
    target = TARGETS[by_model]
    if by_flags in TARGETS and TARGETS[by_flags] > target:
        return by_flags, None  # flags say more than the table: trust the flags
    # archspec's aliases count "pni" as sse3 and the like: only what the guest really lacks.
    have = _detect.partial_uarch(vendor=target.vendor, features=set(flags), generation=0, cpu_part="")
    missing = sorted(x for x in target.features if x not in have)
    names = [label for prefix, label in FEATURE_GROUPS if any(m.startswith(prefix) for m in missing)]
    hidden = ", ".join(names) or ", ".join(missing[:3]) or "some features"
    who = "the hypervisor" if hypervisor else "the firmware or kernel"
    return by_model, f"{hidden} hidden by {who}"
