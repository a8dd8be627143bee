"""A rank that cannot reach another over NCCL's TCP sockets (bootstrap and the socket transport), in NCCL's own
words (knowledge/messages/nccl.toml): each errno names its own cause, and an address that no other node can
reach (loopback, link-local, docker's default bridge) names the interface NCCL chose."""

from __future__ import annotations

import ipaddress
import re
import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, nccl_p2p_failures, told_evidence, told_text
from hpcdoctor.rules.pcie_p2p import acs_names_the_cause

SYMBOL = "nccl-peer-unreachable"
_THIS_NODE = "nccl:bootstrap-using"
# nccl-socket-ifname's own lines (rules/network.py): where NCCL found no interface at all, that finding names
# the cause and this one would only repeat its consequence.
_NO_INTERFACE = ("nccl:bootstrap-no-socket-interface", "nccl:net-socket-no-interface", "nccl:ib-no-ip-interface",
                 "nccl:net-socket-no-listening-interface", "nccl:net-no-interface-same-subnet",
                 "nccl:socket-init-no-address")

# What each errno of connect()/accept() says about the path to the peer (connect(2), tcp(7); NCCL retries
# ECONNREFUSED, ETIMEDOUT and, from 2.24, EHOSTUNREACH before it warns: nccl#1515).
_PATH_BLOCKED = {
    "no route to host": "no route to the peer's address, or a firewall rejecting the connection (firewalld's "
                        "default reject answers with host-prohibited, which reads as this)",
    "network is unreachable": "this node has no route to the peer's network: NCCL's interface is not on the "
                              "network the peers share",
    "connection timed out": "packets to the peer are dropped: a firewall dropping them, or an address on a network "
                            "this node cannot reach",
}
_PEER_SIDE = {
    "connection refused": "nothing listens at that address and port: the peer process exited first (its own log "
                          "holds the cause), or the address belongs to an interface of another host, or a "
                          "firewall rejects with a TCP reset",
    "software caused connection abort": "the connection was aborted on this side as it was made: most often a "
                                        "firewall between the nodes (NCCL's developers: nccl-tests#162)",
}


def _address(text: str) -> Optional[str]:
    """The IP part of NCCL's "<ip><port>" notation (socketToString), or None."""
    m = re.match(r"\[?([0-9A-Fa-f.:]{3,60}?)\]?(?:<\d{1,6}>)?$", str(text or "").strip())
    return m.group(1) if m else None


def _unreachable_kind(ip: str) -> Optional[str]:
    """Why no other node can reach this address, when the address alone says so."""
    try:
        a = ipaddress.ip_address(ip)
    except ValueError:
        return None
    if a.is_loopback:
        return "a loopback address"
    if a.is_link_local:
        return "a link-local address (169.254.0.0/16 or fe80::/10), not routed between nodes"
    if a in ipaddress.ip_network("172.17.0.0/16"):
        return "in docker's default bridge network (172.17.0.0/16), the same on every node"
    return None


def _fix(ip: Optional[str]) -> str:
    peer = shlex.quote(ip) if ip else "PEER_IP"
    return (f"ip route get {peer}   # the interface and route this node uses to reach the peer (an error: no route)\n"
            "ip -brief address show up   # this node's interfaces: the peers must share one network\n"
            "export NCCL_SOCKET_IFNAME=IFACE   # in the job script, IFACE the interface on the network the nodes share "
            "(e.g. ib0, hsn0, eth0), the same on every node\n"
            "sudo firewall-cmd --state; sudo iptables -S | grep -E 'REJECT|DROP'   # administrators: NCCL uses "
            "ephemeral TCP ports between all ranks; allow all TCP between the job's nodes\n"
            "nc -l 12345   # on the peer node; then on this one: nc -vz PEER_HOST 12345 (NCCL's developers' test)")


@rule("NET037", SYMBOL, "error", "a rank cannot open a TCP connection to another: no route, firewall or wrong interface",
      impact=7, also={"warning": "the connection was refused or aborted: the peer may have exited first"})
