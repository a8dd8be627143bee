"""What lstopo and lscpu say of a recorded machine, for bench/topology_score.py: the expected
side of the comparison, parsed from hwloc's .console/.xml and util-linux's lscpu outputs."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any, Dict, List, Optional

# The architecture a dump's name or uname gives, as `uname -m` families: the 32-bit x86 names
# are one family, and "ppc" (hwloc's label) says POWER without the byte order.
ARCH_WORDS = (("x86_64", "x86_64"), ("amd64", "x86_64"), ("em64t", "x86_64"), ("intel64", "x86_64"),
              ("i386", "i386"), ("i686", "i386"), ("ia64", "ia64"), ("aarch64", "aarch64"),
              ("armv7", "arm"), ("arm", "arm"), ("ppc64le", "ppc64le"), ("ppc64", "ppc64"), ("ppc", "ppc"),
              ("s390x", "s390"), ("s390", "s390"), ("rv64", "riscv64"), ("riscv64", "riscv64"),
              ("loongarch", "loongarch64"), ("sparc64", "sparc64"))


def arch_family(word: str) -> Optional[str]:
    w = word.lower()
    for key, fam in ARCH_WORDS:
        if re.search(rf"(^|[^a-z]){key}", w) or w.startswith(key) or re.match(rf"^\d+{key}", w):
            return fam
    return None


def mask_cpus(text: str) -> List[int]:
    """hwloc's "0x000000ff,0xffffffff" (most significant word first)."""
    digits = "".join(w[2:] if w.startswith("0x") else w for w in text.split(","))
    value = int(digits or "0", 16)
    return [i for i in range(value.bit_length()) if value >> i & 1]


# -- expected, from lstopo ---------------------------------------------------------------------

OBJ_RE = re.compile(r"^( *)([A-Za-z][A-Za-z0-9]*)(?:\([^)]*\))?(?: L#\d+)?(?: \((.*)\))?$")


def hwloc_console(text: str) -> Dict[str, Any]:
    root: Dict[str, Any] = {"type": "root", "children": [], "attrs": ""}
    stack = [(-1, root)]
    kinds: List[List[int]] = []
    arch = None
    for line in text.splitlines():
        if line.startswith("depth ") or line.startswith("Special depth") or line.startswith(" depth"):
            continue
        m = re.match(r"CPU kind #\d+ .*cpuset (\S+)", line)
        if m:
            kinds.append(mask_cpus(m.group(1)))
            continue
        m = re.search(r"\bArchitecture=(\S+)", line)
        if m and line.startswith("Topology infos"):
            arch = m.group(1)
        m = OBJ_RE.match(line)
        if not m or line.startswith("Topology") or line.startswith("CPU kind"):
            continue
        indent, typ, attrs = len(m.group(1)), m.group(2), m.group(3) or ""
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if not stack:
            continue
        node = {"type": typ, "attrs": attrs, "children": []}
        stack[-1][1]["children"].append(node)
        stack.append((indent, node))
    return _from_tree(root, kinds, arch, text)


def _pnum(attrs: str) -> Optional[int]:
    m = re.match(r"P#(\d+)", attrs)
    return int(m.group(1)) if m else None


def _pus(node: Dict[str, Any]) -> List[int]:
    out = []
    for c in node["children"]:
        if c["type"] == "PU":
            p = _pnum(c["attrs"])
            if p is not None:
                out.append(p)
        out.extend(_pus(c))
    return out


def _walk(node: Dict[str, Any]):
    yield node
    for c in node["children"]:
        yield from _walk(c)


def _from_tree(root: Dict[str, Any], kinds: List[List[int]], arch: Optional[str], text: str) -> Dict[str, Any]:
    pus = sorted(set(_pus(root)))
    cores = [n for n in _walk(root) if n["type"] == "Core"]
    packages = [n for n in _walk(root) if n["type"] == "Package"]
    numa: Dict[int, List[int]] = {}

    def attach(node: Dict[str, Any], cpus: List[int]) -> None:
        # A NUMA node's CPUs are those of the nearest object above it that has any (one under a
        # memory-side cache sits below an object without PUs).
        here = sorted(set(_pus(node))) or cpus
        for c in node["children"]:
            if c["type"] == "NUMANode":
                numa[_pnum(c["attrs"]) or 0] = here
            else:
                attach(c, here)

    attach(root, [])
    core_pus = [sorted(_pus(c)) for c in cores]
    exp: Dict[str, Any] = {"logical_cpus": len(pus) or None, "sockets": len(packages) or None,
                           "cores": len(cores) or None,
                           "threads_per_core": max((len(p) for p in core_pus), default=None),
                           "numa_count": len(numa) or None, "numa_cpus": numa or None,
                           "arch": arch, "model": None, "core_types": None}
    models = set(re.findall(r'CPUModel="([^"]*)"', text)) | set(re.findall(r"CPUModel=([^\s\")]+)[\s)]", text))
    if models:
        exp["model"] = {" ".join(m.split()) for m in models}
    parts = set(re.findall(r"CPUPart=(0x[0-9a-fA-F]+)", text))
    exp["parts"] = {p.lower() for p in parts} or None
    if len(kinds) > 1:
        exp["core_types"] = _kinds(kinds, core_pus)
    return exp


