"""CPU and NUMA topology as the kernel's sibling masks give it, held against lscpu and hwloc: on the
live machine, on a recording of one, and Arm cores named from their MIDR on real cpuinfo captures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from typing import Any, Dict

import pytest

from conftest import CPUINFO, FIXTURES
from hpcdoctor.checks import cpu as cpu_check, numa as numa_check
from hpcdoctor.parse.cpulist import parse_cpulist
from hpcdoctor.sysroot import LiveSysRoot, ReplaySysRoot

RECORDED = FIXTURES / "topology" / "kvm-epyc-2cpu"
LSCPU_E = ["lscpu", "-J", "-e=CPU,CORE,SOCKET,NODE,ONLINE"]
LSTOPO = ["lstopo", "--of", "xml", "-"]


def _fields(doc: Dict[str, Any]) -> Dict[str, str]:
    """lscpu -J's field/data rows, flattened (newer util-linux nests them under "children")."""
    out: Dict[str, str] = {}

    def walk(rows):
        for row in rows:
            out.setdefault(str(row.get("field", "")).rstrip(":"), row.get("data") or "")
            walk(row.get("children") or [])

    walk(doc["lscpu"])
    return out


def _from_lscpu(summary: str, per_cpu: str) -> Dict[str, Any]:
    fields = _fields(json.loads(summary))
    rows = [r for r in json.loads(per_cpu)["cpus"] if r.get("online") in (True, "yes", "y")]
    per_core: Dict[Any, int] = {}
    for r in rows:
        per_core[r["core"]] = per_core.get(r["core"], 0) + 1
    numa = {int(k[len("NUMA node"):-len(" CPU(s)")]): parse_cpulist(v) for k, v in fields.items()
            if k.startswith("NUMA node") and k.endswith(" CPU(s)")}
    return {"logical_cpus": len(rows), "cores": len(per_core), "sockets": len({r["socket"] for r in rows}),
            "threads_per_core": max(per_core.values()), "numa": numa, "arch": fields.get("Architecture")}


def _mask(text: str):
    value = int(text.replace("0x", "").replace(",", ""), 16)
    return [i for i in range(value.bit_length()) if value >> i & 1]


def _from_lstopo(xml: str) -> Dict[str, Any]:
    tree = ET.fromstring(xml)
    objs = list(tree.iter("object"))
    cores = [o for o in objs if o.get("type") == "Core"]
    return {"logical_cpus": sum(1 for o in objs if o.get("type") == "PU"), "cores": len(cores),
            "sockets": sum(1 for o in objs if o.get("type") == "Package"),
            "threads_per_core": max(sum(1 for c in core.iter("object") if c.get("type") == "PU") for core in cores),
            "numa": {int(o.get("os_index")): _mask(o.get("cpuset")) for o in objs
                     if o.get("type") == "NUMANode" and o.get("cpuset")}}


def _hpcdoctor(root) -> Dict[str, Any]:
    cpu = cpu_check.collect(root, None)["cpu"]
    numa = numa_check.collect(root, None)["numa"]
    return {"logical_cpus": cpu["logical_cpus"], "cores": cpu["cores"], "sockets": cpu["sockets"],
            "threads_per_core": cpu["threads_per_core"], "arch": cpu["arch"],
            "numa": {n["id"]: n["cpus"] for n in numa["nodes"]}}


def _same(mine: Dict[str, Any], theirs: Dict[str, Any], tool: str) -> None:
    for key, value in theirs.items():
        if key == "numa" and not value:
            continue  # lscpu prints no node lines on a kernel without NUMA
        if value is not None:
            assert mine[key] == value, f"{key}: hpcdoctor {mine[key]!r}, {tool} {value!r}"


def _tool(argv) -> str:
    """A reference tool's output; missing, the test skips with the reason, except in CI (CI=true),
    whose image installs util-linux and hwloc and where a skip would hide a regression."""
    if shutil.which(argv[0]) is None:
        why = f"{argv[0]} is not installed (Debian packages util-linux, hwloc)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}; CI must install it")
        pytest.skip(why)
    res = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_live_machine_matches_lscpu():
    truth = _from_lscpu(_tool(["lscpu", "-J"]), _tool(LSCPU_E))
    _same(_hpcdoctor(LiveSysRoot()), truth, "lscpu")


