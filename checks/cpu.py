"""CPU: ISA, vendor, model, microarchitecture, topology, flags and what they enable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, Iterator, List

from hpcdoctor.facts import Unknown
from hpcdoctor.knowledge import arm_parts
from hpcdoctor.parse import cpuinfo as ci, uname
from hpcdoctor.parse import topology as topo
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


def _online(root: SysRoot, procs: List[Dict[str, str]]) -> Any:
    """The online CPUs: the kernel's list; without it, the CPUs whose topology folder exists (the
    kernel removes it from an offline CPU); without sysfs, a whole cpuinfo's processors."""
    try:
        return parse_cpulist(root.read(f"{topo.CPU_DIR}/online")), "sysfs"
    except (Missing, ListFormatError) as exc:
        why = str(exc)
    dirs = [p.rsplit("/", 2)[-2] for p in root.glob(f"{topo.CPU_DIR}/cpu[0-9]*/topology")]
    cpus = sorted(int(d[3:]) for d in dirs if d[3:].isdecimal())
    if cpus:
        return cpus, "sysfs"
    whole = _whole_cpuinfo(procs)
    if procs and whole is True:
        return [int(p["processor"]) for p in procs if p.get("processor", "").isdecimal()], "cpuinfo"
    return Unknown(whole if isinstance(whole, str) else why), None


class _Files(Mapping):
    """The reader's {path: text}, read through SysRoot when the reader asks for a path, once:
    it asks only for what it uses (one mask per CPU on a current kernel)."""

    def __init__(self, root: SysRoot) -> None:
        self.root = root
        self.cache: Dict[str, Any] = {}

    def __getitem__(self, path: str) -> str:
        if path not in self.cache:
            self.cache[path] = self.root.read_or(path)
        text = self.cache[path]
        if text is None:
            raise KeyError(path)
        return text

    def __iter__(self) -> Iterator[str]:
        return iter([k for k, v in self.cache.items() if v is not None])

    def __len__(self) -> int:
        return sum(1 for v in self.cache.values() if v is not None)


def _arm_types(root: SysRoot, blocks: List[Dict[str, str]], online: List[int]) -> Dict[int, Any]:
    """{cpu: (implementer, part)} from cpuinfo's MIDR fields, else from the kernel's midr_el1."""
    ids = ci.arm_ids(blocks)
    if ids:
        return ids
    for cpu in online:
        text = root.read_or(f"{topo.CPU_DIR}/cpu{cpu}/regs/identification/midr_el1")
        found = arm_parts.parse_midr(text) if text else None
        if found:
            ids[cpu] = found
    return ids


def _types_by_midr(ids: Dict[int, Any], online: List[int]) -> Dict[str, Dict[str, Any]]:
    by: Dict[Any, List[int]] = {}
    for cpu in online:
        if cpu in ids:
            by.setdefault(ids[cpu], []).append(cpu)
    return {arm_parts.name(impl, part): {"cpus": cpus, "implementer": f"0x{impl:02x}", "part": f"0x{part:03x}",
                                         "model_name": arm_parts.name(impl, part)}
            for (impl, part), cpus in sorted(by.items(), key=lambda kv: kv[1][0])}


