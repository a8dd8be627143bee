"""Replays of every recorded machine, asserted against what is true of those machines."""

from __future__ import annotations

import json

import pytest

from conftest import CPUINFO, NODES, report_of
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot

# What is true of each archspec capture: ISA family, archspec target, and the bf16-relevant flags.
CPU_TRUTH = {
    "linux-ubuntu22.04-neoverse_v2": dict(arch="aarch64", micro="neoverse_v2", sve=True, sve2=True, bf16=True,
                                          svebf16=True, i8mm=True),
    "linux-rocky8-a64fx": dict(arch="aarch64", micro="a64fx", sve=True, sve2=False, bf16=False),
    "linux-amazon-neoverse_n1": dict(arch="aarch64", micro="neoverse_n1", sve=False, bf16=False),
    "linux-centos7-thunderx2": dict(arch="aarch64", micro="thunderx2", sve=False, bf16=False),
    "linux-rocky8.5-zen4": dict(arch="x86_64", micro="zen4", avx512_bf16=True, amx_bf16=False, bf16=True,
                                avx512f=True),
    "linux-unknown-sapphirerapids": dict(arch="x86_64", micro="sapphirerapids", amx_bf16=True, amx_int8=True,
                                         avx512_fp16=True, bf16=True),
    "linux-rhel7-skylake_avx512": dict(arch="x86_64", micro="skylake_avx512", avx512f=True, avx512_bf16=False,
                                       amx_bf16=False, bf16=False),
    "linux-rhel7-broadwell": dict(arch="x86_64", micro="broadwell", avx2=True, avx512f=False, bf16=False),
    # A POWER cpuinfo does not say the byte order (ppc64 or ppc64le): Unknown, not a guess.
    "linux-rhel8-power9": dict(arch=None, micro=None, bf16=False),
    "linux-ubuntu20.04-zen3": dict(arch="x86_64", micro="zen3", avx2=True, avx512f=False, bf16=False),
    "linux-centos7-cascadelake": dict(arch="x86_64", micro="cascadelake", avx512f=True, avx512_vnni=True,
                                      avx512_bf16=False, bf16=False),
}


def test_every_cpuinfo_capture_has_a_truth_row():
    assert sorted(p.name for p in CPUINFO.iterdir()) == sorted(CPU_TRUTH)


@pytest.mark.parametrize("name", sorted(CPU_TRUTH))
def test_cpuinfo_replay(name, cpuinfo_snapshot):
    truth = CPU_TRUTH[name]
    doc = pipeline.gather(ReplaySysRoot(cpuinfo_snapshot(name)), Options())
    cpu = doc["facts"]["cpu"]
    assert doc["checks"]["cpu"]["status"] == "ok"
    assert cpu["arch"] == truth["arch"]
    assert cpu["microarch"] == truth["micro"]
    if truth["arch"] is None:
        assert "byte order" in doc["unknown"]["cpu.arch"]
    caps = cpu["capabilities"]
    for cap, expected in truth.items():
        if cap not in ("arch", "micro"):
            assert caps.get(cap, False) is expected, f"{name}: {cap}"
    assert cpu["flags"] == sorted(cpu["flags"])
    # POWER's cpuinfo has no flag list at all; every other ISA's does.
    assert bool(cpu["flags"]) is ("power" not in name)


def test_power9_has_none_of_the_ai_features(cpuinfo_snapshot):
    caps = pipeline.gather(ReplaySysRoot(cpuinfo_snapshot("linux-rhel8-power9")), Options())["facts"]["cpu"]["capabilities"]
    assert not any(caps.values())


def test_arm_model_name_comes_from_the_cpu_part(cpuinfo_snapshot):
    cpu = pipeline.gather(ReplaySysRoot(cpuinfo_snapshot("linux-ubuntu22.04-neoverse_v2")), Options())["facts"]["cpu"]
    # lscpu's name for implementer 0x41 part 0xd4f, not a name made from archspec's target.
    assert cpu["model_name"] == "Neoverse-V2"
    assert cpu["vendor"] == "ARM"


def _ref(node):
    return json.loads((NODES / node / "reference.json").read_text())


def test_h100_node_host_facts_match_live_reference():
    ref = _ref("h100-kvm-1gpu")
    doc = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"))
    f = doc["facts"]
    assert f["cpu"]["arch"] == "x86_64"
    assert f["cpu"]["logical_cpus"] == ref["psutil"]["cpu_count_logical"] == 16
    assert f["cpu"]["cores"] == ref["psutil"]["cpu_count_physical"]
    assert f["cpu"]["capabilities"]["amx_bf16"] is True
    assert f["affinity"]["allowed_cpus"] == ref["affinity"]
    # MemTotal is what psutil reports; numactl's 4443 MB on node 0 is a quirk of that VM.
    assert f["memory"]["total_bytes"] == ref["psutil"]["mem_total"]
    assert f["numa"]["count"] == 1
    assert f["numa"]["nodes"][0]["cpus"] == list(range(16))
    assert f["memory"]["thp_enabled"] == "madvise"
    assert f["env"]["vars"]["CUDA_VERSION"] == "13.0.2"
    assert f["scheduler"]["in_job"] is False


def test_cpu_node_facts_match_live_reference():
    ref = _ref("cpu-kvm-2core")
    doc = report_of("check", "--from", str(NODES / "cpu-kvm-2core"))
    f = doc["facts"]
    assert f["cpu"]["logical_cpus"] == ref["cpu_count"] == 2
    assert f["cpu"]["capabilities"]["bf16"] is True
    assert f["env"]["vars"] == {}
    # Nothing about the process's affinity was recorded there: Unknown, with a reason.
    assert f["affinity"]["allowed_cpus"] is None
    assert "affinity.allowed_cpus" in doc["unknown"]


@pytest.mark.parametrize("node", sorted(p.name for p in NODES.iterdir()))
def test_every_node_fixture_replays_without_errors(node):
    doc = report_of("check", "--from", str(NODES / node))
    bad = {k: v for k, v in doc["checks"].items() if v["status"] == "error"}
    assert not bad
    assert doc["source"] == {"mode": "replay", "path": str(NODES / node)}
