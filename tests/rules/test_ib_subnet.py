"""ib-subnet-manager-missing (rules/ib_subnet.py): an InfiniBand port in state Init with its link up,
and infiniband-diags finding no SM; silent on a port that is down for another reason."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts

# ibstat.c's printf format (rdma-core 691953d8: "%sState: %s", port_state_str[2] "Initializing",
# port_phy_state_str[5] "LinkUp"); no public paste of a port waiting in Init was found (issue 24 report)
_IBSTAT_INIT = ("CA 'mlx5_0'\n\tCA type: MT4119\n\tNumber of ports: 1\n\tPort 1:\n\t\tState: Initializing\n"
                "\t\tPhysical state: LinkUp\n\t\tRate: 100\n\t\tBase lid: 65535\n\t\tLMC: 0\n\t\tSM lid: 0\n"
                "\t\tLink layer: InfiniBand\n")


def test_a_trained_port_left_in_init_waits_for_a_subnet_manager(tmp_path):
    (f,) = fired("ib-subnet-manager-missing", paste_facts(tmp_path, _IBSTAT_INIT))
    assert f.severity == "error" and "mlx5_0:1" in f.message and "subnet manager" in f.message
    assert "sminfo" in f.fix and "opensm" in f.fix


def test_sminfo_finding_no_sm():
    # sminfo.c IBEXIT("can't resolve sm port %s") through ibdiag_common.c ibexit's "%s: iberror: failed: %s"
    (f,) = fired("ib-subnet-manager-missing", told_facts("sminfo: iberror: failed: can't resolve sm port (null)\n"))
    assert f.severity == "error" and "no subnet manager answers" in f.message


def test_a_port_disabled_locally_is_not_a_missing_sm():
    # rdma-core#847: State Down / Physical state Disabled, SM lid 13 (rdma-port-down's, not this)
    assert not fired("ib-subnet-manager-missing", recorded_paste_facts("rdma-core-847-ibstat-port-locally-disabled.txt"))


def test_a_real_port_left_in_init_inside_a_pod():
    # Mellanox/network-operator#1646: ibv_devinfo in a pod, port 1 PORT_INIT (2) while an SM (lid 4)
    # runs: the port was not brought to Active (the message names SR-IOV's virtualization setting)
    (f,) = fired("ib-subnet-manager-missing", recorded_paste_facts("network-operator-1646-ibv-devinfo-port-init-in-pod.txt"))
    assert "mlx5_7:1" in f.message and "virtualization" in f.message


def test_saquery_never_prints_the_device():
    # infiniband-diags/ibdiag_sa.c passes `ibd_ca ? "" : ibd_ca` for %s: "" where -C named a CA,
    # "(null)" (glibc) where none did; both forms are its refusal (the format string, filled in).
    from hpcdoctor.triage.messages import find_messages
    for line, device in (("ibwarn: [99] sa_get_handle: No SM/SA found on port :1", ""),
                         ("ibwarn: [4321] sa_get_handle: No SM/SA found on port (null):0", "(null)")):
        (s,) = [s for s in find_messages(line + "\n") if s["id"] == "ib_subnet:sa-no-sm-found"]
        assert s["device"] == device
