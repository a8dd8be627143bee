"""RDMA set up half-way on a node: an InfiniBand port without an IP address on its IPoIB interface,
which connection managers (rdma_cm) address peers by. Read from libfabric's verbs provider and
fabtests (knowledge/messages/libfabric.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

IPOIB = "ipoib-interface-unconfigured"
# fabtests' fi_getinfo ENODATA has other causes (provider not built, no NIC): a hint, never an alarm.
_HINT = "libfabric:fabtests-getinfo-enodata"

_IPOIB_FIX = ("ip -br addr show type ipoib   # every IPoIB interface (ib0, ibp...) and its addresses: none, or DOWN, is the fault\n"
              "ibdev2netdev 2>/dev/null || ls /sys/class/infiniband/*/device/net   # which netdev belongs to which HCA (mlx5_0 -> ib0)\n"
              "sudo nmcli connection add type infiniband ifname ib0 ipv4.method manual ipv4.addresses ADDRESS/PREFIX   "
              "# administrators: ib0's address on the fabric's IP subnet (or the site's DHCP/ifcfg-ib0), then nmcli connection up infiniband-ib0\n"
              "FI_LOG_LEVEL=warn fi_info -p verbs -t FI_EP_MSG   # libfabric: the connected endpoints are listed once an address is there")


@rule("NET027", IPOIB, "error", "no IPoIB interface has an IP address, so RDMA connection setup (rdma_cm) cannot work",
      impact=5, also={"info": "fabtests' fi_getinfo found no provider (FI_ENODATA): one of its causes, not shown"})
def ipoib_interface_unconfigured(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, libfabric's verbs provider warning that no RDMA-capable interface has an
        IP address: "no valid IPoIB interfaces found, FI_EP_MSG endpoint type would not be
        available" (libfabric 1.9 and later) or "No interface address found" (1.6 to 1.8), an
        error. A fabtests program's "fi_getinfo(): ..., ret=-61 (No data available)" alone is
        quoted back at info: FI_ENODATA says that no provider offered what was asked for, which
        an unaddressed IPoIB interface causes for the verbs provider's connected endpoints, and
        so do a provider that is not built and a node without the NIC.

    Why it matters:
        rdma_cm, the connection manager of libfabric's verbs provider (FI_EP_MSG, and the rxm
        endpoints MPI libraries layer on it), of UCX's rdmacm transport and of perftest's -R,
        names a peer by an IP address and resolves it to the HCA through the netdev that holds
        it. An InfiniBand port that is ACTIVE but whose IPoIB interface has no address gives
        rdma_cm nothing to bind or resolve: connected endpoints are not offered, and a benchmark
        or MPI job fails or falls back to TCP.

    How to fix:
        Give each node's IPoIB interface an address on the fabric's IP subnet (NetworkManager,
        ifcfg-ib0 or the site's provisioning) and bring it up; connect to the peer by that
        address or a name that resolves to it. List the interfaces with ip -br addr show type
        ipoib.

    References:
        - https://github.com/ofiwg/libfabric/blob/v2.0.0/prov/verbs/src/verbs_info.c (vrb_init_info: no valid IPoIB interfaces found)
        - https://ofiwg.github.io/libfabric/v2.0.0/man/fi_verbs.7.html (FI_EP_MSG over rdma_cm; FI_VERBS_IFACE)
        - https://github.com/ofiwg/fabtests/issues/802 (fi_msg_bw with verbs: the IPoIB interfaces had no address)
        - https://github.com/linux-rdma/rdma-core/blob/master/librdmacm/man/rdma_resolve_addr.3 (addresses resolved to an RDMA device)
        - https://docs.nvidia.com/networking/display/mlnxofedv24100700/ip+over+infiniband+(ipoib) (configuring IPoIB)
    """
    told = catalogued(f, IPOIB)
    said = next((s for s in told if s.get("id") != _HINT), None)
    if said is not None:
        yield Hit(message=f"libfabric's verbs provider found no RDMA interface with an IP address (line {said.get('line')}: "
                          f"\"{told_text(said)}\"): the IPoIB interface has no address, so rdma_cm cannot connect",
                  fix=_IPOIB_FIX, evidence=told_evidence(said))
        return
    hint = next((s for s in told if s.get("id") == _HINT), None)
    if hint is not None:
        yield Hit(message=f"fi_getinfo found no provider for the request (line {hint.get('line')}: \"{told_text(hint)}\"): "
                          "with the verbs provider and a connected endpoint (fi_msg_bw, fi_msg_pingpong), one cause is an "
                          "IPoIB interface without an IP address; others are a provider not built, or no NIC (rerun with FI_LOG_LEVEL=warn)",
                  fix=_IPOIB_FIX, evidence=told_evidence(hint), severity="info")
