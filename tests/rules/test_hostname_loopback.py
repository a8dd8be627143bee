"""hostname-resolves-to-loopback: /etc/hosts mapping the node's name to 127.0.1.1 (read on the node),
and torch's Gloo loopback fallback in a real public paste (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from pathlib import Path

from rulekit import file_facts, facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

# The development VM's own /etc/hosts (recorded, tests/fixtures/etc_hosts): its name vm is 127.0.0.1.
DEVVM = (Path(__file__).resolve().parents[1] / "fixtures" / "etc_hosts" / "devvm-hosts.txt").read_text()
# The layout Debian's installer writes (Debian Reference 5.1.1: "127.0.1.1 <host_name>.<domain_name> <host_name>")
DEBIAN_HOSTS = ("127.0.0.1\tlocalhost\n127.0.1.1\tgpu017.cluster.example\tgpu017\n\n"
                "# The following lines are desirable for IPv6 capable hosts\n::1     localhost ip6-localhost ip6-loopback\n"
                "ff02::1 ip6-allnodes\nff02::2 ip6-allrouters\n")


def _node(tmp_path, hosts, env=None, name="gpu017"):
    g = file_facts(tmp_path, {"/etc/hosts": hosts, "/proc/sys/kernel/hostname": name + "\n"})
    if env:
        g["facts"].setdefault("scheduler", {}).update(env)
        g["unknown"].pop("scheduler.nodes", None)
    return g


def test_the_recorded_vms_name_on_127_0_0_1_is_read(tmp_path):
    g = _node(tmp_path, DEVVM, name="vm")
    assert g["facts"]["system"]["hostname_addresses"] == ["127.0.0.1"]
    (f,) = fired("hostname-resolves-to-loopback", g)
    assert "maps this node's name vm to 127.0.0.1 only" in f.message


def test_debians_127_0_1_1_is_read_and_is_info_on_one_node(tmp_path):
    g = _node(tmp_path, DEBIAN_HOSTS)
    assert g["facts"]["system"]["hostname_addresses"] == ["127.0.1.1"]
    (f,) = fired("hostname-resolves-to-loopback", g)
    assert f.severity == "info" and "maps this node's name gpu017 to 127.0.1.1 only" in f.message
    assert f.fix.startswith('getent hosts "$(hostname)"') and "GLOO_SOCKET_IFNAME=" in f.fix


def test_inside_a_one_node_job_it_is_silent(tmp_path):
    g = _node(tmp_path, DEBIAN_HOSTS, {"kind": "slurm", "in_job": True, "nodes": 1})
    assert not fired("hostname-resolves-to-loopback", g)


def test_in_a_multi_node_job_it_is_a_warning(tmp_path):
    g = _node(tmp_path, DEBIAN_HOSTS, {"kind": "slurm", "in_job": True, "nodes": 2})
    (f,) = fired("hostname-resolves-to-loopback", g)
    assert f.severity == "warning" and "(this job spans 2 nodes)" in f.message


def test_a_name_mapped_to_the_nodes_address_is_silent(tmp_path):
    hosts = DEBIAN_HOSTS.replace("127.0.1.1\tgpu017.cluster.example\tgpu017", "10.1.0.17\tgpu017.cluster.example\tgpu017")
    g = _node(tmp_path, hosts)
    assert g["facts"]["system"]["hostname_addresses"] == ["10.1.0.17"]
    assert not fired("hostname-resolves-to-loopback", g)


def test_a_recorded_node_without_etc_hosts_is_unknown_and_silent():
    assert not fired("hostname-resolves-to-loopback", facts("h100-kvm-1gpu"))


def test_glooss_loopback_fallback_beside_a_failed_mesh_is_a_warning():
    (f,) = fired("hostname-resolves-to-loopback", recorded_paste_facts("vllm-7074-gloo-loopback-fallback-two-nodes.txt"))
    assert f.severity == "warning" and "its full mesh then failed" in f.message


def test_glooss_loopback_fallback_alone_is_info():
    # torch 2.13.0 libtorch_cpu.so's strings, with c10's warning prefix
    text = ("[W ProcessGroupGloo.cpp:684] Warning: Unable to resolve hostname to a (local) address. Using the loopback "
            "address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. (function operator())\n")
    (f,) = fired("hostname-resolves-to-loopback", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "info" and "harmless on one node" in f.message


def test_glooss_connect_to_127_0_1_1_is_a_peer_advertising_its_host_names_loopback():
    # gloo/transport/tcp/pair.cc: "connect " + peer + ": " + strerror(SO_ERROR)
    (f,) = fired("hostname-resolves-to-loopback", recorded_paste_facts("pytorch-15592-gloo-connect-loopback-refused.txt"))
    assert f.severity == "warning" and "127.0.1.1:3210" in f.message and "line 8" in f.message
    assert "GLOO_SOCKET_IFNAME" in f.fix


def test_a_gloo_peer_that_exited_on_one_node_is_not_the_host_name():
    # "Connection closed by peer [127.0.0.1]" is a crashed rank, not an advertised loopback address
    assert not fired("hostname-resolves-to-loopback", recorded_paste_facts("torch-2.13-gloo-peer-exited.txt"))