def test_live_machine_matches_hwloc():
    # --whole-system: the node's CPUs, not only those this test's cgroup may use, as hpcdoctor counts.
    truth = _from_lstopo(_tool(["lstopo", "--of", "xml", "--whole-system", "-"]))
    _same(_hpcdoctor(LiveSysRoot()), truth, "lstopo")


def _recorded(name: str) -> str:
    return (RECORDED / "cmd" / name).read_text()


def test_recorded_machine_matches_the_lscpu_and_lstopo_run_beside_it():
    mine = _hpcdoctor(ReplaySysRoot(RECORDED))
    _same(mine, _from_lscpu(_recorded("lscpu_-J.txt"), _recorded("lscpu_-J_-e.txt")), "lscpu")
    _same(mine, _from_lstopo(_recorded("lstopo_--of_xml.txt")), "lstopo")
    cpu = cpu_check.collect(ReplaySysRoot(RECORDED), None)["cpu"]
    # Read from the masks, the way the kernel documents them, and told where it came from.
    assert cpu["topology_source"] == {"cores": "core_cpus_list", "sockets": "package_cpus_list"}
    assert cpu["arch_source"] == "uname -m"
    assert cpu["dies"] == 1


@pytest.mark.parametrize("name, implementer, part, model", [
    ("linux-amazon-neoverse_n1", "0x41", "0xd0c", "Neoverse-N1"),
    ("linux-ubuntu22.04-neoverse_v2", "0x41", "0xd4f", "Neoverse-V2"),
    ("linux-rocky8-a64fx", "0x46", "0x001", "A64FX"),
    ("linux-centos7-thunderx2", "0x43", "0x0af", "ThunderX2-99xx"),
])
def test_arm_cores_are_named_from_their_midr(name, implementer, part, model, cpuinfo_snapshot):
    cpu = cpu_check.collect(ReplaySysRoot(cpuinfo_snapshot(name)), None)["cpu"]
    assert cpu["arch"] == "aarch64" and cpu["arch_source"].startswith("cpuinfo of an arm64 kernel")
    assert cpu["model_name"] == model
    (kind,) = cpu["core_types"]
    assert (kind["implementer"], kind["part"], kind["model_name"]) == (implementer, part, model)


def test_x86_captures_are_64_bit_kernels_by_their_own_keys(cpuinfo_snapshot):
    for name in sorted(p.name for p in CPUINFO.iterdir()):
        if "zen" in name or "lake" in name or "broadwell" in name or "rapids" in name:
            cpu = cpu_check.collect(ReplaySysRoot(cpuinfo_snapshot(name)), None)["cpu"]
            assert cpu["arch"] == "x86_64", name
            assert "no 32-bit bug lines" in cpu["arch_source"]


def test_arm_part_table_is_sourced():
    from hpcdoctor import knowledge
    from hpcdoctor.knowledge import arm_parts

    data = knowledge.load("arm_parts")
    assert data["implementer"]
    for impl in data["implementer"]:
        assert "lscpu-arm.c" in impl["source"] and impl["read"] == "2026-11-25", impl["name"]
        assert all(k.startswith("0x") for k in impl["parts"])
    # A part the table lacks is named by its numbers, never guessed.
    assert arm_parts.name(0x41, 0xfff) == "ARM part 0xfff"


@pytest.mark.parametrize("node", ["cpu-kvm-2core", "h100-kvm-1gpu"])
def test_architecture_from_a_recorded_uname_a(node):
    # "... PREEMPT_DYNAMIC @0 x86_64 GNU/Linux" and "... @0 x86_64 x86_64 x86_64 GNU/Linux", as recorded.
    from hpcdoctor.parse.uname import machine_from_all

    assert machine_from_all((FIXTURES / "nodes" / node / "cmd" / "uname.txt").read_text()) == "x86_64"
    cpu = cpu_check.collect(ReplaySysRoot(FIXTURES / "nodes" / node), None)["cpu"]
    assert (cpu["arch"], cpu["arch_source"]) == ("x86_64", "uname -a")
