"""NCCL finding no network transport: the network NCCL_NET (or NCCL_NET_PLUGIN) asks for is not there,
in NCCL's own words (knowledge/messages/nccl.toml) or, on a live node, NCCL_NET=IB where no RDMA
device is."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "nccl-net-unavailable"

_FIX = ("env | grep -E '^NCCL_NET(_PLUGIN)?='   # the network NCCL was told to use (IB, Socket, or a plugin's name such as 'AWS Libfabric')\n"
        "ls /sys/class/infiniband/; ibv_devinfo | grep -E 'hca_id|state'   # NCCL_NET=IB needs an RDMA device with an active port here\n"
        "export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET   # then rerun: NCCL prints each plugin it loaded and why its init failed\n"
        "unset NCCL_NET NCCL_NET_PLUGIN   # on a node without that network: let NCCL choose (IB when present, else sockets)")


@rule("NET029", SYMBOL, "error", "NCCL found no network transport it was told to use", impact=7)
def nccl_net_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log: NCCL's "Failed to initialize any NET plugin" (src/plugin/net.cc, NCCL
        2.27 on) or "Error: network <name> not found." (src/init.cc and src/net.cc, NCCL 2.10 to
        2.26): no network plugin, neither an external one (libnccl-net*.so) nor NCCL's own IB and
        socket transports, could serve the network that NCCL_NET names, and ncclCommInitRank
        fails with ncclInvalidUsage ("invalid usage" in torch's DistBackendError). On a live node
        (or its snapshot): NCCL_NET=IB in the environment where no RDMA device is present.

    Why it matters:
        The communicator is never created: every rank stops in init_process_group (or the first
        collective), on one node as on many. The cause is the setting or a missing plugin or RDMA
        device, not the GPUs.

    How to fix:
        Read NCCL_NET and NCCL_NET_PLUGIN; on a node without InfiniBand or RoCE unset NCCL_NET (or
        set it to Socket); for a plugin network (aws-ofi-nccl's 'AWS Libfabric', SHARP's IBext) put
        the plugin's library on LD_LIBRARY_PATH; NCCL_DEBUG=INFO shows each plugin's load and init.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-net
        - https://github.com/NVIDIA/nccl/blob/v2.28.9-1/src/plugin/net.cc (ncclNetInit)
        - https://github.com/NVIDIA/nccl/blob/v2.19.3-1/src/net.cc ("Error: network %s not found.")
        - https://github.com/eth-cscs/cscs-docs/blob/e9fd8a5e296d22b000f57c6dddeba05aeeb4bb6b/docs/software/communication/nccl.md (NCCL_NET_PLUGIN beside NCCL_NET)
    """
    told = catalogued(f, SYMBOL)
    if told:
        s = told[0]
        net = str(s.get("net") or "").strip()
        what = f"the network '{net}' that NCCL_NET names is not provided by any plugin NCCL loaded" if net else \
            "no network plugin could start (NCCL_NET names a network no plugin provides, or every plugin failed its init)"
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}; the communicator cannot be created",
                  fix=_FIX, evidence=told_evidence(s))
        return
    wanted = f["env.vars"].get("NCCL_NET")
    if not isinstance(wanted, str) or wanted.strip().lower() != "ib":
        return
    ports = f["network.rdma_ports"]
    if ports:
        return
    yield Hit(message="NCCL_NET=IB is set but this node has no RDMA (InfiniBand or RoCE) device: NCCL will fail "
                      "with 'Failed to initialize any NET plugin' ('Error: network IB not found.' before 2.27)",
              fix=_FIX, evidence={"env.NCCL_NET": wanted, "network.rdma_ports": ports})
