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
from pathlib import Path
from typing import Any, Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from topology_expected import cpulist, arch_family, hwloc_console, hwloc_xml, lscpu_expected  # noqa: E402

from hpcdoctor.facts import Unknown  # noqa: E402
from hpcdoctor.sysroot import Missing, ReplaySysRoot  # noqa: E402

FIELDS = ("logical_cpus", "sockets", "cores", "threads_per_core", "core_types", "numa_count", "numa_cpus",
          "arch", "model")

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
            return cpulist(f.read_text(errors="replace").rstrip("\x00\n "))
        except ValueError:
            return None
    dirs = [d for d in (fs / "sys/devices/system/cpu").glob("cpu[0-9]*") if (d / "topology").is_dir()]
    return sorted(int(d.name[3:]) for d in dirs) or None


def _restricted(fs: Path, exp: Dict[str, Any]) -> None:
    """hwloc shows the CPUs and memory a recorded cgroup cpuset allows, hpcdoctor the node's: where
    the dump has such a cpuset and hwloc shows fewer CPUs than are online or fewer NUMA nodes than
    the kernel has, the counts are not comparable."""
    online = _dump_online(fs)
    cpuset = fs / "proc/self/cpuset"
    named = cpuset.exists() and cpuset.read_text(errors="replace").strip() not in ("", "/")
    nodes = len(list((fs / "sys/devices/system/node").glob("node[0-9]*")))
    fewer_cpus = bool(online and exp.get("logical_cpus") and exp["logical_cpus"] < len(online))
    fewer_nodes = bool(nodes and exp.get("numa_count") and exp["numa_count"] < nodes)
    if named and (fewer_cpus or fewer_nodes):
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
        if mine == {k: v for k, v in want.items() if k not in skip}:
            return "ok"
        return "unknown" if None in mine.values() else "wrong"
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
