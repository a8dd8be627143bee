"""NCCL's "GPU Direct RDMA Disabled" lines (knowledge/messages/nccl.toml gdr-disabled and its
neighbours, issue 24): the InfiniBand transport's line feeds NET043 nccl-gdr-disabled, or SYS003
nccl-known-issue where NCCL's version is one that cannot see nvidia-peermem on a kernel 6.6+
(knowledge/nccl_known_issues.toml); GDR off by distance, and socket transports, stay silent."""

from __future__ import annotations

from pathlib import Path

from rulekit import facts, fired, message_ids, paste_facts, recorded_paste_facts, run_rule, told_facts, told_paste_facts
from hpcdoctor.triage.messages import find_messages

V = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_v"


def test_nccl_2_13_and_later_line_with_peermem_loaded_fires_gdr_disabled():
    g = recorded_paste_facts("nccl-1537-gdr-disabled-peermem-loaded-kernel-6-6.txt")
    found = fired("nccl-gdr-disabled", g)
    assert found and found[0].severity == "warning"
    assert "modprobe nvidia-peermem" in found[0].fix and "2.23.4" in found[0].message
    findings, _ = run_rule("nccl-known-issue", g)
    assert not findings  # no NCCL version named: the general rule answers


def test_the_no_module_suffix_of_nccl_2_5_to_2_12_fires_gdr_disabled():
    g = recorded_paste_facts("nccl-899-gdr-disabled-no-module.txt")
    found = fired("nccl-gdr-disabled", g)
    assert found and "found no peer-memory module" in found[0].message


def test_gdr_disabled_by_distance_is_read_but_not_fired():
    g = told_paste_facts("nccl-1151-gdr-disabled-by-distance-healthy.txt")
    assert "nccl:gdr-disabled-distance" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("nccl-gdr-disabled", g)
    assert not fired("nccl-known-issue", g)


def test_a_socket_transport_listing_its_nics_stays_silent():
    g = recorded_paste_facts("nccl-1519-fastsocket-gdr-disabled-healthy.txt")
    assert "nccl:gdr-disabled-other-net" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("nccl-gdr-disabled", g)


def test_every_release_wording_is_read_by_the_right_entry():
    # the emitters' format strings filled in (no public paste of the 2.3, 2.4 and 2.29 wordings found)
    assert "nccl:gdr-disabled" in message_ids("h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 0[0] / HCA 0 'mlx5_0' (no module or not supported by GPU)")
    assert "nccl:gdr-disabled" in message_ids("h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 0 / HCA mlx5_0 (no module)")
    assert "nccl:gdr-disabled" in message_ids("h:1:1 [0] NCCL INFO NET/IBext : GPU Direct RDMA Disabled for HCA 3 'mlx5_3'")
    for line in ("h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for GPU 0[0] / HCA 0 (distance 4 >= 2)",
                 "h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 1 / HCA 1b0000 (distance 6 > 4)",
                 "h:1:1 [0] NCCL INFO GPU Direct RDMA Disabled for GPU/0-110592 (rank 0) - NET/0-0 (distance 6 > 4)"):
        assert message_ids(line) & {"nccl:gdr-disabled-distance", "nccl:gdr-disabled"} == {"nccl:gdr-disabled-distance"}, line
    assert "nccl:gdr-disabled-other-net" in message_ids("h:1:1 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'")


def test_v_ticket_old_nccl_on_dgx_os_is_the_known_issue(tmp_path):
    text = (V / "nccl-1676-old-nccl-misses-nvidia-peermem.txt").read_text(encoding="utf-8")
    g = paste_facts(tmp_path, text)
    found = fired("nccl-known-issue", g)
    assert found and found[0].evidence["issue"] == "peermem-not-detected-kernel-6-6"
    assert "2.23.4" in found[0].fix
    assert not fired("nccl-gdr-disabled", g)  # one finding for one cause


def test_nccl_own_version_line_in_range_is_the_known_issue_and_a_newer_one_is_not():
    line = "h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
    g = told_facts("h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" + line)
    assert fired("nccl-known-issue", g)
    g = told_facts("h:1:1 [0] NCCL INFO NCCL version 2.27.6+cuda13.0\n" + line)
    assert not fired("nccl-known-issue", g)
    assert fired("nccl-gdr-disabled", g)


def test_torch_nccl_on_the_node_and_an_old_kernel():
    line = "h:1:1 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line), "torch.nccl": "2.21.5",
                                  "system.kernel": "6.8.0-90-generic"})
    assert fired("nccl-known-issue", g)
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line), "torch.nccl": "2.21.5",
                                  "system.kernel": "5.15.0-105-generic"})
    assert not fired("nccl-known-issue", g)  # memory_peers is still there: the module is simply not loaded
    assert fired("nccl-gdr-disabled", g)
