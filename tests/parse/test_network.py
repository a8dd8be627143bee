"""Network facts from real ibstat/ibstatus/fi_info outputs, and the network rules."""

from __future__ import annotations

from conftest import PUBLIC
from rulekit import facts, fired, with_recorded
from hpcdoctor.parse import rdma

NET = PUBLIC / "net"
H100 = "h100-kvm-1gpu"


def test_ibstat_all_active_roce():
    ports = rdma.parse_ibstat((NET / "gpud_ibstat_h100_node_8xCX7_400G_eth_all_active.txt").read_text())
    assert len(ports) == 12 and all(p["state"] == "ACTIVE" for p in ports)
    assert {p["link_layer"] for p in ports} == {"Ethernet"}
    assert sorted({p["rate_gbps"] for p in ports}) == [100, 400]


def test_ibstat_ports_down():
    ports = rdma.parse_ibstat((NET / "gpud_ibstat_h100_node_CX7_400G_eth_2_down.txt").read_text())
    down = sorted(p["device"] for p in ports if p["state"] != "ACTIVE")
    assert down == ["mlx5_11", "mlx5_5"]


def test_ibstat_cut_by_ibpanic_keeps_what_was_printed():
    ports = rdma.parse_ibstat((NET / "gpud_ibstat_azure_a100_CX6VF_HDR200_ibpanic_exit255.txt").read_text())
    assert ports and all(p["link_layer"] == "InfiniBand" for p in ports)


def test_ibstatus():
    ports = rdma.parse_ibstatus((NET / "gpud_ibstatus_azure_a100_HDR200.txt").read_text())
    assert ports[0] == {"device": "mlx5_0", "port": 1, "state": "ACTIVE", "phys_state": "LINKUP",
                        "rate_gbps": 200.0, "link_layer": "InfiniBand"}


def test_fi_info_cxi():
    for name in ("hpe_shs_fi_info_p_cxi_1nic.txt", "cscs_alps_fi_info_p_cxi_summary.txt"):
        (b,) = rdma.parse_fi_info((NET / name).read_text())
        assert b["provider"] == "cxi" and b["domain"] == "cxi0"


def _job(g, nodes=2, **env):
    g["facts"]["scheduler"].update({"kind": "slurm", "in_job": True, "nodes": nodes})
    g["facts"]["env"]["vars"].update(env)
    return g


def test_no_rdma_multinode_on_the_recorded_h100():
    (f,) = fired("no-rdma-multinode", _job(facts(H100)))
    assert "TCP sockets" in f.message
    assert not fired("no-rdma-multinode", _job(facts(H100), nodes=1))


def test_rdma_present_is_fine(tmp_path):
    g = with_recorded(facts(H100), tmp_path, {("ibstat",): (NET / "gpud_ibstat_h100_node_8xCX7_400G_eth_all_active.txt").read_text()})
    assert not fired("no-rdma-multinode", _job(g))
    assert not fired("rdma-port-down", g)


def test_rdma_port_down(tmp_path):
    g = with_recorded(facts(H100), tmp_path, {("ibstat",): (NET / "gpud_ibstat_h100_node_CX7_400G_eth_2_down.txt").read_text()})
    (f,) = fired("rdma-port-down", g)
    assert "mlx5_11" in f.message and "mlx5_5" in f.message and "NCCL_IB_HCA=^" in f.fix


def _ifaces(g, *names_up, down=()):
    g["facts"]["network"]["interfaces"] = [{"name": n, "operstate": "up"} for n in names_up] + \
                                          [{"name": n, "operstate": "down"} for n in down]
    g["unknown"].pop("network.interfaces", None)
    return g


def test_socket_ifname_wrong_and_right():
    g = _ifaces(facts(H100), "eth0", "ib0", down=("eth1",))
    g["facts"]["env"]["vars"]["NCCL_SOCKET_IFNAME"] = "hsn"
    (f,) = fired("nccl-socket-ifname", g)
    assert "matches no interface" in f.message
    g["facts"]["env"]["vars"]["NCCL_SOCKET_IFNAME"] = "eth1"
    assert fired("nccl-socket-ifname", g)  # down
    for good in ("ib", "=ib0", "^docker", "eth0,ib0"):
        g["facts"]["env"]["vars"]["NCCL_SOCKET_IFNAME"] = good
        assert not fired("nccl-socket-ifname", g), good


def test_socket_ifname_unset_with_several_interfaces_multinode():
    g = _job(_ifaces(facts(H100), "eth0", "ib0", "docker0"))
    (f,) = fired("nccl-socket-ifname", g)
    assert f.severity == "advice" and "ib0" in f.fix
    assert not fired("nccl-socket-ifname", _job(_ifaces(facts(H100), "eth0", "docker0")))


def test_slingshot_without_plugin(tmp_path):
    g = with_recorded(facts(H100), tmp_path, {("fi_info", "-p", "cxi"): (NET / "hpe_shs_fi_info_p_cxi_1nic.txt").read_text()})
    (f,) = fired("slingshot-ofi", g)
    assert "cxi0" in f.message and "FI_PROVIDER=cxi" in f.fix
    g["facts"]["network"]["nccl_net_plugin"] = "/opt/aws-ofi-nccl/lib/libnccl-net.so"
    assert not fired("slingshot-ofi", g)
    g["facts"]["env"]["vars"]["FI_PROVIDER"] = "tcp"
    assert fired("slingshot-ofi", g)