def _topology(root: SysRoot, procs: List[Dict[str, str]], arm_blocks: Any = None) -> Dict[str, Any]:
    """Logical CPUs, cores, sockets and what lies between: sysfs masks first (the kernel's
    documented answer), then cpuinfo's ids for a paste without sysfs, then lscpu. ``arm_blocks``:
    an Arm cpuinfo, whose per-CPU MIDR tells the core types of a heterogeneous chip."""
    online, source = _online(root, procs)
    out: Dict[str, Any] = {"logical_cpus": len(online) if isinstance(online, list) else online}
    types = None
    if arm_blocks is not None and isinstance(online, list):
        types = _types_by_midr(_arm_types(root, arm_blocks, online), online)
        out["_arm_types"] = types
    elif arm_blocks is not None:
        # A cpuinfo that may be a part still names the cores it lists; their counts wait.
        ids = ci.arm_ids(arm_blocks)
        out["_arm_types"] = _types_by_midr(ids, sorted(ids))
        why = online.reason if isinstance(online, Unknown) else "CPU list unknown"
        out["core_types"] = [dict(v, type=k, cpus=Unknown(why), cores=Unknown(why), threads_per_core=Unknown(why))
                             for k, v in out["_arm_types"].items()]
    if source == "sysfs" and any(root.exists(f"{topo.CPU_DIR}/cpu{c}/topology") for c in online[:1]):
        out.update(topo.read_topology(_Files(root), online, types or None))
        return out
    if types:
        out["core_types"] = [dict(v, type=k, cores=Unknown("no sysfs topology"),
                                  threads_per_core=Unknown("no sysfs topology")) for k, v in types.items()]
    if source is None:
        procs = []  # a part of a cpuinfo: its core and socket ids would undercount too
    if procs and all("physical id" in p and "core id" in p for p in procs):
        sockets = {p["physical id"] for p in procs}
        cores: Dict[Any, int] = {}
        for p in procs:
            key = (p["physical id"], p["core id"])
            cores[key] = cores.get(key, 0) + 1
        out.update(sockets=len(sockets), cores=len(cores), threads_per_core=max(cores.values()),
                   topology_source={"cores": "cpuinfo physical id, core id", "sockets": "cpuinfo physical id"})
        return out
    fields = _lscpu(root)
    n_sockets = int_field(fields, "Socket(s)")
    per_socket = int_field(fields, "Core(s) per socket", "Core(s) per cluster")
    if n_sockets and per_socket:
        out.update(sockets=n_sockets, cores=n_sockets * per_socket,
                   threads_per_core=int_field(fields, "Thread(s) per core") or Unknown("lscpu gives no threads per core"),
                   topology_source={"cores": "lscpu", "sockets": "lscpu"})
    else:
        for key in ("sockets", "cores", "threads_per_core"):
            out[key] = Unknown("no topology in sysfs, cpuinfo or lscpu")
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


def _model_name(arch: str, blocks: List[Dict[str, str]], types: Any) -> Any:
    if types:
        # lscpu's names from the MIDR; the kernel's "ARMv7 Processor rev 4" names no core.
        return " + ".join(types) if len(types) > 1 else next(iter(types))
    return ci.model_of(arch, blocks) or Unknown("cpuinfo has no model name")


def _uname_machine(root: SysRoot) -> Any:
    """`uname -m`, run live and read from a snapshot's recording, else a recorded `uname -a`;
    None where neither has it."""
    try:
        res = root.run(["uname", "-m"], timeout=1.0)
        found = uname.machine(res.stdout) if res.ok else None
        if found:
            return found, "uname -m"
    except Missing:
        pass
    try:
        res = root.run(["uname", "-a"], timeout=1.0, live=False)
    except Missing:
        return None
    found = uname.machine_from_all(res.stdout) if res.ok else None
    return (found, "uname -a") if found else None


def _arch(root: SysRoot, blocks: List[Dict[str, str]]) -> Any:
    machine = _uname_machine(root)
    if machine:
        return machine
    order = (root.read_or("/sys/kernel/cpu_byteorder") or "").strip() or None
    arch, how = ci.arch_of(blocks, order)
    return (arch, how) if arch else (Unknown(how), None)


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


