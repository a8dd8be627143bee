"""CPU: ISA, vendor, model, microarchitecture, topology, flags and what they enable."""

from __future__ import annotations

from typing import Any, Dict, List

from hpcdoctor.facts import Unknown
from hpcdoctor.parse import cpuinfo as ci
from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist
from hpcdoctor.parse.lscpu import int_field, parse_lscpu
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "cpu"
TIMEOUT = 3.0

# Normalised capability name -> the flag spelling of each ISA's kernel.
X86_CAPS = ("avx2", "avx512f", "avx512_bf16", "avx512_fp16", "avx512_vnni", "amx_tile",
            "amx_bf16", "amx_int8", "amx_fp16")
ARM_CAPS = ("asimd", "sve", "sve2", "bf16", "svebf16", "i8mm", "sme", "sme2")


def capabilities(arch: str, flags: List[str]) -> Dict[str, bool]:
    present = set(flags)
    caps: Dict[str, bool] = {}
    if arch == "x86_64":
        caps.update({c: c in present for c in X86_CAPS})
        caps["bf16"] = caps["avx512_bf16"] or caps["amx_bf16"]
        caps["amx"] = caps["amx_tile"]
    elif arch == "aarch64":
        caps.update({c: c in present for c in ARM_CAPS})
        caps["bf16"] = caps["bf16"] or caps["svebf16"]
    else:
        caps["bf16"] = False
    return caps


def _whole_cpuinfo(procs: List[Dict[str, str]]) -> Any:
    """True when a /proc/cpuinfo read without sysfs (a paste) lists every processor: x86 says
    how many each socket has ("siblings"); elsewhere nothing does, so it cannot be told."""
    if not procs:
        return "no processor entries"
    siblings = {p.get("physical id"): p.get("siblings") for p in procs}
    if None in siblings or not all(str(v).isdecimal() for v in siblings.values()):
        return "counted from /proc/cpuinfo alone, which may be a part of it (no sysfs, no siblings count)"
    for pkg, count in siblings.items():
        listed = sum(1 for p in procs if p.get("physical id") == pkg)
        if listed != int(count):
            return f"/proc/cpuinfo lists {listed} of socket {pkg}'s {count} processors: a part of it"
    return True


