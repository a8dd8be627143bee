"""network-interface-missing-on-node (rules/net_interfaces.py) and dask's IPoIB case of
ipoib-interface-unconfigured (rules/rdma_setup.py), on public pastes (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts


@pytest.mark.parametrize("paste, name", [("megatron-lm-436-gloo-no-address-for-bond1.txt", "bond1"),
                                         ("horovod-1341-gloo-no-address-for-eth0.txt", "eth0")])
def test_gloo_naming_an_interface_the_node_lacks_is_an_error(paste, name):
    (f,) = fired("network-interface-missing-on-node", recorded_paste_facts(paste))
    assert f.severity == "error" and f"interface {name}, which this node does not have" in f.message
    assert "GLOO_SOCKET_IFNAME" in f.fix and "ip -br -4 addr" in f.fix


def test_gloo_failing_to_resolve_a_host_name_is_not_an_interface():
    # lookupAddrForHostname's "rp != nullptr. Unable to find address for: dgx-1.ai": a name, not GLOO_SOCKET_IFNAME
    assert not fired("network-interface-missing-on-node", recorded_paste_facts("pipedream-32-gloo-hostname-not-resolved.txt"))


def test_dask_ib0_without_ipv4_is_ipoib_unconfigured():
    (f,) = fired("ipoib-interface-unconfigured", recorded_paste_facts("dask-cuda-144-ib0-without-ipv4.txt"))
    assert f.severity == "error" and "dask was told to use ib0" in f.message and "IPv4" in f.message
    assert not fired("network-interface-missing-on-node", recorded_paste_facts("dask-cuda-144-ib0-without-ipv4.txt"))


def test_dask_listing_the_interfaces_it_has():
    # distributed/utils.py get_ip_interface's ValueError (its format, with the interfaces a login node had in dask-jobqueue#382)
    text = "ValueError: 'ib0' is not a valid network interface. Valid network interfaces are: ['lo', 'ib1', 'eth0', 'eth1']\n"
    (f,) = fired("network-interface-missing-on-node", told_facts(text))
    assert "interface ib0" in f.message and "'ib1', 'eth0'" in f.message and "scheduler_options" in f.fix


def test_dask_on_a_real_node_without_ib0_names_the_interfaces_it_has():
    # dask-cuda#394: LocalCUDACluster(interface='ib0') on a node with team0/1, virbr0, docker0 and enp*
    (f,) = fired("network-interface-missing-on-node", recorded_paste_facts("dask-cuda-394-ib0-not-a-valid-interface.txt"))
    assert f.severity == "error" and "dask was told to use interface ib0" in f.message
    assert "'team1', 'team0'" in f.message and "'virbr0-nic'" in f.message
    assert "ip -br addr" in f.fix


def test_open_mpi_ignoring_an_unknown_include_interface_is_a_warning():
    # help-mpi-btl-tcp.txt [invalid if_inexclude] as printed on a DGX A100 with btl_tcp_if_include=enp225s0f1
    text = ("WARNING: An invalid value was given for btl_tcp_if_include.  This\nvalue will be ignored.\n\n"
            "  Local host: bcm-dgxa100-0010\n  Value:      enp225s0f1\n  Message:    Unknown interface name\n")
    (f,) = fired("network-interface-missing-on-node", told_facts(text))
    assert f.severity == "warning" and "enp225s0f1" in f.message and "btl_tcp_if_include" in f.fix


def test_open_mpi_finding_no_interface_in_an_include_subnet_is_not_a_missing_interface():
    # ompi#11789: the same [invalid if_inexclude] warning with a CIDR value and "Did not find interface
    # matching this subnet", which the catalogue leaves out (exclude lists print it harmlessly too)
    assert not fired("network-interface-missing-on-node",
                     recorded_paste_facts("ompi-11789-btl-tcp-if-include-subnet-not-found.txt"))


def test_open_mpi_runtime_finding_none_of_its_include_networks_is_a_warning():
    # help-oob-tcp.txt [no-included-found] (Open MPI 4.1.8, PRRTE 3.0.13) as show_help prints it, the
    # "Value given" filled in with eth0 (the emitter's own format; no public issue paste recorded)
    text = ("--------------------------------------------------------------------------\n"
            "None of the TCP networks specified to be included for out-of-band communications\n"
            "could be found:\n\n  Value given: eth0\n\nPlease revise the specification and try again.\n"
            "--------------------------------------------------------------------------\n")
    (f,) = fired("network-interface-missing-on-node", told_facts(text))
    assert f.severity == "warning" and "network(s) eth0" in f.message and "out-of-band" in f.message
    assert "oob_tcp_if_include 10.0.0.0/8" in f.fix and "ip -br addr" in f.fix


def test_open_mpi_runtime_excluding_every_network_is_not_a_missing_interface():
    # [excluded-all]: an exclude list that left nothing is another mistake, not a name the node lacks
    text = ("The specified list of networks to be excluded for TCP out-of-band communications\n"
            "resulted in no networks being available:\n\n  Value given: eth0,lo\n")
    assert not fired("network-interface-missing-on-node", told_facts(text))
