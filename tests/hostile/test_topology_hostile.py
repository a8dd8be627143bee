"""Bad topology input (constructed, as bad input is): masks that contradict the ids or each other,
missing files, NUL-terminated lists, garbage. The masks' answer or an Unknown with its reason;
never a traceback, never a count made up from CPUs / cores."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.checks import cpu as cpu_check, numa as numa_check
from hpcdoctor.facts import Unknown
from hpcdoctor.parse import cpuinfo as ci
from hpcdoctor.parse.cpulist import ListFormatError, parse_cpulist, parse_cpumask
from hpcdoctor.parse.topology import read_topology
from hpcdoctor.sysroot import ReplaySysRoot

T = "/sys/devices/system/cpu/cpu{}/topology/{}"


def _files(**per_cpu):
    """{path: text} from cpuN={name: text}."""
    return {T.format(cpu[3:], name): text for cpu, files in per_cpu.items() for name, text in files.items()}


def test_masks_win_over_ids_that_contradict_them():
    # Two threads of one core by the masks; ids that would say two cores in two packages.
    files = _files(cpu0={"core_cpus_list": "0-1\n", "package_cpus_list": "0-1\n", "core_id": "0\n",
                         "physical_package_id": "0\n"},
                   cpu1={"core_cpus_list": "0-1\n", "package_cpus_list": "0-1\n", "core_id": "7\n",
                         "physical_package_id": "3\n"})
    topo = read_topology(files, [0, 1])
    assert (topo["cores"], topo["sockets"], topo["threads_per_core"]) == (1, 1, 2)
    assert topo["topology_source"]["cores"] == "core_cpus_list"


def test_old_kernels_names_and_nul_terminated_lists():
    # thread_siblings_list / core_siblings_list as kernels before 5.x name them, ended "\n\0"
    # as kernels 2.6.23 to about 3.3 wrote them.
    files = _files(**{f"cpu{c}": {"thread_siblings_list": f"{c - c % 2}-{c - c % 2 + 1}\n\x00",
                                  "core_siblings_list": "0-3\n\x00"} for c in range(4)})
    topo = read_topology(files, [0, 1, 2, 3])
    assert (topo["cores"], topo["sockets"], topo["threads_per_core"]) == (2, 1, 2)
    assert parse_cpulist("0-7\n\x00") == list(range(8)) and parse_cpumask("ff\n\x00") == list(range(8))
    with pytest.raises(ListFormatError):
        parse_cpulist("0\x00-3")  # a NUL inside a list is garbage, not an ending


def test_masks_that_contradict_each_other_are_unknown_with_the_cpus_named():
    files = _files(cpu0={"core_cpus_list": "0-1"}, cpu1={"core_cpus_list": "1-2"}, cpu2={"core_cpus_list": "1-2"})
    topo = read_topology(files, [0, 1, 2])
    assert isinstance(topo["cores"], Unknown) and "contradict" in topo["cores"].reason
    assert "cpu0" in topo["cores"].reason and "cpu1" in topo["cores"].reason
    assert isinstance(topo["threads_per_core"], Unknown)


def test_a_mask_without_its_own_cpu_and_garbage_are_unknown():
    topo = read_topology(_files(cpu0={"core_cpus_list": "1"}, cpu1={"core_cpus_list": "1"}), [0, 1])
    assert isinstance(topo["cores"], Unknown) and "does not hold cpu0" in topo["cores"].reason
    topo = read_topology(_files(cpu0={"core_cpus_list": "0", "package_cpus_list": "zz\n"}), [0])
    assert topo["cores"] == 1
    assert isinstance(topo["sockets"], Unknown) and "cpu0/topology/package_cpus_list" in topo["sockets"].reason


def test_missing_masks_fall_back_to_ids_but_not_to_default_ids():
    ids = _files(cpu0={"physical_package_id": "0", "core_id": "0"}, cpu1={"physical_package_id": "0", "core_id": "0"},
                 cpu2={"physical_package_id": "1", "core_id": "0"}, cpu3={"physical_package_id": "1", "core_id": "0"})
    topo = read_topology(ids, [0, 1, 2, 3])
    assert (topo["cores"], topo["sockets"], topo["threads_per_core"]) == (2, 2, 2)
    # -1 is the kernel's "undefined" package id (Documentation/admin-guide/cputopology.rst).
    undefined = _files(cpu0={"physical_package_id": "-1", "core_id": "0"}, cpu1={"physical_package_id": "-1", "core_id": "0"})
    topo = read_topology(undefined, [0, 1])
    assert isinstance(topo["sockets"], Unknown) and "-1" in topo["sockets"].reason
    assert isinstance(topo["cores"], Unknown)
    topo = read_topology({}, [0, 1])
    assert isinstance(topo["cores"], Unknown) and "no sibling masks" in topo["cores"].reason
    partial = _files(cpu0={"core_cpus_list": "0"})
    assert isinstance(read_topology(partial, [0, 1])["cores"], Unknown)


def test_hybrid_threads_per_core_is_per_type_not_cpus_over_cores():
    # Two P-cores with two threads, four E-cores with one: 8 CPUs / 6 cores is not a thread count.
    cores = {0: "0-1", 1: "0-1", 2: "2-3", 3: "2-3", 4: "4", 5: "5", 6: "6", 7: "7"}
    files = _files(**{f"cpu{c}": {"core_cpus_list": v, "package_cpus_list": "0-7"} for c, v in cores.items()})
    files["/sys/devices/cpu_core/cpus"] = "0-3\n"
    files["/sys/devices/cpu_atom/cpus"] = "4-7\n"
    topo = read_topology(files, list(range(8)))
    assert topo["cores"] == 6 and topo["threads_per_core"] == 2
    kinds = {t["type"]: (t["cores"], t["threads_per_core"]) for t in topo["core_types"]}
    assert kinds == {"P-core": (2, 2), "E-core": (4, 1)}


@pytest.mark.parametrize("block, why", [
    ({"processor": "0", "Features": "half thumb fastmult vfp"}, "32- or 64-bit not said"),
    ({"processor": "0", "cpu": "POWER9 (raw), altivec supported", "revision": "2.2 (pvr 004e 1202)"}, "byte order"),
    ({"vendor_id": "IBM/S390", "features": "esan3 zarch"}, "s390x"),
    ({"processor": "0", "garbage": "\x1b[31m"}, "no known ISA"),
])
def test_architecture_is_unknown_where_cpuinfo_cannot_tell(block, why):
    arch, reason = ci.arch_of([block])
    assert arch is None and why in reason


def _snapshot(tmp_path: Path, files) -> Path:
    for path, text in files.items():
        dest = tmp_path / "fs" / path.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(text.encode() if isinstance(text, str) else text)
    return tmp_path


def test_hostile_snapshot_gives_masks_or_reasons_through_the_checks(tmp_path):
    files = _files(cpu0={"core_cpus_list": "0-1\n\x00", "package_cpus_list": "\xff\xfe garbage", "core_id": "0"},
                   cpu1={"core_cpus_list": "0-1\n\x00", "package_cpus_list": "0-1", "core_id": "9"})
    files.update({"/sys/devices/system/cpu/online": "0-1\n\x00", "/sys/devices/system/node/online": "0\n\x00",
                  "/sys/devices/system/node/node0/cpulist": "0-1\n\x00",
                  "/proc/cpuinfo": "processor\t: 0\nFeatures\t: fp asimd\n\nprocessor\t: 1\nFeatures\t: fp asimd\n"})
    root = ReplaySysRoot(_snapshot(tmp_path, files))
    cpu = cpu_check.collect(root, None)["cpu"]
    assert cpu["logical_cpus"] == 2 and cpu["cores"] == 1 and cpu["threads_per_core"] == 2
    assert isinstance(cpu["sockets"], Unknown) and "package_cpus_list" in cpu["sockets"].reason
    # A Features line alone is not aarch64.
    assert isinstance(cpu["arch"], Unknown)
    numa = numa_check.collect(root, None)["numa"]
    assert numa["count"] == 1 and numa["nodes"][0]["cpus"] == [0, 1]


def test_dump_without_cpuinfo_or_node_list_still_reads_sysfs(tmp_path):
    # lscpu's test dumps keep node*/cpumap and no node/online; hwloc's some keep no cpuinfo.
    files = _files(cpu0={"core_cpus_list": "0"}, cpu1={"core_cpus_list": "1"})
    files.update({"/sys/devices/system/node/node0/cpumap": "00000003\n"})
    root = ReplaySysRoot(_snapshot(tmp_path, files))
    cpu = cpu_check.collect(root, None)["cpu"]
    assert cpu["logical_cpus"] == 2 and cpu["cores"] == 2
    assert isinstance(cpu["model_name"], Unknown) and isinstance(cpu["sockets"], Unknown)
    numa = numa_check.collect(root, None)["numa"]
    assert [(n["id"], n["cpus"]) for n in numa["nodes"]] == [(0, [0, 1])]


def test_uname_garbage_is_not_an_architecture():
    from hpcdoctor.parse.uname import machine, machine_from_all

    assert machine("x86_64\n") == "x86_64"
    for text in ("", "\x1b[31mx86_64", "x" * 40, "x86_64; rm -rf /"):
        assert machine(text) is None
    for text in ("", "Linux", "Linux host 6.1 #1 SMP 2023 GNU/Linux", "Linux h 6.1 #1 x86_64 Darwin"):
        assert machine_from_all(text) is None


def test_offline_cpus_are_kept_apart_from_a_nodes_cpus(tmp_path):
    files = {"/sys/devices/system/cpu/online": "0-1,3\n", "/sys/devices/system/node/online": "0\n",
             "/sys/devices/system/node/node0/cpulist": "0-3\n"}
    numa = numa_check.collect(ReplaySysRoot(_snapshot(tmp_path, files)), None)["numa"]
    assert numa["nodes"][0]["cpus"] == [0, 1, 3] and numa["nodes"][0]["offline_cpus"] == [2]


def test_nodes_that_share_cpus_are_unknown_not_believed(tmp_path):
    files = {"/sys/devices/system/cpu/online": "0-3\n", "/sys/devices/system/node/online": "0-2\n",
             "/sys/devices/system/node/node0/cpulist": "0-3\n", "/sys/devices/system/node/node1/cpulist": "0-3\n",
             "/sys/devices/system/node/node2/cpulist": "\n"}
    nodes = numa_check.collect(ReplaySysRoot(_snapshot(tmp_path, files)), None)["numa"]["nodes"]
    assert isinstance(nodes[0]["cpus"], Unknown) and "nodes 0, 1 overlap" in nodes[0]["cpus"].reason
    assert isinstance(nodes[1]["cpus"], Unknown) and nodes[2]["cpus"] == []


def test_package_masks_that_overlap_are_unknown():
    # Packages are read once per group: a later CPU whose package overlaps an earlier one's.
    files = _files(cpu0={"core_cpus_list": "0", "package_cpus_list": "0-1"},
                   cpu1={"core_cpus_list": "1", "package_cpus_list": "0-1"},
                   cpu2={"core_cpus_list": "2", "package_cpus_list": "1-2"})
    topo = read_topology(files, [0, 1, 2])
    assert topo["cores"] == 3
    assert isinstance(topo["sockets"], Unknown) and "overlaps" in topo["sockets"].reason
