"""CPU topology from sysfs, read as the kernel documents it.

Documentation/ABI/stable/sysfs-devices-system-cpu and Documentation/admin-guide/cputopology.rst
(torvalds/linux, read 2026-11-25) define /sys/devices/system/cpu/cpuN/topology/: the sibling masks
(``core_cpus_list``, formerly ``thread_siblings_list``: the CPUs of cpuN's core;
``package_cpus_list``, formerly ``core_siblings_list``: those of its package; ``die_cpus_list``,
``cluster_cpus_list``) and the ids (``physical_package_id``, ``core_id``, ``die_id``,
``cluster_id``). The ids are "architecture and platform dependent": where an architecture does not
define one, the kernel's default is -1 for the package and 0 for the core, and real machines repeat
core ids across dies (sparse AMD ids). So the masks decide; the ids are read only where a kernel
exported no masks, and an id that is a default says nothing.

Everything here is a pure function of ``{path: text}``; the cpu check reads the files through
SysRoot. What cannot be told is an Unknown with its reason, never a count from CPUs / cores.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.cpulist import ListFormatError, format_cpulist, parse_cpulist, parse_cpumask

CPU_DIR = "/sys/devices/system/cpu"
# Intel hybrid parts register one perf PMU per core type; each lists its CPUs (arch/x86/events).
HYBRID_PMUS = (("cpu_core", "P-core"), ("cpu_atom", "E-core"))

# (what, new list name, old list name, new mask name, old mask name): newer kernels keep the old
# names as aliases, older ones have only those.
MASKS = {
    "core": ("core_cpus_list", "thread_siblings_list", "core_cpus", "thread_siblings"),
    "package": ("package_cpus_list", "core_siblings_list", "package_cpus", "core_siblings"),
    "die": ("die_cpus_list", "die_cpus"),
    "cluster": ("cluster_cpus_list", "cluster_cpus"),
}
IDS = ("physical_package_id", "core_id", "die_id", "cluster_id")


def _mask(files: Mapping[str, str], cpu: int, names: Tuple[str, ...]) -> Optional[Set[int]]:
    """The first of ``names`` cpuN has, parsed; None when it has none. A file that does not parse
    raises ListFormatError with its path."""
    for name in names:
        path = f"{CPU_DIR}/cpu{cpu}/topology/{name}"
        text = files.get(path)
        if text is None:
            continue
        try:
            return set(parse_cpulist(text) if name.endswith("_list") else parse_cpumask(text))
        except ListFormatError as exc:
            raise ListFormatError(f"{path}: {exc}") from None
    return None


def groups(files: Mapping[str, str], online: List[int], what: str) -> Any:
    """The set of CPU groups the ``what`` masks draw (one frozenset per core, package ...), None
    when no CPU has the mask, or Unknown when they are partial, malformed or contradict.

    Core masks are read for every CPU (they give threads per core); the wider ones for one CPU of
    each group, the rest being in it by the mask's own word, which keeps a replay of a 384-CPU
    snapshot well inside the check's time. Groups that overlap without being equal contradict."""
    names = MASKS[what]
    on = set(online)
    every = what == "core"
    sets: Dict[int, FrozenSet[int]] = {}
    covered: Set[int] = set()
    missing = []
    for cpu in online:
        if not every and cpu in covered:
            continue
        try:
            got = _mask(files, cpu, names)
        except ListFormatError as exc:
            return Unknown(str(exc))
        if got is None:
            missing.append(cpu)
            continue
        if cpu not in got:
            return Unknown(f"cpu{cpu}'s {names[0]} ({format_cpulist(got)}) does not hold cpu{cpu}")
        mine = frozenset(got & on)
        if not every and mine & covered:
            return Unknown(f"{names[0]} contradict: cpu{cpu} lists {format_cpulist(mine)}, which overlaps "
                           f"the groups of CPUs {format_cpulist(mine & covered)}")
        sets[cpu] = mine
        covered |= mine
    if not sets:
        return None
    if missing:
        return Unknown(f"{names[0]} missing for CPUs {format_cpulist(missing)} but present for others")
    for cpu, mine in sets.items():
        for other in mine:
            if other in sets and sets[other] != mine:
                return Unknown(f"{names[0]} contradict: cpu{cpu} lists {format_cpulist(mine)}, "
                               f"cpu{other} lists {format_cpulist(sets[other])}")
    return set(sets.values())


def _ids(files: Mapping[str, str], online: List[int], name: str) -> Any:
    """{cpu: id} for an id file every online CPU has, else Unknown."""
    out: Dict[int, int] = {}
    for cpu in online:
        text = files.get(f"{CPU_DIR}/cpu{cpu}/topology/{name}")
        if text is None:
            return Unknown(f"cpu{cpu} has no {name}")
        text = text.replace("\x00", "").strip()
        try:
            out[cpu] = int(text)
        except ValueError:
            return Unknown(f"cpu{cpu}'s {name} is not a number: {text[:20]!r}")
    return out


