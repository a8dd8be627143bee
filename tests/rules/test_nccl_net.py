"""nccl-net-unavailable (rules/nccl_net.py): NCCL 2.28.9's "Failed to initialize any NET plugin" recorded on
an H100 with NCCL_NET=IB (fixtures/emitters_gpu), CSCS's recorded "Error: network AWS Libfabric not
found." (tests/fixtures/pastes/SOURCES.md), silence on the harmless "No plugin found" INFO, on a
socket-interface failure and on a healthy NCCL run, and the live NCCL_NET=IB without an RDMA device."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, with_env

ACTIVE_PORT = [{"device": "mlx5_0", "port": 1, "state": "ACTIVE", "phys_state": "LinkUp", "link_layer": "InfiniBand"}]


def test_no_net_plugin_recorded_on_an_h100():
    (f,) = fired("nccl-net-unavailable", recorded_paste_facts("../emitters_gpu/h100-nccl-net-ib-missing.txt"))
    assert f.severity == "error" and "Failed to initialize any NET plugin" in f.message
    assert "unset NCCL_NET NCCL_NET_PLUGIN" in f.fix and f.evidence["message"] == "nccl:net-plugin-none-initialized"


def test_older_wording_names_the_network():
    (f,) = fired("nccl-net-unavailable", recorded_paste_facts("cscs-docs-nccl-net-plugin-ofi-not-found.txt"))
    assert "the network 'AWS Libfabric' that NCCL_NET names" in f.message and f.evidence["message"] == "nccl:net-not-found"


@pytest.mark.parametrize("paste", ["nccl-1231-net-plugin-not-found-harmless-info.txt",
                                   "../emitters_gpu/h100-nccl-socket-ifname-missing.txt",
                                   "../emitters_gpu/h100-nccl-healthy-info.txt"])
def test_silent_on_the_harmless_plugin_info_and_other_nccl_output(paste):
    findings, _ = run_rule("nccl-net-unavailable", recorded_paste_facts(paste))  # the live half is skipped: no environment
    assert findings == []


def test_live_nccl_net_ib_without_an_rdma_device_is_an_error():
    (f,) = fired("nccl-net-unavailable", with_env("cpu-kvm-2core", {"NCCL_NET": "IB"}, **{"network.rdma_ports": []}))
    assert f.severity == "error" and "NCCL_NET=IB" in f.message and f.evidence["network.rdma_ports"] == []


@pytest.mark.parametrize("env, ports", [({"NCCL_NET": "IB"}, ACTIVE_PORT), ({"NCCL_NET": "Socket"}, []), ({}, [])])
def test_live_silent_with_an_rdma_device_or_another_network(env, ports):
    assert not fired("nccl-net-unavailable", with_env("cpu-kvm-2core", env, **{"network.rdma_ports": ports}))
