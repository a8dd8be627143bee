"""Score hpcdoctor's CPU and NUMA topology on other projects' recorded machines.

hwloc (tests/hwloc/linux: *.tar.bz2 /sys+/proc dumps, *.test, expected *.console or *.xml from
lstopo) and util-linux (tests/ts/lscpu/dumps/*.tar.gz, expected tests/expected/lscpu/lscpu-NAME)
keep real machines with what their tools say of them. Each dump is replayed as an hpcdoctor
snapshot (fs/ = the dump's root) through the cpu and numa checks and compared field by field:
logical CPUs, sockets, cores, threads per core, core types, NUMA nodes and their CPU lists,
architecture and model. A field is right, wrong, unknown (hpcdoctor said it could not tell) or
n/a (the expected output does not say). Nothing here is committed data: give the folders.

    python bench/topology_score.py --work /tmp/topo HWLOC_LINUX_DIR UTIL_LINUX_DIR [--half tuned|held-out]

HWLOC_LINUX_DIR holds hwloc's tests/hwloc/linux files; UTIL_LINUX_DIR holds util-linux's
tests/ts/lscpu/dumps/*.tar.gz and tests/expected/lscpu/lscpu-* (one folder, or the two).
The halves are every other machine sorted by name: "tuned" the even ones, "held-out" the odd.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Dict, List, Optional

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, ReplaySysRoot

FIELDS = ("logical_cpus", "sockets", "cores", "threads_per_core", "core_types", "numa_count", "numa_cpus",
          "arch", "model")

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
    for parent in _walk(root):
        for c in parent["children"]:
            if c["type"] == "NUMANode":
                numa[_pnum(c["attrs"]) or 0] = sorted(set(_pus(parent)))
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
            numa[int(m.group(1))] = _cpulist(value)
            continue
        if key == "Model name" and sections[-1].get("Model name"):
            sections.append({})
        if key in ("Model name", "Thread(s) per core", "Core(s) per socket", "Socket(s)", "Core(s) per cluster"):
            sections[-1][key] = value
        else:
            top.setdefault(key, value)
    online = _cpulist(top.get("On-line CPU(s) list", ""))
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


def _cpulist(text: str) -> List[int]:
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


# -- the dumps -----------------------------------------------------------------------------------

def _extract(tarball: Path, dest: Path) -> Optional[Path]:
    """The dump's root as dest/fs (a snapshot), extracted once."""
    fs = dest / "fs"
    if not fs.is_dir():
        dest.mkdir(parents=True, exist_ok=True)
        tmp = dest / "x"
        with tarfile.open(tarball) as tf:
            wanted = [m for m in tf.getmembers() if (m.isfile() or m.isdir()) and ".." not in m.name and
                      re.search(r"/(proc|sys/devices/system|sys/devices/cpu[^/]*|sys/kernel|sys/bus/cpu)(/|$)", "/" + m.name)]
            tf.extractall(tmp, members=wanted)
        tops = [p for p in tmp.iterdir()] if tmp.is_dir() else []
        if len(tops) != 1:
            return None
        tops[0].rename(fs)
        tmp.rmdir()
    return dest


def _write_uname(snap: Path, machine: Optional[str]) -> None:
    """What the dump recorded of `uname -m` (hwloc-gather-topology's Architecture line), as a
    recorded command: the way a snapshot holds it."""
    cmd = snap / "cmd"
    cmd.mkdir(exist_ok=True)
    entries = []
    if machine:
        (cmd / "uname_-m.txt").write_text(machine + "\n")
        entries.append({"argv": ["uname", "-m"], "rc": 0, "stdout": "uname_-m.txt", "stderr": ""})
    (cmd / "index.json").write_text(json.dumps(entries))