def _from_ids(files: Mapping[str, str], online: List[int], what: str) -> Any:
    """Groups from the ids, for kernels without masks. A package id of -1 is the kernel's
    "undefined"; core ids are only unique within a package (and a die, where there are dies)."""
    pkg = _ids(files, online, "physical_package_id")
    if isinstance(pkg, Unknown):
        return Unknown(f"no sibling masks, and {pkg.reason}")
    if any(v < 0 for v in pkg.values()):
        return Unknown("no sibling masks, and physical_package_id is -1 (undefined on this architecture)")
    if what == "package":
        keyed: Dict[Any, Set[int]] = {}
        for cpu, p in pkg.items():
            keyed.setdefault(p, set()).add(cpu)
        return {frozenset(v) for v in keyed.values()}
    core = _ids(files, online, "core_id")
    if isinstance(core, Unknown):
        return Unknown(f"no sibling masks, and {core.reason}")
    die = _ids(files, online, "die_id")
    keyed = {}
    for cpu in online:
        key = (pkg[cpu], die[cpu] if isinstance(die, dict) else 0, core[cpu])
        keyed.setdefault(key, set()).add(cpu)
    return {frozenset(v) for v in keyed.values()}


def hybrid_types(files: Mapping[str, str], online: List[int]) -> Any:
    """{label: cpus} from the hybrid PMUs' cpus lists, None when the machine has none."""
    found: Dict[str, List[int]] = {}
    for pmu, label in HYBRID_PMUS:
        text = files.get(f"/sys/devices/{pmu}/cpus")
        if text is None:
            continue
        try:
            cpus = [c for c in parse_cpulist(text) if c in set(online)]
        except ListFormatError as exc:
            return Unknown(f"/sys/devices/{pmu}/cpus: {exc}")
        if cpus:
            found[label] = cpus
    return found if len(found) > 1 else None


def read_topology(files: Mapping[str, str], online: List[int],
                  types: Optional[Dict[str, Dict[str, Any]]] = None) -> Dict[str, Any]:
    """sockets, cores, threads_per_core, dies, clusters and core_types of the online CPUs.

    ``types`` maps a core type's label to {"cpus": [...], and what else names it (an Arm part)};
    without it the hybrid PMUs' lists are used where the kernel has them (two or more types)."""
    out: Dict[str, Any] = {}
    how: Dict[str, str] = {}
    for what, key in (("core", "cores"), ("package", "sockets")):
        found = groups(files, online, what)
        how[key] = MASKS[what][0]
        if found is None:
            found = _from_ids(files, online, what)
            how[key] = "physical_package_id" if what == "package" else "physical_package_id, die_id, core_id"
        out[f"_{key}"] = found
        out[key] = len(found) if isinstance(found, set) else found
    cores = out.pop("_cores")
    out.pop("_sockets")
    if isinstance(cores, set):
        out["threads_per_core"] = max(len(c) for c in cores)
    else:
        out["threads_per_core"] = Unknown(f"cores unknown: {cores.reason}")
    for what, key in (("die", "dies"), ("cluster", "clusters")):
        found = groups(files, online, what)
        if found is None:
            out[key] = Unknown(f"the kernel exports no {MASKS[what][0]}")
        else:
            out[key] = len(found) if isinstance(found, set) else found
    out["topology_source"] = how
    given = types is not None
    if types is None:
        hybrid = hybrid_types(files, online)
        if isinstance(hybrid, Unknown):
            out["core_types"] = hybrid
            return out
        types = {label: {"cpus": cpus} for label, cpus in (hybrid or {}).items()}
    # Types the caller named (an Arm chip's MIDR parts) are reported even when there is one.
    if len(types) > 1 or (given and types):
        out["core_types"] = [_one_type(label, info, cores) for label, info in types.items()]
    return out


def _one_type(label: str, info: Dict[str, Any], cores: Any) -> Dict[str, Any]:
    cpus = set(info["cpus"])
    entry = dict(info)
    entry["type"] = label
    entry["cpus"] = sorted(cpus)
    if isinstance(cores, set):
        mine = [c for c in cores if c <= cpus]
        if sum(len(c) for c in mine) != len(cpus):
            entry["cores"] = Unknown(f"{label}'s CPUs share cores with another type")
            entry["threads_per_core"] = Unknown(f"{label}'s CPUs share cores with another type")
        else:
            entry["cores"] = len(mine)
            entry["threads_per_core"] = max(len(c) for c in mine)
    else:
        entry["cores"] = entry["threads_per_core"] = Unknown(f"cores unknown: {cores.reason}")
    return entry
