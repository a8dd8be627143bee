"""What the CPU is, from real captures: wrapped lscpu flags read whole, the model number where a
hypervisor masks flags, and a VM said to be one."""

from __future__ import annotations

from conftest import CPUINFO, PUBLIC, report_of
from hpcdoctor.knowledge import microarch
from hpcdoctor.parse import cpuinfo as ci
from hpcdoctor.parse.lscpu import parse_lscpu
from hpcdoctor.report.summary import node_lines

GRACE_LSCPU = PUBLIC / "cpu_numa" / "nvidia_gracehopper_lscpu.txt"


def _cpu_line(doc):
    return dict(node_lines(doc))["CPU"]


def test_wrapped_lscpu_flags_are_read_whole():
    flags = parse_lscpu(GRACE_LSCPU.read_text())["Flags"].split()
    assert "svebitperm" in flags  # cut as "svebitpe" / "rm" by lscpu's wrapping
    assert {"bf16", "i8mm", "svebf16", "bti"} <= set(flags)


def test_grace_from_lscpu_has_bf16_and_a_real_cpu_line():
    doc = report_of("check", "--from", str(GRACE_LSCPU), "--fail-on", "never")
    caps = doc["facts"]["cpu"]["capabilities"]
    assert caps["bf16"] is True and caps["i8mm"] is True and caps["svebf16"] is True
    line = _cpu_line(doc)
    assert "(aarch64, aarch64)" not in line and "neoverse_v2" in line


def test_epyc_7r13_and_7v73x_are_zen3_and_vms():
    for name in ("perfstudy_aws_hpc6a_2xEPYC7R13_lscpu.txt", "perfstudy_azure_hbv3_2xEPYC7V73X_lscpu.txt",
                 "perfstudy_azure_hbv3_2xEPYC7V73X_proc_cpuinfo.txt"):
        doc = report_of("check", "--from", str(PUBLIC / "cpu_numa" / name), "--fail-on", "never")
        cpu = doc["facts"]["cpu"]
        assert cpu["microarch"] == "zen3", name
        assert cpu["hypervisor"] is True
        assert "VM" in _cpu_line(doc) and "hidden by the hypervisor" in _cpu_line(doc)


def test_bare_metal_sapphire_rapids_needs_no_note():
    doc = report_of("check", "--from", str(CPUINFO / "linux-unknown-sapphirerapids"), "--fail-on", "never")
    assert doc["facts"]["cpu"]["microarch"] == "sapphirerapids"
    assert "microarch_note" not in doc["facts"]["cpu"] and "VM" not in _cpu_line(doc)


def test_model_number_beats_flags_a_hypervisor_masked():
    # The real 8480+ capture's flags without AMX, as a hypervisor that hides AMX presents them.
    block = ci.processors(ci.parse_cpuinfo((CPUINFO / "linux-unknown-sapphirerapids").read_text()))[0]
    flags = [x for x in ci.flags(block) if not x.startswith("amx")] + ["hypervisor"]
    by_flags = microarch.detect("x86_64", block, flags)["name"]
    assert by_flags != "sapphirerapids"
    by_model = microarch.from_model("GenuineIntel", int(block["cpu family"]), int(block["model"]))
    assert microarch.reconcile("x86_64", by_flags, by_model, flags, True) == \
        ("sapphirerapids", "AMX hidden by the hypervisor")