def collect_dumps(dirs: List[Path], work: Path) -> List[Dict[str, Any]]:
    machines: Dict[str, Dict[str, Any]] = {}
    for d in dirs:
        for test in sorted(d.glob("*.test")):
            body = test.read_text()
            src = re.search(r"^source:\s*(\S+)", body, re.M)
            tgt = re.search(r"^target:\s*(\S+)", body, re.M)
            if not src or not tgt or not (d / src.group(1)).exists():
                continue
            opts = re.search(r"^options:\s*(.*)$", body, re.M)
            env = re.search(r"^env:", body, re.M)
            name = src.group(1).replace(".tar.bz2", "")
            # lstopo's plain run (no options, no env) is the machine as hwloc sees it; a
            # "--disallowed" run shows the CPUs a recorded cgroup hid, as hpcdoctor counts them.
            # hpcdoctor lists every node the kernel has; hwloc hides NVIDIA GPU memory nodes
            # unless told to keep them.
            rank = 0 if (opts and "--disallowed" in opts.group(1)) or "KEEP_NVIDIA_GPU_NUMA_NODES" in body else (
                1 if not opts and not env else 2 if not env and "no-icaches" in opts.group(1) else 3)
            have = machines.get(f"hwloc/{name}")
            if have and have["rank"] <= rank:
                continue
            machines[f"hwloc/{name}"] = {"rank": rank, "tarball": d / src.group(1), "target": d / tgt.group(1),
                                         "fake_kinds": "HWLOC_CPUKINDS" in body}
        for tarball in sorted(d.glob("*.tar.gz")):
            name = tarball.name[:-len(".tar.gz")]
            expected = next((e / f"lscpu-{name}" for e in dirs if (e / f"lscpu-{name}").exists()), d / f"lscpu-{name}")
            if expected.exists():
                machines[f"util-linux/{name}"] = {"rank": 0, "tarball": tarball, "target": expected}
    out = []
    for key in sorted(machines):
        m = machines[key]
        snap = _extract(m["tarball"], work / key)
        if snap is None:
            continue
        text = m["target"].read_text(errors="replace")
        if m["target"].suffix == ".xml":
            exp = hwloc_xml(text)
        elif m["target"].suffix == ".console":
            exp = hwloc_console(text)
        else:
            exp = lscpu_expected(text)
        info = snap / "fs" / "proc" / "hwloc-nofile-info"
        uname = None
        if info.exists():
            mm = re.search(r"^Architecture:\s*(\S+)", info.read_text(errors="replace"), re.M)
            uname = mm.group(1) if mm else None
        _write_uname(snap, uname)
        # util-linux's "arm-A510-..." names a chip, not the kernel's width (A510 runs AArch64 only
        # at EL1, so that kernel is arm64, but the name does not say it): no expectation.
        label = key.split("/")[1]
        exp["arch"] = arch_family(exp.get("arch") or uname or ("" if label.startswith("arm-") else label))
        if m.get("fake_kinds"):
            exp["core_types"] = None  # kinds made from cpufreq by an env setting, not core types
        _restricted(snap / "fs", exp)
        exp["cpuless"] = _cpuless_nodes(snap / "fs")
        out.append({"name": key, "snap": snap, "expected": exp})
    return out


def _dump_online(fs: Path) -> Optional[List[int]]:
    f = fs / "sys/devices/system/cpu/online"
    if f.exists():
        try:
            return _cpulist(f.read_text(errors="replace").rstrip("\x00\n "))
        except ValueError:
            return None
    return None


def _restricted(fs: Path, exp: Dict[str, Any]) -> None:
    """hwloc shows the CPUs a recorded cgroup cpuset allows, hpcdoctor the node's: where the dump
    has such a cpuset and hwloc shows fewer CPUs than are online, the counts are not comparable."""
    online = _dump_online(fs)
    cpuset = fs / "proc/self/cpuset"
    named = cpuset.exists() and cpuset.read_text(errors="replace").strip() not in ("", "/")
    if named and online and exp.get("logical_cpus") and exp["logical_cpus"] < len(online):
        for f in ("logical_cpus", "sockets", "cores", "threads_per_core", "numa_count", "numa_cpus", "core_types"):
            exp[f] = None
        exp["restricted"] = True


def _cpuless_nodes(fs: Path) -> set:
    """Nodes the kernel gives no CPU (memory-only): hwloc gives them a locality, not CPUs."""
    out = set()
    for d in (fs / "sys/devices/system/node").glob("node[0-9]*"):
        text = None
        if (d / "cpulist").exists():
            text = (d / "cpulist").read_text(errors="replace").rstrip("\x00\n ")
        elif (d / "cpumap").exists():
            text = (d / "cpumap").read_text(errors="replace").rstrip("\x00\n ").replace(",", "").strip("0") or ""
        if text == "":
            out.add(int(d.name[4:]))
    return out


# -- hpcdoctor's answer --------------------------------------------------------------------------