def nccl_peer_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's WARN lines that a TCP connection to another rank failed, in every
        wording since 2.4: "Connect to <ip><port> failed : <errno>" (socketStartConnect),
        "socketPollConnect: Connect to ... returned 113(No route to host)", "... exceeded retries",
        "connect to ... returned <errno>, exceeded error retry count", "ncclOsSocketPollConnect to
        ... failed with error <errno>" and "ncclOsSocketTryAccept: exceeded error retry count after
        N attempts, <errno>" (src/misc/socket.cc, src/os/linux.cc). An error where the errno says
        the path is blocked (no route to host, network unreachable, timed out); a warning where the
        connection was refused or aborted, which a peer that exited first also causes. Silent when
        NCCL found no socket interface at all (nccl-socket-ifname names that cause).

    Why it matters:
        NCCL bootstraps every communicator over TCP, and on nodes without RDMA moves all data over
        it: a rank that cannot reach its peers stops init_process_group or the first collective.
        The usual causes are a firewall between the nodes (NCCL uses ephemeral ports, so opening
        one port is not enough), NCCL choosing an interface the other nodes cannot reach (a
        docker bridge, a link-local or management address), or a peer that died first.

    How to fix:
        Check the route to the peer's address and this node's interfaces, set NCCL_SOCKET_IFNAME
        to the interface on the network the nodes share, and allow all TCP between the job's
        nodes; test with nc between the nodes.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html (networking issues)
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/misc/socket.cc (socketStartConnect, socketPollConnect)
        - https://github.com/NVIDIA/nccl-tests/issues/162 (firewall: test with nc between the nodes)
    """
    symptoms = f.get("ticket.symptoms") or []
    if any(s.get("id") in _NO_INTERFACE for s in symptoms):
        return
    told = [s for s in catalogued(f, SYMBOL) if s.get("id") != _THIS_NODE]
    if not told:
        return
    s = told[0]
    error = str(s.get("error") or s.get("status") or "").strip()
    ip = _address(s.get("address") or s.get("peer") or "")
    why = _PATH_BLOCKED.get(error.lower())
    severity = "error"
    if why is None:
        why = _PEER_SIDE.get(error.lower())
        if why is None and not error:   # "exceeded retries" (2.16-2.23): refused or timed out until NCCL gave up
            why = "NCCL retried until it gave up: the peer never answered (a firewall, a wrong address, a peer gone)"
        else:
            severity = "warning"
            why = why or f"{error}: the connection to the peer failed"
    where = ""
    kind = _unreachable_kind(ip) if ip else None
    if kind:
        where = f"; the peer's address {ip} is {kind}: NCCL chose an interface the nodes cannot reach each other on"
        severity = "error"
    this = next((t for t in catalogued(f, SYMBOL) if t.get("id") == _THIS_NODE), None)
    if this is not None and this.get("iface"):
        where += f" (this node's NCCL uses {this['iface']} {this.get('address', '')}, line {this.get('line')})"
    what = ("kept failing to accept connections from its peers" if s.get("id") == "nccl:socket-accept-retries-exceeded"
            else f"could not connect to {'peer ' + ip if ip else 'its peer'}")
    said = f"{error}: " if error and not why.startswith(error) else ""
    yield Hit(message=f"a rank {what} (line {s.get('line')}: \"{told_text(s)}\"): {said}{why}{where}",
              fix=_fix(ip), evidence=told_evidence(s), severity=severity)


P2P = "nccl-p2p-unusable"
# CUDA's code for "peer mapping resources exhausted" (cudaErrorTooManyPeers): driver_types.h (217,
# cudaErrorPeerAccessUnsupported, is read by _common.nccl_p2p_failures).
_TOO_MANY_PEERS = "711"
_NVLINK = "nccl:p2p-disabled-nvlink"

_P2P_FIX = (
    "nvidia-smi topo -p2p r   # each GPU pair's peer-to-peer read status as the driver reports it (OK, or "
    "CNS/GNS/TNS/NS: not supported)\n"
    "ls /sys/class/iommu; cat /proc/cmdline   # an IOMMU translating (intel_iommu=on / amd_iommu=on without iommu=pt) "
    "or a VM's passthrough breaks P2P that the GPUs advertise\n"
    "export NCCL_P2P_DISABLE=1   # in the job script, until the platform is fixed: NCCL copies through host memory "
    "(shared memory) instead, slower but working\n"
    "# administrators: boot with iommu=pt or turn VT-d/IOMMU off in the BIOS on bare metal; in a VM, ask the provider "
    "for GPUs with P2P enabled between them")
_NVLINK_FIX = (
    "nvidia-smi nvlink -s   # each GPU's NVLink links and their speed: a link shown inactive is down\n"
    "nvidia-smi -q | grep -iA3 fabric   # on NVSwitch systems: the fabric state of each GPU (Completed / Success)\n"
    "systemctl status nvidia-fabricmanager   # NVSwitch systems: the fabric manager must run, at the driver's version\n"
    "# administrators: a link that stays down after a reboot is a hardware fault: drain the node and report it")


@rule("NET038", P2P, "error", "NCCL could not use peer-to-peer between GPUs that advertise it", impact=6)
def nccl_p2p_unusable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL failing to set up peer-to-peer between two GPUs after its topology
        search found P2P possible: "Cuda failure 'peer access is not supported between these two
        devices'", "failed to peer with device N(=busid): 217 ..." (cudaDeviceEnablePeerAccess,
        src/transport/p2p.cc), "failed to open CUDA IPC handle : 217 ..." (2.4-2.7, between
        processes), and "P2P is disabled between NVLINK connected GPUs" (src/graph/paths.cc,
        2.12 on: NVLink present, P2P not). Silent where pcie-acs-blocks-p2p's user report and
        topology name the ACS cause, and on CUDA IPC failures with other codes (containers).

    Why it matters:
        NCCL enables P2P only where the driver says the GPUs can reach each other; when enabling
        or mapping then fails, the platform advertises what it cannot do: an IOMMU translating
        peer traffic, PCIe ACS, a VM's passthrough, or consumer GPUs whose driver reports P2P
        that does not work. Between NVLink-connected GPUs it means a link or the NVSwitch fabric
        is down: a hardware fault. Communicator creation fails on every run.

    How to fix:
        Read the pairs' P2P status (nvidia-smi topo -p2p r) and the IOMMU settings; set
        NCCL_P2P_DISABLE=1 to run now; administrators put the IOMMU in passthrough or off. For
        NVLink, check the links (nvidia-smi nvlink -s) and the fabric manager.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html (PCI Access Control Services, IOMMU)
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-p2p-disable
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/transport/p2p.cc (p2pMap: cudaDeviceEnablePeerAccess)
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/graph/paths.cc (P2P is disabled between NVLINK connected GPUs)
    """
    if acs_names_the_cause(f):
        return   # pcie-acs-blocks-p2p names the cause (ACS on the switch), at error
    told = nccl_p2p_failures(f)
    if not told:
        return
    s = told[0]
    quoted = f"line {s.get('line')}: \"{told_text(s)}\""
    if s.get("id") == _NVLINK:
        yield Hit(message=f"NCCL found GPUs {s.get('gpu_a')} and {s.get('gpu_b')} joined by NVLink but without P2P "
                          f"({quoted}): an NVLink link or the NVSwitch fabric is down, a hardware fault",
                  fix=_NVLINK_FIX, evidence=told_evidence(s))
        return
    code = str(s.get("code") or "")
    if code == _TOO_MANY_PEERS:
        why = ("the driver's peer mappings are exhausted (cudaErrorTooManyPeers: at most eight peers per GPU without "
               "NVSwitch), by this job's GPUs or other processes'")
    else:
        why = ("the driver advertises P2P between them but refuses it: an IOMMU translating peer traffic, PCIe ACS, a "
               "VM's passthrough, or consumer GPUs whose driver reports P2P that does not work")
    yield Hit(message=f"NCCL could not set up peer-to-peer between two GPUs ({quoted}): {why}",
              fix=_P2P_FIX, evidence=told_evidence(s))
