"""/proc/cpuinfo of every architecture Linux writes one for."""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple


def parse_cpuinfo(text: str) -> List[Dict[str, str]]:
    """One dict per processor block. Blank lines separate blocks; on aarch64 a trailing block
    of machine-wide keys (Hardware, Serial) may follow and is kept as its own dict."""
    blocks: List[Dict[str, str]] = []
    cur: Dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            if not line.strip() and cur:
                blocks.append(cur)
                cur = {}
            continue
        cur[key.strip()] = value.strip()
    if cur:
        blocks.append(cur)
    return blocks


def processors(blocks: List[Dict[str, str]]) -> List[Dict[str, str]]:
    return [b for b in blocks if "processor" in b]


def infer_arch(blocks: List[Dict[str, str]]) -> Optional[str]:
    """The ISA family, from what only that family's kernel writes into cpuinfo (None when the
    cpuinfo does not say; ``arch_of`` gives the reason)."""
    return arch_of(blocks)[0]


def _any(blocks: List[Dict[str, str]], key: str) -> Optional[str]:
    for b in blocks:
        if key in b:
            return b[key]
    return None


def arch_of(blocks: List[Dict[str, str]], byteorder: Optional[str] = None) -> Tuple[Optional[str], str]:
    """(``uname -m`` style architecture, how it was told) or (None, why not), from the keys each
    architecture's show_cpuinfo writes (Linux arch/*/kernel: x86 cpu/proc.c, arm64 cpuinfo.c,
    arm setup.c, powerpc setup-common.c, s390 processor.c, riscv cpu.c, loongarch proc.c, ia64
    setup.c, read 2026-11-25). ``byteorder`` is /sys/kernel/cpu_byteorder where recorded."""
    if not blocks:
        return None, "no cpuinfo"
    if _any(blocks, "vendor_id") and _any(blocks, "cpu family"):
        # Only 32-bit x86 kernels print the old CPU bug lines; the CPU's "lm" flag would not
        # tell a 32-bit kernel from a 64-bit one.
        if _any(blocks, "fdiv_bug") is not None or _any(blocks, "f00f_bug") is not None:
            return "i386", "cpuinfo of a 32-bit x86 kernel (fdiv_bug, f00f_bug lines)"
        return "x86_64", "cpuinfo of a 64-bit x86 kernel (vendor_id, cpu family, no 32-bit bug lines)"
    arm = _any(blocks, "CPU architecture")
    if arm is not None:
        # arm64 prints "8" (early arm64 kernels "AArch64"); the 32-bit arm kernel prints 7 or less
        # even on an ARMv8 CPU.
        if arm.strip() in ("8", "AArch64"):
            return "aarch64", "cpuinfo of an arm64 kernel (CPU architecture: 8)"
        return "arm", f"cpuinfo of a 32-bit arm kernel (CPU architecture: {arm.strip()[:10]})"
    if _any(blocks, "arch") == "IA-64":
        return "ia64", "cpuinfo says arch: IA-64"
    isa = _any(blocks, "isa") or ""
    if isa.startswith("rv64") or isa.startswith("rv32"):
        return ("riscv64" if isa.startswith("rv64") else "riscv32"), f"cpuinfo isa: {isa[:4]}"
    fam = _any(blocks, "CPU Family") or ""
    if fam.startswith("Loongson") or "loongarch" in (_any(blocks, "ISA") or ""):
        if "64" in fam or "loongarch64" in (_any(blocks, "ISA") or ""):
            return "loongarch64", f"cpuinfo CPU Family: {fam[:20]}"
        return None, f"LoongArch, width not said (CPU Family: {fam[:20]})"
    if (_any(blocks, "vendor_id") or "").startswith("IBM/S390"):
        return None, "IBM Z: cpuinfo does not say whether the kernel is s390x or 31-bit s390"
    cpu = _any(blocks, "cpu") or ""
    if _any(blocks, "timebase") is not None or re.search(r"\(pvr [0-9a-f]{4} ", _any(blocks, "revision") or ""):
        if re.match(r"POWER\d", cpu) and byteorder in ("big", "little"):
            return ("ppc64le" if byteorder == "little" else "ppc64"), f"POWER with /sys/kernel/cpu_byteorder {byteorder}"
        return None, "PowerPC: cpuinfo does not say the kernel's width or byte order (ppc, ppc64, ppc64le)"
    if _any(blocks, "Features") is not None:
        return None, "an Arm-like Features line without CPU architecture: 32- or 64-bit not said"
    if _any(blocks, "type") in ("sun4u", "sun4v"):
        return None, "SPARC: cpuinfo does not say the kernel's width"
    return None, "cpuinfo matches no known ISA family"


def model_of(arch: str, blocks: List[Dict[str, str]]) -> Optional[str]:
    """The CPU's model string as its kernel writes it, None where cpuinfo has none."""
    for key in ("model name", "Model Name", "uarch"):
        value = _any(blocks, key)
        if value and value != "-":
            return value
    cpu = _any(blocks, "cpu")
    if cpu and (_any(blocks, "timebase") is not None or _any(blocks, "type") in ("sun4u", "sun4v")
                or arch.startswith("ppc")):
        return cpu
    return None


def arm_ids(blocks: List[Dict[str, str]]) -> Dict[int, Tuple[int, int]]:
    """{processor: (implementer, part)} from an Arm cpuinfo's MIDR fields: per processor (arm64,
    newer arm), or once after the processor list (older 32-bit arm kernels print the boot CPU's
    for the machine, as lscpu then reads it)."""
    out: Dict[int, Tuple[int, int]] = {}
    shared = []
    for b in blocks:
        proc, impl, part = b.get("processor", ""), b.get("CPU implementer", ""), b.get("CPU part", "")
        try:
            ids = (int(impl, 16), int(part, 16))
        except ValueError:
            continue
        if proc.strip().isdecimal():
            out[int(proc)] = ids
        else:
            shared.append(ids)
    if not out and len(set(shared)) == 1:
        procs = [int(b["processor"]) for b in blocks if b.get("processor", "").strip().isdecimal()]
        out = {p: shared[0] for p in procs}
    return out


def flags(block: Dict[str, str]) -> List[str]:
    return sorted(set((block.get("flags") or block.get("Features") or "").split()))


def power_generation(block: Dict[str, str]) -> int:
    m = re.search(r"POWER(\d+)", block.get("cpu", ""))
    return int(m.group(1)) if m else 0