def _topology(root: SysRoot, procs: List[Dict[str, str]]) -> Dict[str, Any]:
    """Logical CPUs, cores and sockets: sysfs first (exact), then cpuinfo, then lscpu."""
    online: Any = Unknown("no CPU list")
    try:
        online = parse_cpulist(root.read("/sys/devices/system/cpu/online"))
    except (Missing, ListFormatError) as exc:
        whole = _whole_cpuinfo(procs)
        if procs and whole is True:
            online = [int(p["processor"]) for p in procs if p.get("processor", "").isdecimal()]
        else:
            online = Unknown(whole if isinstance(whole, str) else str(exc))
            procs = []  # its core and socket ids would undercount too

    sockets, cores = set(), set()
    if isinstance(online, list):
        for cpu in online:
            base = f"/sys/devices/system/cpu/cpu{cpu}/topology"
            pkg = root.read_or(f"{base}/physical_package_id")
            core = root.read_or(f"{base}/core_id")
            if pkg is None or core is None:
                sockets, cores = set(), set()
                break
            sockets.add(pkg.strip())
            cores.add((pkg.strip(), core.strip()))
    if not cores and procs and all("physical id" in p and "core id" in p for p in procs):
        sockets = {p["physical id"] for p in procs}
        cores = {(p["physical id"], p["core id"]) for p in procs}

    out: Dict[str, Any] = {"logical_cpus": len(online) if isinstance(online, list) else online}
    if cores:
        out["sockets"] = len(sockets)
        out["cores"] = len(cores)
    else:
        fields = _lscpu(root)
        n_sockets = int_field(fields, "Socket(s)")
        per_socket = int_field(fields, "Core(s) per socket", "Core(s) per cluster")
        if n_sockets and per_socket:
            out["sockets"] = n_sockets
            out["cores"] = n_sockets * per_socket
        else:
            out["sockets"] = Unknown("no topology in sysfs, cpuinfo or lscpu")
            out["cores"] = Unknown("no topology in sysfs, cpuinfo or lscpu")
    if isinstance(out["logical_cpus"], int) and isinstance(out.get("cores"), int) and out["cores"]:
        out["threads_per_core"] = max(1, out["logical_cpus"] // out["cores"])
    else:
        out["threads_per_core"] = Unknown("cores or logical CPUs unknown")
    return out


def _number(text: Any) -> Any:
    text = str(text or "").strip()
    return int(text) if text.isdecimal() else None


def _by_model(cpu: Dict[str, Any], vendor: str, family: Any, model: Any) -> None:
    """Correct a microarchitecture named from masked flags with the model number (a VM that hides
    AMX still reports Sapphire Rapids' model), and say what was hidden."""
    from hpcdoctor.knowledge import microarch

    flags_name = cpu.get("microarch") if isinstance(cpu.get("microarch"), str) else None
    name, note = microarch.reconcile(cpu.get("arch") or "", flags_name,
                                     microarch.from_model(vendor, _number(family), _number(model)),
                                     cpu.get("flags") or [], cpu.get("hypervisor") is True)
    if name and name != flags_name:
        from archspec.cpu import TARGETS

        cpu["microarch"] = name
        cpu["microarch_ancestors"] = [a.name for a in TARGETS[name].ancestors]
        cpu["microarch_from_flags"] = flags_name
    if note:
        cpu["microarch_note"] = note


def _lscpu(root: SysRoot) -> Dict[str, str]:
    try:
        res = root.run(["lscpu"], timeout=2.0, live=False)
    except Missing:
        return {}
    return parse_lscpu(res.stdout) if res.ok else {}


def _model_name(arch: str, block: Dict[str, str], micro: Any) -> Any:
    if block.get("model name"):
        return block["model name"]
    if arch.startswith("ppc64") and block.get("cpu"):
        return block["cpu"].split(",")[0]
    if isinstance(micro, dict):
        # Arm kernels print no model name; archspec's name for the CPU part is the useful one.
        return f"{micro['vendor']} {micro['name']}"
    return Unknown("cpuinfo has no model name")


def _from_lscpu(root: SysRoot, why: str) -> Dict[str, Any]:
    """CPU facts from a recorded or pasted lscpu when no /proc/cpuinfo is there."""
    fields = _lscpu(root)
    if not fields.get("Architecture"):
        raise Missing(f"{why}; no lscpu recorded either")
    arch = fields["Architecture"]
    flags = sorted(set(fields.get("Flags", "").split()))
    block = {"vendor_id": fields.get("Vendor ID", ""), "flags": " ".join(flags)}
    if arch == "aarch64":
        from hpcdoctor.knowledge import microarch

        # lscpu names the implementer ("ARM", "Nvidia"); archspec matches on its code.
        codes = {v: k for k, v in microarch._detect.TARGETS_JSON["conversions"]["arm_vendors"].items()}
        block = {"Features": " ".join(flags), "CPU implementer": codes.get(fields.get("Vendor ID", ""), "")}
    micro: Any = Unknown("lscpu alone does not identify the microarchitecture")
    if arch in ("x86_64", "aarch64") and flags:
        from hpcdoctor.knowledge import microarch

        found = microarch.detect(arch, block, flags)
        micro = found["name"] if found else micro
        if found and arch == "aarch64" and not (fields.get("Model name") or fields.get("BIOS Model name")):
            fields["Model name"] = f"{found['vendor']} {found['name']}"
    sockets = int_field(fields, "Socket(s)")
    per = int_field(fields, "Core(s) per socket", "Core(s) per cluster")
    cpus = int_field(fields, "CPU(s)")
    cpu: Dict[str, Any] = {
        "arch": arch, "vendor": fields.get("Vendor ID") or Unknown("lscpu gives no vendor"),
        "model_name": fields.get("Model name") or fields.get("BIOS Model name") or Unknown("lscpu gives no model name"),
        "microarch": micro, "microarch_ancestors": [], "flags": flags, "capabilities": capabilities(arch, flags),
        "hypervisor": bool(fields.get("Hypervisor vendor")), "logical_cpus": cpus or Unknown("no CPU count"),
        "sockets": sockets or Unknown("no socket count"), "cores": (sockets * per) or Unknown("no core count"),
        "threads_per_core": int_field(fields, "Thread(s) per core") or Unknown("no threads per core"),
        "governor": Unknown("lscpu does not show the governor"), "source": "lscpu",
    }
    _by_model(cpu, fields.get("Vendor ID", ""), fields.get("CPU family"), fields.get("Model"))
    return {"cpu": cpu}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    try:
        text = root.read("/proc/cpuinfo")
    except Missing as exc:
        return _from_lscpu(root, str(exc))
    blocks = ci.parse_cpuinfo(text)
    procs = ci.processors(blocks) or blocks
    if not procs:
        raise Missing("/proc/cpuinfo has no processor entries")
    arch = ci.infer_arch(blocks)
    first = procs[0]
    flags = ci.flags(first)
    micro: Any = Unknown("unknown ISA family")
    if arch:
        from hpcdoctor.knowledge import microarch

        found = microarch.detect(arch, first, flags, ci.power_generation(first))
        micro = found if found else Unknown(f"archspec has no targets for {arch}")

    cpu: Dict[str, Any] = {
        "arch": arch or Unknown("cpuinfo matches no known ISA family"),
        "vendor": (first.get("vendor_id") or (micro["vendor"] if isinstance(micro, dict) else None)
                   or Unknown("no vendor in cpuinfo")),
        "model_name": _model_name(arch or "", first, micro),
        "microarch": micro["name"] if isinstance(micro, dict) else micro,
        "microarch_ancestors": micro["ancestors"] if isinstance(micro, dict) else [],
        "flags": flags,
        "capabilities": capabilities(arch or "", flags),
        # x86 guests see the hypervisor CPUID bit; clocks and topology then describe the VM.
        "hypervisor": "hypervisor" in flags if arch == "x86_64" else Unknown("no hypervisor flag on this ISA"),
    }
    if arch == "x86_64":
        _by_model(cpu, first.get("vendor_id", ""), first.get("cpu family"), first.get("model"))
    cpu.update(_topology(root, procs))
    gov = root.read_or("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    cpu["governor"] = gov.strip() if gov else Unknown("no cpufreq scaling governor (a VM, or no cpufreq driver)")
    return {"cpu": cpu}