def _without_cpuinfo(root: SysRoot, why: str) -> Dict[str, Any]:
    """Topology from sysfs when a dump holds no cpuinfo and no lscpu: what it can tell."""
    arch, how = _arch(root, [])
    cpu: Dict[str, Any] = {"arch": arch, "arch_source": how or Unknown(arch.reason if isinstance(arch, Unknown) else "")}
    cpu.update(_topology(root, []))
    cpu.pop("_arm_types", None)
    if isinstance(cpu["logical_cpus"], Unknown):
        raise Missing(f"{why}; no lscpu or sysfs CPU list recorded either")
    for key in ("vendor", "model_name", "microarch"):
        cpu[key] = Unknown(why)
    cpu.update(microarch_ancestors=[], flags=[], capabilities=capabilities("", []),
               hypervisor=Unknown(why), governor=Unknown(why), source="sysfs")
    return {"cpu": cpu}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    try:
        text = root.read("/proc/cpuinfo")
    except Missing as exc:
        try:
            return _from_lscpu(root, str(exc))
        except Missing as exc2:
            return _without_cpuinfo(root, str(exc2))
    blocks = ci.parse_cpuinfo(text)
    procs = ci.processors(blocks) or blocks
    if not procs:
        raise Missing("/proc/cpuinfo has no processor entries")
    arch, arch_how = _arch(root, blocks)
    arch_name = arch if isinstance(arch, str) else ""
    first = procs[0]
    flags = ci.flags(first)
    micro: Any = Unknown(arch.reason if isinstance(arch, Unknown) else f"archspec has no targets for {arch}")
    if arch_name in ("x86_64", "aarch64", "riscv64") or arch_name.startswith("ppc64"):
        from hpcdoctor.knowledge import microarch

        found = microarch.detect(arch_name, first, flags, ci.power_generation(first))
        micro = found if found else micro

    topology = _topology(root, procs, blocks if arch_name in ("aarch64", "arm") else None)
    types = topology.pop("_arm_types", None)
    vendor = first.get("vendor_id") or first.get("vendor")
    if not vendor and types:
        impl = next(iter(types.values()))["implementer"]
        vendor = arm_parts.vendor(int(impl, 16))
    cpu: Dict[str, Any] = {
        "arch": arch,
        "arch_source": arch_how or Unknown("architecture unknown"),
        "vendor": vendor or (micro["vendor"] if isinstance(micro, dict) else None) or Unknown("no vendor in cpuinfo"),
        "model_name": _model_name(arch_name, blocks, types),
        "microarch": micro["name"] if isinstance(micro, dict) else micro,
        "microarch_ancestors": micro["ancestors"] if isinstance(micro, dict) else [],
        "flags": flags,
        "capabilities": capabilities(arch_name, flags),
        # x86 guests see the hypervisor CPUID bit; clocks and topology then describe the VM.
        "hypervisor": "hypervisor" in flags if arch_name == "x86_64" else Unknown("no hypervisor flag on this ISA"),
    }
    if arch_name == "x86_64":
        _by_model(cpu, first.get("vendor_id", ""), first.get("cpu family"), first.get("model"))
    cpu.update(topology)
    gov = root.read_or("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
    cpu["governor"] = gov.strip() if gov else Unknown("no cpufreq scaling governor (a VM, or no cpufreq driver)")
    cpu["cpufreq"] = _cpufreq(root) if gov else Unknown("no cpufreq policy for cpu0 (a VM, or no cpufreq driver)")
    return {"cpu": cpu}


# bios_limit: the upper limit the platform firmware tells the OS to apply, where the driver reports it
# (acpi-cpufreq's _PPC; cpufreq.rst, "bios_limit"); absent on most nodes, which is no limit known.
_CPUFREQ_KHZ = ("scaling_min_freq", "scaling_max_freq", "cpuinfo_min_freq", "cpuinfo_max_freq", "scaling_cur_freq",
                "scaling_setspeed", "bios_limit")


def _cpufreq(root: SysRoot) -> Dict[str, Any]:
    """cpu0's cpufreq policy (the kernel's Documentation/admin-guide/pm/cpufreq.rst): the scaling driver
    and governor, the policy's limits and the hardware's, in kHz; each Unknown when unreadable.
    Whether a governor pins the frequency depends on the driver: intel_pstate and amd-pstate-epp in
    active mode run their own algorithms under the names powersave and performance."""
    base = "/sys/devices/system/cpu/cpu0/cpufreq/"
    out: Dict[str, Any] = {}
    for name in ("scaling_driver", "scaling_governor"):
        text = (root.read_or(base + name) or "").strip()
        out[name] = text[:40] if text else Unknown(f"{base}{name} not readable")
    for name in _CPUFREQ_KHZ:
        text = (root.read_or(base + name) or "").strip()
        out[name] = int(text) if text.isdigit() else Unknown(f"{base}{name} not readable or not a number")
    return out
