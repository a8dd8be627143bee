"""InfiniBand ports that no subnet manager has brought up: a trained link left in logical state
Init, and the diagnostics that find no SM (knowledge/messages/ib_subnet.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ib-subnet-manager-missing"

# Logical port state Init as each source spells it once parsed (parse/rdma.py port_state): sysfs
# "2: INIT", ibv_devinfo "PORT_INIT (2)", ibstat "Initializing" (IB spec vol. 1 PortInfo PortState 2).
_INIT = frozenset({"INIT", "INITIALIZING"})
_LINK_UP = "LINKUP"   # PortPhysicalState 5: sysfs "5: LinkUp", ibstat "LinkUp"

_FIX = ("sminfo   # the SM this port knows: \"can't resolve sm port\" means none has configured it\n"
        "ibstat   # State: Initializing with Physical state: LinkUp and SM lid: 0 is a port no SM has brought up\n"
        "systemctl status opensm   # on the host meant to run the SM (or the switch's / UFM's SM): is one running\n"
        "sudo systemctl enable --now opensm   # no SM on the fabric: run opensm on one host (rdma-core's or MLNX_OFED's)\n"
        "# SR-IOV VFs: the SM must support virtualization (MLNX_OFED's opensm or UFM, with it enabled; the maintainers' "
        "answer in sriov-network-device-plugin#269) and each VF needs a node and port GUID (ip link's vf N node_guid / port_guid)")


@rule("NET042", SYMBOL, "error", "an InfiniBand port waits in state Init: no subnet manager has configured it", impact=7)
def ib_subnet_manager_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An InfiniBand port whose link is up (physical state LinkUp) but whose logical state is
        Init: ibstat's "State: Initializing", ibv_devinfo's "PORT_INIT", sysfs "2: INIT", on the
        node or in a pasted listing (a RoCE port, link layer Ethernet, has no SM and is left out).
        In a pasted log, infiniband-diags finding no SM: sminfo's "iberror: failed: can't resolve
        sm port" and the SA clients' "No SM/SA found on port DEV:N".

    Why it matters:
        The InfiniBand specification moves a port from Init to Armed and Active only when a
        subnet manager has given it a LID and routes; until then it passes no traffic, so
        ib_write_bw, MPI and NCCL over it fail. A trained link stuck in Init says the fabric has
        no SM, or an SM that does not manage this port (an SR-IOV VF with the SM's
        virtualization support off, a port on a partition the SM does not serve).

    How to fix:
        Run sminfo and ibstat on the node; start a subnet manager (opensm, UFM, or the managed
        switch's) on the fabric; for SR-IOV VFs, enable virtualization in the SM and give each
        VF its GUIDs.

    References:
        - https://github.com/linux-rdma/rdma-core/blob/691953d8d502f54088f776c5ba2aeed0a5ac945d/infiniband-diags/ibstat.c (port_state_str, port_phy_state_str)
        - https://github.com/linux-rdma/rdma-core/blob/691953d8d502f54088f776c5ba2aeed0a5ac945d/libibverbs/examples/devinfo.c (PORT_INIT)
        - https://github.com/linux-rdma/rdma-core/blob/691953d8d502f54088f776c5ba2aeed0a5ac945d/infiniband-diags/sminfo.c
        - https://github.com/linux-rdma/opensm/blob/fa74b98c4b604ebb8b6bb348ca3ac065ba418df0/doc/opensm-sriov.txt (alias GUIDs for virtualized ports)
        - https://github.com/k8snetworkplumbingwg/sriov-network-device-plugin/issues/269 (VFs Down without a virtualization-aware SM)
    """
    told = catalogued(f, SYMBOL)
    if told:
        s = told[0]
        where = f" on {s['device']} port {s['port']}" if s.get("device") else ""
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": no subnet manager answers{where}: none runs on "
                          "the fabric, or it does not manage this port; the port cannot reach Active until one does",
                  fix=_FIX, evidence=told_evidence(s))
        return
    ports = f["network.rdma_ports"]
    waiting = [p for p in ports if isinstance(p, dict) and str(p.get("state")) in _INIT
               and p.get("phys_state") in (_LINK_UP, None) and str(p.get("link_layer") or "InfiniBand") != "Ethernet"]
    if not waiting:
        return
    names = ", ".join(f"{p.get('device')}:{p.get('port')}" for p in waiting)
    yield Hit(message=f"{len(waiting)} InfiniBand port(s) in state Init with the link up ({names}): the link has trained "
                      "but no subnet manager has given the port a LID and moved it to Active; no SM runs on the fabric, "
                      "or it does not manage these ports (SR-IOV VFs need an SM with virtualization enabled)",
              fix=_FIX, evidence={"waiting": waiting})
