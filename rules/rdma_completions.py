"""RDMA work completions that failed, decoded from the status number a library printed
(knowledge/messages/ibv_wc.toml: rdma-core's enum ibv_wc_status, as NCCL's IB transport, Open MPI's
openib BTL and ibv_wc_status_str print it)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "rdma-peers-unreachable"

_FIX = ("ibv_devinfo | grep -E 'hca_id|state|link_layer'   # on both nodes: every port the job uses PORT_ACTIVE\n"
        "ibdev2netdev   # Mellanox OFED: which HCA port is which netdev, and whether it is Up, on both nodes\n"
        "show_gids   # RoCE: the GID index of each address (RoCE v2 entry of the routable IPv4); NCCL_IB_GID_INDEX "
        "must name it, the same on every node\n"
        "ip -4 addr show; ping -c 3 -I NETDEV PEER_IP   # the HCAs' addresses: the peers must route to each other "
        "(same subnet or rail, or a route between)\n"
        "ib_write_bw -d HCA   # on one node, then: ib_write_bw -d HCA PEER_HOST on the other (perftest): RDMA "
        "between the two outside the job")


# The same completion status as other layers name it (ucx.toml, openmpi.toml): UCX's mlx5 syndrome 0x15,
# Open MPI's openib box, and UCX's UD transport, whose own retransmission timer ran out.
_SAID_BY = {
    "ucx:mlx5-transport-retry-exceeded": "UCX's mlx5 error completion, syndrome 0x15 = transport retry count exceeded",
    "openmpi:mpi-btl-openib:pp-retry-exceeded": "Open MPI's openib BTL: the InfiniBand retry count between two MPI "
                                                "processes was exceeded",
    "ucx:ud-endpoint-timeout": "UCX's UD transport: the peer did not acknowledge within its timeout",
}


@rule("NET030", SYMBOL, "error", "RDMA packets to a peer went unacknowledged: the peer is unreachable over the fabric",
      impact=8)
def rdma_peers_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, an RDMA work completion with status IBV_WC_RETRY_EXC_ERR (12, "transport
        retry counter exceeded"), as NCCL's IB transport prints it in every release ("NET/IB :
        Got completion with error 12", "from peer ... with error 12", "with status=12", HEAD's
        "status=...(12)"), as Open MPI's openib BTL prints it ("error polling LP CQ with status
        RETRY EXCEEDED ERROR status number 12") or as ibv_wc_status_str's text. The number is
        decoded from rdma-core's enum ibv_wc_status; the other statuses are read and named, and
        feed no finding (a flushed request, 5, follows an earlier error). The same status as
        UCX's mlx5 transport prints it ("Transport retry count exceeded on mlx5_0:1/IB (synd 0x15"),
        Open MPI's openib box ("The InfiniBand retry count between two MPI processes has been
        exceeded") and UCX's UD transport ("UD endpoint ...: unhandled timeout error").

    Why it matters:
        The sending HCA retransmitted as many times as the queue pair's retry count and timeout
        allow and the peer's HCA never acknowledged: the peer cannot be reached over the fabric.
        The usual causes are a port or link down on one node, a RoCE GID index naming an address
        the other node cannot route to, NICs on different subnets or rails (an ibdev2netdev that
        differs between the servers), or a switch dropping the traffic; a peer process or node
        that died mid-transfer leaves the same status behind. The job hangs or aborts; rerunning
        it changes nothing until the path is fixed.

    How to fix:
        On both nodes, check that each port the job uses is active (ibv_devinfo, ibdev2netdev),
        that the RoCE GID index is the RoCE v2 entry of a routable address and the same on every
        node (show_gids, NCCL_IB_GID_INDEX), that the NICs' addresses reach each other, and test
        RDMA between the two outside the job with perftest's ib_write_bw.

    References:
        - https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/verbs.h (enum ibv_wc_status: IBV_WC_RETRY_EXC_ERR = 12)
        - https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/enum_strs.c (ibv_wc_status_str)
        - https://github.com/NVIDIA/nccl/issues/1170 (error 12: the NICs cannot talk to each other)
        - https://github.com/NVIDIA/nccl/issues/902 (error 12: a transport timeout, missing link or RoCE routing)
        - https://github.com/openucx/ucx/blob/master/src/uct/ib/mlx5/ib_mlx5_log.c (syndrome 0x15: "Transport retry count exceeded")
        - https://github.com/open-mpi/ompi/blob/v4.1.8/opal/mca/btl/openib/help-mpi-btl-openib.txt ([pp retry exceeded])
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html (RoCE and GID index)
    """
    told = [s for s in catalogued(f, SYMBOL) if str(s.get("id", "")).startswith("ibv_wc:") or s.get("id") in _SAID_BY]
    if not told:
        return
    s = told[0]
    peer = f" to {s['peer']}" if s.get("peer") else ""
    what = _SAID_BY.get(str(s.get("id")), "status 12 = IBV_WC_RETRY_EXC_ERR, \"transport retry counter exceeded\"")
    yield Hit(message=f"RDMA packets{peer} went unacknowledged until the retry counter ran out ({what}; line {s.get('line')}: "
                      f"\"{told_text(s)}\"): the peer is unreachable over the fabric (a link down, a RoCE GID or "
                      "address the other node cannot route to, NICs on different subnets or rails), or it died",
              fix=_FIX, evidence=told_evidence(s))
