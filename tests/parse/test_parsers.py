"""Pure parsers, on recorded real output."""

from __future__ import annotations

import pytest

from conftest import NODES, PUBLIC
from hpcdoctor.envfilter import REDACTED, parse_env_output, relevant
from hpcdoctor.parse.cpuinfo import infer_arch, parse_cpuinfo, processors
from hpcdoctor.parse.cpulist import ListFormatError, format_cpulist, parse_cpulist, parse_cpumask
from hpcdoctor.parse.kv import bracketed_choice, parse_meminfo
from hpcdoctor.parse.lscpu import parse_lscpu
from hpcdoctor.parse.numactl import parse_numactl_h


def test_cpulist_forms():
    assert parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert parse_cpulist("0-7:2") == [0, 2, 4, 6]
    assert parse_cpulist("") == []
    assert format_cpulist([0, 1, 2, 3, 8, 10, 11]) == "0-3,8,10-11"
    for bad in ("a-b", "3-1", "1,,x", "0-7:0"):
        with pytest.raises(ListFormatError):
            parse_cpulist(bad)


def test_cpumask():
    assert parse_cpumask("00000000,0000000f") == [0, 1, 2, 3]
    assert parse_cpumask("1,00000001") == [0, 32]
    with pytest.raises(ListFormatError):
        parse_cpumask("zz")


def test_numactl_nps4_host():
    text = (PUBLIC / "cpu_numa" / "cscs_alps_eiger_numactl_H_epyc7742_nps4.txt").read_text()
    parsed = parse_numactl_h(text)
    assert sorted(parsed["nodes"]) == list(range(8))
    assert sum(len(n["cpus"]) for n in parsed["nodes"].values()) == 256
    assert parsed["nodes"][0]["size_bytes"] == 63733 * 1024 * 1024
    assert parsed["distances"][0][0] == 10 and set(parsed["distances"][0].values()) == {10, 12, 32}


def test_numactl_h100_node_quirk():
    parsed = parse_numactl_h((NODES / "h100-kvm-1gpu" / "cmd" / "numactl_H.txt").read_text())
    assert parsed["nodes"][0]["cpus"] == list(range(16))
    assert parsed["distances"] == {0: {0: 10}}


def test_meminfo_units():
    info = parse_meminfo((NODES / "h100-kvm-1gpu" / "fs" / "proc" / "meminfo").read_text())
    assert info["MemTotal"] == 135148564480
    assert isinstance(info["HugePages_Total"], int) and info["HugePages_Total"] < 1 << 20


def test_thp_choice():
    assert bracketed_choice("always [madvise] never\n") == "madvise"
    assert bracketed_choice((NODES / "cpu-kvm-2core" / "fs/sys/kernel/mm/transparent_hugepage/enabled").read_text()) == "madvise"


def test_lscpu_grace():
    fields = parse_lscpu((PUBLIC / "cpu_numa" / "nvidia_gracehopper_lscpu.txt").read_text())
    assert fields["Architecture"] == "aarch64"
    assert fields["Core(s) per socket"] == "72"


def test_cpuinfo_many_processors():
    blocks = parse_cpuinfo((PUBLIC / "cpu_numa" / "perfstudy_azure_hbv3_2xEPYC7V73X_proc_cpuinfo.txt").read_text())
    assert len(processors(blocks)) == 96
    assert infer_arch(blocks) == "x86_64"


def test_env_output_and_secrets():
    env = parse_env_output("A=1\nMULTI=x\ny\nOMP_NUM_THREADS=4\n")
    assert env["MULTI"] == "x\ny"
    kept = relevant({
        "OMP_NUM_THREADS": "4", "HF_TOKEN": "hf_abc", "AWS_SECRET_ACCESS_KEY": "s3cr3t", "EDITOR": "vim",
        "MASTER_ADDR": "https://bob:hunter2@node1", "NCCL_IB_PKEY": "0x8001", "SLURM_JOB_ID": "7",
    })
    assert kept["OMP_NUM_THREADS"] == "4"
    assert "EDITOR" not in kept
    assert "hunter2" not in kept["MASTER_ADDR"] and "bob" not in kept["MASTER_ADDR"]
    assert kept["NCCL_IB_PKEY"] == "0x8001"
    assert all(v != "s3cr3t" and v != "hf_abc" for v in kept.values())
    assert kept.get("HF_TOKEN", REDACTED) == REDACTED
