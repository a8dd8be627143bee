"""The fabric a multi-node job communicates over, and the address its rendezvous advertises."""

from __future__ import annotations

import re
import shlex  # interface names come from the node, or a bundle: quoted in the printed fix
from typing import Iterator, List, Sequence

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_evidence, told_text


def _multinode(f: FactView) -> bool:
    nodes = f.get("scheduler.nodes")
    return isinstance(nodes, int) and nodes > 1


@rule("NET001", "no-rdma-multinode", "warning", "a multi-node job without an RDMA network", impact=9)
def no_rdma_multinode(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A job spanning several nodes on a node with no active InfiniBand or RoCE port and no
        Slingshot (cxi) device.

    Why it matters:
        NCCL then falls back to TCP sockets: all-reduce bandwidth drops from tens of GB/s to a few,
        and data-parallel training across nodes crawls. Often the cause is a container started
        without the RDMA devices (/dev/infiniband) or a node whose HCA is down.

    How to fix:
        Check ibstat on the node; run containers with the RDMA devices (apptainer: --bind
        /dev/infiniband, or the site's MPI/NCCL hook); confirm with NCCL_DEBUG=INFO that NCCL
        reports "NET/IB" or "NET/OFI" rather than "NET/Socket".

    References:
        - 004_3c12714629749d50.txt (inter-node readiness with RDMA and InfiniBand)
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
    """
    if not _multinode(f):
        return
    ports = f["network.rdma_ports"]
    cxi = f.get("network.cxi_devices") or []
    active = [p for p in ports if p.get("state") == "ACTIVE"]
    if not active and not cxi:
        yield Hit(message=f"this job spans {f.get('scheduler.nodes')} nodes but no InfiniBand, RoCE or Slingshot "
                          "device is active here: NCCL will fall back to TCP sockets",
                  fix="ibstat   # give containers the RDMA devices; NCCL_DEBUG=INFO should show NET/IB or NET/OFI",
                  evidence={"network.rdma_ports": ports, "network.cxi_devices": cxi, "scheduler.nodes": f.get("scheduler.nodes")})


@rule("NET002", "rdma-port-down", "warning", "an RDMA port is down", impact=7)
def rdma_port_down(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An InfiniBand or RoCE port on the node that is not in the ACTIVE state (down, polling,
        disabled).

    Why it matters:
        NCCL spreads traffic over all the node's HCAs; with one down, the rings through it either
        fail to form or move to the remaining ports, and the node becomes the slowest in every
        collective. On rail-optimised clusters a down port breaks a whole rail.

    How to fix:
        Report the port to the administrators (ibstat shows it; cable, transceiver or switch port);
        until fixed, NCCL_IB_HCA can exclude it.

    References:
        - 004_3c12714629749d50.txt (inter-node readiness with RDMA and InfiniBand)
    """
    ports = f["network.rdma_ports"]
    down = [p for p in ports if p.get("state") not in ("ACTIVE", None)]
    if down:
        names = ", ".join(f"{p['device']}:{p['port']} {p.get('state')}" for p in down)
        yield Hit(message=f"{len(down)} of {len(ports)} RDMA port(s) not active: {names}",
                  fix="export NCCL_IB_HCA=^" + down[0]["device"] + "   # meanwhile; report the port to the administrators (ibstat)",
                  evidence={"down": down})


def _ifname_matches(spec: str, names: Sequence[str]) -> List[str]:
    """NCCL_SOCKET_IFNAME semantics: comma-separated prefixes, '^' excludes, '=' exact names."""
    exclude = spec.startswith("^")
    body = spec[1:] if exclude else spec
    exact = body.startswith("=")
    body = body[1:] if exact else body
    wanted = [w for w in body.split(",") if w]
    hits = [n for n in names if any((n == w) if exact else n.startswith(w) for w in wanted)]
    return [n for n in names if n not in hits] if exclude else hits


@rule("NET003", "nccl-socket-ifname", "warning", "NCCL_SOCKET_IFNAME names no usable interface", impact=7,
      also={"advice": "it is unset with several interfaces up"})
def nccl_socket_ifname(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        NCCL_SOCKET_IFNAME (or GLOO_SOCKET_IFNAME) set to names that match no interface that is up
        on this node; or, at advice level in a multi-node job, unset while several interfaces are
        up. In a pasted log, NCCL's own "Bootstrap : no socket interface found", "NET/Socket : no
        interface found" or "NET/IB : No IP interface found." (src/bootstrap.cc,
        src/transport/net_socket.cc, net_ib.cc, every release since 2.4), with the value its
        "NCCL_SOCKET_IFNAME set by environment to X" INFO line names.

    Why it matters:
        NCCL and Gloo use that interface for bootstrap (and for data when no RDMA is available).
        A name copied from another cluster makes initialisation fail with "no socket interface
        found" or hang; with several interfaces and no setting, NCCL may pick a management or
        container bridge that other nodes cannot reach.

    How to fix:
        Set it to the high-speed interface's name or prefix on these nodes (ip -br link shows
        them), e.g. export NCCL_SOCKET_IFNAME=hsn0 on Slingshot or ib0 on InfiniBand.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-socket-ifname
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/bootstrap.cc (bootstrapNetInit)
        - https://github.com/NVIDIA/nccl/issues/1837 (NCCL 2.27: a name that matches nothing ends in ncclSocketInit)
    """
    said = _no_interface_in_ticket(f)
    if said:
        yield said
        return
    env = f["env.vars"]
    ifaces = f["network.interfaces"]
    up = [i["name"] for i in ifaces if i.get("operstate") in ("up", "unknown")]
    for var in ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME"):
        spec = env.get(var)
        if spec and not _ifname_matches(spec, up):
            yield Hit(message=f"{var}={spec} matches no interface that is up (up: {', '.join(up) or 'none'})",
                      fix=f"export {var}={shlex.quote(_suggest(up))}   # the fast interface on these nodes",
                      evidence={f"env.{var}": spec, "interfaces_up": up})
    if not env.get("NCCL_SOCKET_IFNAME") and _multinode(f):
        candidates = [n for n in up if not re.match(r"^(docker|virbr|veth|br-|cni|flannel|ifb)", n)]
        if len(candidates) > 1:
            yield Hit(message=f"NCCL_SOCKET_IFNAME is unset with {len(candidates)} interfaces up ({', '.join(candidates)}): "
                              "NCCL may bootstrap over the wrong one", severity="advice",
                      fix=f"export NCCL_SOCKET_IFNAME={shlex.quote(_suggest(candidates))}",
                      evidence={"interfaces_up": candidates})


# NCCL's own words that no interface matched (knowledge/messages/nccl.toml): at bootstrap, in the
# socket transport, for the IB transport's side-band sockets, and beside NCCL_COMM_ID.
_NO_INTERFACE = ("nccl:bootstrap-no-socket-interface", "nccl:net-socket-no-interface", "nccl:ib-no-ip-interface",
                 "nccl:net-socket-no-listening-interface", "nccl:net-no-interface-same-subnet")


def _no_interface_in_ticket(f: FactView) -> Iterator[Hit]:
    """A pasted log where NCCL found no interface to use, with the NCCL_SOCKET_IFNAME it was
    given where its INFO line (or the listed environment) says."""
    found = {s["id"]: s for s in reversed(f.get("ticket.symptoms") or [])}
    setting = found.get("nccl:socket-ifname-set")
    s = next((found[i] for i in _NO_INTERFACE if i in found), None)
    if s is None and setting:
        # NCCL 2.27 warns nothing when the name matches no interface and fails later on the
        # address it never got (nccl#1837): that failure counts only beside the name it was given.
        s = found.get("nccl:socket-init-no-address")
    if s is None:
        s = found.get("nccl:socket-creation-failed")
        if s is not None and str(s.get("error", "")).strip().lower() == "address family not supported by protocol":
            return Hit(message=f"NCCL could not open a socket on the interface it chose: \"{s['text'][:120]}\" (line {s['line']}): "
                               "its address is of a family the kernel does not offer (an IPv6 address where IPv6 is disabled)",
                       fix="export NCCL_SOCKET_FAMILY=AF_INET   # IPv4 only\n"
                           "ip -brief address show up   # or name an interface with an IPv4 address in NCCL_SOCKET_IFNAME",
                       evidence=ticket_evidence(s))
        return None
    spec = setting["ifname"] if setting else (f.get("env.vars") or {}).get("NCCL_SOCKET_IFNAME")
    evidence = ticket_evidence(s)
    if spec:
        evidence["NCCL_SOCKET_IFNAME"] = spec
        where = f" (line {setting['line']})" if setting else ""
        return Hit(message=f"NCCL found no network interface matching NCCL_SOCKET_IFNAME={spec}{where}: "
                           f"\"{s['text'][:120]}\" (line {s['line']})",
                   fix="unset NCCL_SOCKET_IFNAME   # NCCL then takes the first interface that is neither lo nor docker*; "
                       "or name one that 'ip -brief address show up' lists on every node",
                   evidence=evidence)
    return Hit(message=f"NCCL found no network interface to use: \"{s['text'][:120]}\" (line {s['line']}); "
                       "the paste does not say what NCCL_SOCKET_IFNAME was",
               fix="ip -brief address show up   # on a node of the job: NCCL_SOCKET_IFNAME must name (a prefix of) one "
                   "listed there, other than lo and docker*",
               evidence=evidence)


def _suggest(names: Sequence[str]) -> str:
    for prefix in ("hsn", "ib", "bond", "en", "eth"):
        for n in names:
            if n.startswith(prefix):
                return n
    return names[0] if names else "<interface>"


@rule("NET004", "slingshot-ofi", "warning", "Slingshot without the libfabric path for NCCL/RCCL", impact=9)
def slingshot_ofi(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        HPE Slingshot (cxi) devices on the node while NCCL/RCCL has no OFI network plugin
        (libnccl-net.so / librccl-net.so on LD_LIBRARY_PATH) or FI_PROVIDER names another provider.

    Why it matters:
        NCCL and RCCL have no native Slingshot transport: without the aws-ofi-nccl/aws-ofi-rccl
        plugin they fall back to TCP over the high-speed NICs, at a fraction of the bandwidth. On
        LUMI and Isambard-AI this is the most common cause of slow multi-node training.

    How to fix:
        Load the site's plugin module (e.g. aws-ofi-rccl on LUMI, the NCCL OFI plugin on Cray EX
        GPU systems) so its directory is on LD_LIBRARY_PATH, and export FI_PROVIDER=cxi.

    References:
        - 003_ff12095d05d26000.txt (LUMI-G: Slingshot-11 NICs)
        - https://github.com/aws/aws-ofi-nccl
    """
    cxi = f["network.cxi_devices"]
    if not cxi:
        return
    env = f["env.vars"]
    plugin = f.get("network.nccl_net_plugin")
    provider = env.get("FI_PROVIDER")
    problems = []
    if not plugin:
        problems.append("no libnccl-net/librccl-net plugin on LD_LIBRARY_PATH")
    if provider and provider != "cxi":
        problems.append(f"FI_PROVIDER={provider}")
    if problems:
        yield Hit(message=f"Slingshot devices ({', '.join(cxi)}) but {'; '.join(problems)}: NCCL/RCCL will use TCP",
                  fix="export FI_PROVIDER=cxi   # and module load the site's aws-ofi-nccl (aws-ofi-rccl) module",
                  evidence={"network.cxi_devices": cxi, "network.nccl_net_plugin": plugin, "env.FI_PROVIDER": provider})


def _loopback(addr: str) -> bool:
    return addr.startswith("127.") or addr in ("::1", "0:0:0:0:0:0:0:1")


def _loopback_fix(f: FactView) -> str:
    """The fix names an interface this node has: an example name would break the job it is pasted into."""
    ifaces = f.get("network.interfaces")
    up = [i.get("name") for i in ifaces if isinstance(i, dict) and i.get("operstate") in ("up", "unknown")] \
        if isinstance(ifaces, list) else []
    joining = [n for n in up if isinstance(n, str) and n != "lo"
               and not re.match(r"^(docker|virbr|veth|br-|cni|flannel|ifb)", n)]
    lines = ["getent hosts \"$(hostname)\"   # the address the node's name resolves to: 127.0.1.1 or 127.0.0.1 is loopback",
             "ip -brief addr   # the interfaces and their addresses: pick the one the nodes share"]
    if joining:
        name = shlex.quote(_suggest(joining))
        lines.append(f"export GLOO_SOCKET_IFNAME={name} NCCL_SOCKET_IFNAME={name}   # {name}: of this node's interfaces "
                     f"({', '.join(joining)}), the one that joins the nodes")
    else:
        lines.append("# then, for the job: export GLOO_SOCKET_IFNAME=<that interface> NCCL_SOCKET_IFNAME=<that interface>")
    lines.append("# administrators: in /etc/hosts, map the node's name to that interface's address, not 127.0.1.1")
    return "\n".join(lines)


@rule("NET015", "hostname-resolves-to-loopback", "warning",
      "the node's host name resolves to a loopback address, which a multi-node rendezvous advertises", impact=6,
      also={"info": "a single-node run, or torch's Gloo loopback fallback pasted alone: harmless until ranks span nodes"})
def hostname_resolves_to_loopback(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node: /etc/hosts maps the host name (or its first label) only to a loopback address,
        as Debian's and Ubuntu's installers write it ("127.0.1.1 <hostname>"); a warning in a job
        spanning several nodes, info otherwise. In a pasted log, torch's "Unable to resolve hostname
        to a (local) address. Using the loopback address as fallback." (ProcessGroupGloo), at info,
        a warning beside Gloo's "connectFullMesh failed"; gloo's "connect [127.0.1.1]:3210:
        Connection refused" (transport/tcp/pair.cc), a warning: a rank advertised a loopback address.

    Why it matters:
        Gloo (torch.distributed's CPU backend, vLLM's and SGLang's CPU groups) binds the address the
        host name resolves to, or loopback; PaddlePaddle's fleet, MPI launchers and other
        rendezvous also advertise it. A loopback address is unreachable from other nodes: the job
        works on one machine and fails with "connection refused" or a timeout across machines.

    How to fix:
        Name the interface that joins the nodes (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME), or have
        the administrators map the host name to that interface's address in /etc/hosts.

    References:
        - https://man7.org/linux/man-pages/man5/hosts.5.html
        - https://www.debian.org/doc/manuals/debian-reference/ch05.en.html (the hostname resolution, 127.0.1.1)
        - https://pytorch.org/docs/stable/distributed.html (GLOO_SOCKET_IFNAME)
        - https://pypi.org/project/torch/2.13.0/ (libtorch_cpu.so: the Gloo loopback fallback warning)
    """
    told = catalogued(f, "hostname-resolves-to-loopback")
    peer = next((s for s in f.get("ticket.symptoms") or []
                 if s.get("id") == "torch:gloo-connect-peer-failed" and _loopback(str(s.get("peer") or ""))), None)
    if not told and peer is not None:
        # a rank connecting to a loopback address another rank advertised: that rank's name resolves to it
        yield Hit(message=f"gloo connected to {peer.get('peer')}:{peer.get('port')}, a loopback address another rank "
                          f"advertised (line {peer.get('line')}: \"{told_text(peer)}\"): that rank's host name resolves to "
                          "loopback (Debian's and Ubuntu's 127.0.1.1 line in /etc/hosts), so ranks on other nodes cannot reach it",
                  fix=_loopback_fix(f), evidence={"ticket.line": peer.get("line"), "message": peer.get("id")},
                  # 127.0.1.1 is only ever a host name's line; 127.0.0.1 is also a one-node job's own choice
                  severity=None if str(peer.get("peer")) == "127.0.1.1" else "info")
        return
    if told:
        s = told[0]
        mesh = any(t.get("id") == "torch:gloo-connect-full-mesh-failed" for t in f.get("ticket.symptoms") or [])
        yield Hit(message=f"Gloo bound the loopback address because the host name did not resolve to a usable one (line "
                          f"{s.get('line')}: \"{told_text(s)}\"): "
                          + ("and its full mesh then failed: ranks on other nodes cannot connect to a loopback address"
                             if mesh else "harmless on one node, ranks on other nodes cannot connect to it"),
                  fix=_loopback_fix(f), evidence={"ticket.line": s.get("line"), "message": s.get("id")},
                  severity=None if mesh else "info")
        return
    addrs = f.get("system.hostname_addresses")
    if not isinstance(addrs, list) or not addrs or not all(_loopback(str(a)) for a in addrs):
        return
    host = f.get("system.hostname")
    multi = _multinode(f)
    if not multi and f.get("scheduler.in_job") is True and f.get("scheduler.nodes") == 1:
        return  # inside a one-node job nothing advertises the name to another node: nothing to say
    yield Hit(message=f"/etc/hosts maps this node's name {host} to {', '.join(map(str, addrs))} only: a rendezvous that "
                      "advertises the host name's address (Gloo, MPI launchers, PaddlePaddle's fleet) gives other nodes a "
                      "loopback address they cannot reach"
                      + (f" (this job spans {f.get('scheduler.nodes')} nodes)" if multi else "; harmless while a job stays on one node"),
              fix=_loopback_fix(f), evidence={"system.hostname": host, "system.hostname_addresses": addrs},
              severity=None if multi else "info")