def _kinds(kinds: List[List[int]], core_pus: List[List[int]]) -> List[List[int]]:
    """[cores, threads per core] of each CPU kind, sorted, for comparison."""
    out = []
    for kind in kinds:
        ks = set(kind)
        mine = [p for p in core_pus if p and set(p) <= ks]
        out.append([len(mine), max((len(p) for p in mine), default=0)])
    return sorted(out)


def hwloc_xml(text: str) -> Dict[str, Any]:
    tree = ET.fromstring(text)

    def conv(el) -> Dict[str, Any]:
        typ = el.get("type")
        attrs = f"P#{el.get('os_index')}" if el.get("os_index") is not None else ""
        node = {"type": typ, "attrs": attrs, "children": [], "el": el}
        for child in el.findall("object"):
            node["children"].append(conv(child))
        return node

    top = tree.find("object")
    root = {"type": "root", "attrs": "", "children": [conv(top)] if top is not None else []}
    kinds = [mask_cpus(k.get("cpuset")) for k in tree.findall("cpukind")]
    arch = None
    for info in tree.iter("info"):
        if info.get("name") == "Architecture":
            arch = info.get("value")
    exp = _from_tree(root, kinds, arch, "")
    numa = {}
    for el in tree.iter("object"):
        if el.get("type") == "NUMANode" and el.get("cpuset"):
            numa[int(el.get("os_index") or 0)] = mask_cpus(el.get("cpuset"))
    exp["numa_cpus"] = numa or None
    exp["numa_count"] = len(numa) or None
    models = {" ".join(i.get("value").split()) for i in tree.iter("info") if i.get("name") == "CPUModel"}
    parts = {i.get("value").lower() for k in tree.findall("cpukind") for i in k.iter("info")
             if i.get("name") == "CPUPart"}
    exp["model"] = models or None
    exp["parts"] = parts or None
    return exp


# -- expected, from lscpu ------------------------------------------------------------------------

def lscpu_expected(text: str) -> Dict[str, Any]:
    summary, _, rest = text.partition("\n\n")
    sections: List[Dict[str, str]] = [{}]
    top: Dict[str, str] = {}
    numa: Dict[int, List[int]] = {}
    for line in summary.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip(), value.strip()
        m = re.match(r"NUMA node(\d+) CPU\(s\)", key)
        if m:
            numa[int(m.group(1))] = cpulist(value)
            continue
        if key == "Model name" and sections[-1].get("Model name"):
            sections.append({})
        if key in ("Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "Core(s) per cluster"):
            sections[-1][key] = value
        else:
            top.setdefault(key, value)
    online = cpulist(top.get("On-line CPU(s) list", ""))
    rows = []
    block = rest.split("\n\n")[0] if rest else ""
    for line in block.splitlines():
        if line and not line.startswith("#"):
            rows.append(line.split(","))
    models = {" ".join(s["Model name"].split()) for s in sections if s.get("Model name") not in (None, "-")}
    exp: Dict[str, Any] = {"logical_cpus": len(online) or None, "model": models or None, "arch": None,
                           "numa_count": int(top["NUMA node(s)"]) if top.get("NUMA node(s)", "").isdecimal() else None,
                           "numa_cpus": numa or None, "core_types": None}
    if len(sections) > 1:
        exp["sockets"] = max(int(s.get("Socket(s)", "0") or 0) for s in sections) or None
        exp["cores"] = sum(int(s.get("Core(s) per socket") or s.get("Core(s) per cluster") or 0) *
                           int(s.get("Socket(s)") or 1) for s in sections)
        exp["threads_per_core"] = max(int(s.get("Thread(s) per core") or 0) for s in sections)
        exp["core_types"] = sorted([int(s.get("Core(s) per socket") or s.get("Core(s) per cluster") or 0) *
                                    int(s.get("Socket(s)") or 1), int(s.get("Thread(s) per core") or 0)]
                                   for s in sections)
    else:
        cores: Dict[str, int] = {}
        sockets = set()
        for r in rows:
            if len(r) > 2:
                cores[r[1]] = cores.get(r[1], 0) + 1
                if r[2] not in ("", "-"):
                    sockets.add(r[2])
        exp["cores"] = len(cores) or None
        exp["sockets"] = len(sockets) or None
        exp["threads_per_core"] = max(cores.values(), default=None)
    return exp


def cpulist(text: str) -> List[int]:
    # The reference side's own reader, on purpose not hpcdoctor.parse.cpulist: a scorer that read
    # the expected answers with the code under test would share its bugs and score them right.
    out: List[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        stride = 1
        if ":" in part:
            part, _, s = part.partition(":")
            stride = int(s)
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1, stride))
    return sorted(out)