def answer(snap: Path) -> Dict[str, Any]:
    from hpcdoctor.checks import cpu as cpu_check, numa as numa_check

    root = ReplaySysRoot(snap)
    got: Dict[str, Any] = {}
    try:
        cpu = cpu_check.collect(root, None)["cpu"]
    except Missing as exc:  # the check's own "cannot tell": every cpu field unknown
        cpu = {f: Unknown(str(exc)) for f in ("logical_cpus", "sockets", "cores", "threads_per_core", "arch",
                                               "model_name", "core_types")}
    except Exception as exc:  # a traceback is the worst answer: every field is wrong
        return {"error": f"cpu: {exc.__class__.__name__}: {exc}"}
    try:
        numa = numa_check.collect(root, None)["numa"]
    except Exception as exc:
        return {"error": f"numa: {exc.__class__.__name__}: {exc}"}
    for f in ("logical_cpus", "sockets", "cores", "threads_per_core", "arch", "model_name"):
        got[f] = cpu.get(f, Unknown("not reported"))
    types = cpu.get("core_types")
    got["core_types"] = (sorted([t.get("cores"), t.get("threads_per_core")] for t in types)
                         if isinstance(types, list) and len(types) > 1 else types if isinstance(types, Unknown) else None)
    got["parts"] = ({str(t.get("part")).lower() for t in types if t.get("part")} or None) if isinstance(types, list) else None
    got["models"] = ({t.get("model_name") for t in types if isinstance(t.get("model_name"), str)}
                     if isinstance(types, list) and len(types) > 1 else None)
    nodes = numa.get("nodes")
    got["numa_count"] = numa.get("count")
    if isinstance(nodes, list):
        got["numa_cpus"] = {n["id"]: n["cpus"] for n in nodes}
    else:
        got["numa_cpus"] = nodes
    return got


def judge(field: str, exp: Dict[str, Any], got: Dict[str, Any]) -> str:
    want = exp.get(field)
    if field == "model":
        if exp.get("parts"):
            have = got.get("parts")
            return "unknown" if not have else ("ok" if have == exp["parts"] else "wrong")
        if not want:
            return "n/a"
        have = got.get("models") or ({got["model_name"]} if isinstance(got.get("model_name"), str) else None)
        if not have:
            return "unknown"
        return "ok" if {" ".join(str(h).split()) for h in have} == want else "wrong"
    if want is None:
        return "n/a"
    value = got.get(field)
    if field == "core_types" and value is None:
        return "wrong"  # a hybrid machine read as one kind of core
    if isinstance(value, Unknown) or value is None:
        return "unknown"
    if field == "arch":
        fam = arch_family(str(value))
        if want == "ppc" and fam in ("ppc64", "ppc"):
            return "ok"
        return "ok" if fam == want else "wrong"
    if field == "numa_cpus":
        if not isinstance(value, dict):
            return "unknown"
        skip = exp.get("cpuless") or set()
        mine = {k: (v if isinstance(v, list) else None) for k, v in value.items() if k not in skip}
        return "ok" if mine == {k: v for k, v in want.items() if k not in skip} else "wrong"
    return "ok" if value == want else "wrong"


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--work", type=Path, required=True, help="where the dumps are extracted (reused)")
    ap.add_argument("--half", choices=("all", "tuned", "held-out"), default="all")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each wrong field's values")
    args = ap.parse_args(argv)
    machines = collect_dumps(args.dirs, args.work)
    for i, m in enumerate(machines):
        m["half"] = "tuned" if i % 2 == 0 else "held-out"
    if args.half != "all":
        machines = [m for m in machines if m["half"] == args.half]
    results = []
    for m in machines:
        got = answer(m["snap"])
        marks = {f: "wrong" if "error" in got else judge(f, m["expected"], got) for f in FIELDS}
        right = all(v in ("ok", "n/a") for v in marks.values())
        results.append((m, marks, right))
        bad = [f"{f}:{v}" for f, v in marks.items() if v in ("wrong", "unknown")]
        print(f"{'PASS' if right else 'FAIL'} {m['half']:8s} {m['name']:50s} {' '.join(bad)}")
        if args.verbose and bad:
            if "error" in got:
                print(f"     {got['error']}")
            for f, v in marks.items():
                if v in ("wrong", "unknown"):
                    key = "parts" if f == "model" and m["expected"].get("parts") else f
                    g = got.get(key) if f != "model" else (got.get("parts") or got.get("models") or got.get("model_name"))
                    print(f"     {f}: expected {_short(m['expected'].get(key))} got {_short(g)}")
    for half in ("tuned", "held-out", "all"):
        rows = [r for r in results if half == "all" or r[0]["half"] == half]
        if not rows:
            continue
        print(f"\n[{half}] {'field':18s} {'ok':>4s} {'wrong':>6s} {'unknown':>8s} {'n/a':>4s}")
        for f in FIELDS:
            t = {k: sum(1 for r in rows if r[1][f] == k) for k in ("ok", "wrong", "unknown", "n/a")}
            print(f"[{half}] {f:18s} {t['ok']:4d} {t['wrong']:6d} {t['unknown']:8d} {t['n/a']:4d}")
        print(f"[{half}] machines right on every field scored: {sum(r[2] for r in rows)} of {len(rows)}")
    return 0


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) < 160 else s[:157] + "..."


if __name__ == "__main__":
    sys.exit(main())
