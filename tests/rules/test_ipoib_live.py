"""ipoib-interface-unconfigured (rules/rdma_setup.py) judged on a node's interfaces: the addresses
checks/network.py records (SIOCGIFADDR and /proc/net/if_inet6, the latter parsed from the development
VM's recording, tests/fixtures/pastes/SOURCES.md), the RDMA ports of a real public ibstat
(tests/fixtures/public/SOURCES.md), and unknown addresses skipped, never passed. No recording of an
InfiniBand node's /sys/class/net is in the fixtures, so the interface entries are the check's
shape with ARPHRD_INFINIBAND (32) as its type."""

from __future__ import annotations

import pytest

from conftest import PUBLIC
from rulekit import PASTES, facts, fired, run_rule
from hpcdoctor.checks.network import parse_if_inet6
from hpcdoctor.parse import rdma

V6 = parse_if_inet6((PASTES / "if-inet6-debian12-vm.txt").read_text())
LINK_ONLY = [a for a in V6["eth0"] if a["scope"] == "link"]
PORTS = rdma.parse_ibstat((PUBLIC / "net" / "gpud_ibstat_h100_node_CX7_NDR400_IB_some_eth_down.txt").read_text())


def test_if_inet6_recording_parses_with_scopes():
    assert V6["lo"] == [{"address": "::1", "scope": "host"}]
    assert V6["eth0"] == [{"address": "fd00::2", "scope": "global"}, {"address": "fe80::fc:ff:fe00:1", "scope": "link"}]


def test_if_inet6_garbage_lines_are_dropped():
    assert parse_if_inet6("garbage\n" + "zz" * 16 + " 04 40 00 82 eth0\n") == {}


def _node(ib0, ports=PORTS):
    eth0 = {"name": "eth0", "operstate": "up", "speed_mbps": None, "type": "1", "ipv4": ["192.0.2.2"], "ipv6": V6["eth0"]}
    return facts("cpu-kvm-2core", **{"network.interfaces": [eth0, dict({"name": "ib0", "speed_mbps": None, "type": "32"}, **ib0)],
                                     "network.rdma_ports": ports})


def test_up_ib_interface_with_link_local_only_is_a_warning():
    (f,) = fired("ipoib-interface-unconfigured", _node({"operstate": "up", "ipv4": [], "ipv6": LINK_ONLY}))
    assert f.severity == "warning" and "ib0" in f.message and "eth0" not in f.message
    assert "ip -br addr show type ipoib" in f.fix and f.evidence["interfaces"][0]["name"] == "ib0"


@pytest.mark.parametrize("ib0", [
    {"operstate": "up", "ipv4": ["192.0.2.2"], "ipv6": LINK_ONLY},          # addressed
    {"operstate": "up", "ipv4": [], "ipv6": V6["eth0"]},                    # a global IPv6 address
    {"operstate": "down", "ipv4": [], "ipv6": []},                          # not up: the port's state is another rule's
])
def test_addressed_or_down_ib_interface_says_nothing(ib0):
    findings, skipped = run_rule("ipoib-interface-unconfigured", _node(ib0))
    assert findings == [] and not skipped


def test_no_rdma_device_says_nothing():
    assert not fired("ipoib-interface-unconfigured", _node({"operstate": "up", "ipv4": [], "ipv6": []}, ports=[]))


def test_unknown_addresses_are_skipped_not_passed():
    g = _node({"operstate": "up", "ipv4": None, "ipv6": []})
    g["unknown"]["network.interfaces.1.ipv4"] = "IPv4 addresses not read: probe ipv4_addresses was not recorded"
    findings, skipped = run_rule("ipoib-interface-unconfigured", g)
    assert findings == [] and skipped and "ipv4_addresses" in str(skipped)
