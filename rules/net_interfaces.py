"""A network interface named for a job (dask's interface=, GLOO_SOCKET_IFNAME, Open MPI's
btl_tcp_if_include) that the node it runs on does not have, or has without an address
(knowledge/messages/net_interfaces.toml). NCCL's NCCL_SOCKET_IFNAME is nccl_env.py's."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "network-interface-missing-on-node"

_LIST = "ip -br addr   # on the node that failed (srun -N1 ip -br addr from a login node): its interfaces and addresses"
# Per emitter: who named the interface, and how to name one the node has.
_FIX = {
    "dask": ("# dask-jobqueue: give the workers an interface the compute nodes have, and the scheduler (login node) its own\n"
             "python -c \"import psutil; print(list(psutil.net_if_addrs()))\"   # the names dask accepts on this host\n"
             "# SLURMCluster(interface='ib0', scheduler_options={'interface': 'ib1'})   # workers on ib0, scheduler on the login node's ib1"),
    "gloo": ("ip -br -4 addr   # the interfaces with an IPv4 address here; GLOO_SOCKET_IFNAME takes one such name, not an IP "
             "nor NCCL's ^lo,docker exclude list\n"
             "export GLOO_SOCKET_IFNAME=$(ip -4 route get 1.1.1.1 | awk '{for(i=1;i<=NF;i++) if($i==\"dev\"){print $(i+1); exit}}')   "
             "# the interface of the default route, or name the one that reaches MASTER_ADDR (Horovod: HOROVOD_GLOO_IFACE)"),
    "ompi": ("mpirun --mca btl_tcp_if_include 10.0.0.0/8 ...   # a network in CIDR form matches whatever the interface is "
             "called on each node (use the cluster's own network)\n"
             "ompi_info --param btl tcp --level 9 | grep if_include   # where the value comes from (an MCA file, OMPI_MCA_ variables)"),
    "oob": ("mpirun --mca oob_tcp_if_include 10.0.0.0/8 --mca btl_tcp_if_include 10.0.0.0/8 ...   # networks in CIDR form match "
            "whatever the interface is called on each node (use the cluster's own network)\n"
            "env | grep -i 'OMPI_MCA_.*if_include\\|PRTE_MCA_.*if_include'; grep -s if_include ~/.openmpi/mca-params.conf "
            "$(dirname $(dirname $(command -v mpirun)))/etc/*mca-params.conf   # where the value comes from"),
}


def _emitter(s: dict) -> str:
    key = str(s.get("id", "")).split(":", 1)[-1]
    return key.split("-", 1)[0]


@rule("NET041", SYMBOL, "error", "the network interface named for the job does not exist, or has no address, on this node",
      impact=6, also={"warning": "Open MPI's btl_tcp_if_include names an interface the node lacks: it ignores the value"})
def network_interface_missing_on_node(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program that was told to use a network interface by name and did not
        find it on the node: dask's "'ib0' is not a valid network interface. Valid network
        interfaces are: [...]" and "interface 'eth1' doesn't have an IPv4 address" (an ib*
        interface without IPv4 is ipoib-interface-unconfigured), Gloo's "ifa != nullptr. Unable
        to find address for: NAME" (GLOO_SOCKET_IFNAME, HOROVOD_GLOO_IFACE), and Open MPI's
        "An invalid value was given for btl_tcp_if_include ... Message: Unknown interface name"
        (a warning: Open MPI ignores the value and goes on), and its runtime's "None of the TCP
        networks specified to be included for out-of-band communications could be found" with
        the "Value given:" below it (the runtime's include list, oob_tcp_if_include; a warning: the daemons are then left with
        no network for their own traffic, and mpirun usually aborts with "No network interfaces
        were found for out-of-band communications").

    Why it matters:
        Interface names differ between login and compute nodes (a login node with ib1, eth0,
        eth1; compute nodes with ib0 only), and between clusters. A name copied from one host
        fails on the other: dask's scheduler or workers do not start, Gloo's process group
        aborts, Open MPI falls back to other interfaces or none.

    How to fix:
        List the interfaces of the node that failed (ip -br addr there), and name one that
        every node running that part of the job has, with an address: dask-jobqueue takes an
        interface for the workers and scheduler_options={'interface': ...} for the scheduler;
        GLOO_SOCKET_IFNAME takes one interface name; Open MPI takes a network in CIDR form,
        which matches whatever each node calls its interface.

    References:
        - https://github.com/dask/distributed/blob/40fcd99a8cd41c39071a16a546e93a9298f1b64d/distributed/utils.py (get_ip_interface)
        - https://jobqueue.dask.org/en/latest/clusters-interface.html (interface and scheduler_options)
        - https://github.com/pytorch/gloo/blob/70dc360272dfc57e3617184c78ff9b06f8cd4757/gloo/transport/tcp/device.cc (lookupAddrForIface)
        - https://pytorch.org/docs/stable/distributed.html#common-environment-variables (GLOO_SOCKET_IFNAME)
        - https://github.com/open-mpi/ompi/blob/3a8c8360abec71269369b350cec3c2fb61e1122d/opal/mca/btl/tcp/help-mpi-btl-tcp.txt ([invalid if_inexclude])
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/oob/tcp/help-oob-tcp.txt ([no-included-found]; oob_tcp_component.c component_available)
        - https://github.com/dask/dask-jobqueue/issues/382 (interfaces differ between login and compute nodes)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    who = _emitter(s)
    name = s.get("ifname") or "the interface named"
    if str(s.get("id")).endswith("no-ipv4"):
        what = f"interface {name}, which this node has without an IPv4 address (down, a bond member, or unconfigured)"
    else:
        what = f"interface {name}, which this node does not have (or has without an address)"
    if s.get("available"):
        what += f"; the node has: {s['available']}"
    program = {"dask": "dask", "gloo": "Gloo (GLOO_SOCKET_IFNAME, or Horovod's HOROVOD_GLOO_IFACE)", "ompi": "Open MPI (btl_tcp_if_include)",
               "oob": "Open MPI's runtime (the include list of its out-of-band TCP, the daemons' own network)"}.get(who, "the program")
    quoted = str(s.get("matched") or told_text(s)).strip()[:160]
    message = (f"line {s.get('line')}: \"{quoted}\": {program} was told to use {what}. The name was likely "
               "taken from another host (a login node's interfaces differ from the compute nodes')")
    severity = None
    if who == "ompi":
        message += "; Open MPI ignores the value and picks other interfaces, or none"
        severity = "warning"
    elif who == "oob":
        what = f"network(s) {name}, none of which this node has" if s.get("ifname") else "networks none of which this node has"
        message = (f"line {s.get('line')}: \"{quoted}\": {program} was told to use {what}. The value was likely taken from "
                   "another host (interface names differ between login and compute nodes); its daemons are left with no "
                   "network of their own, and mpirun usually aborts with \"No network interfaces were found\"")
        severity = "warning"
    fix = _LIST + "\n" + _FIX.get(who, "# name an interface the node has (the list above), on every node of the job")
    yield Hit(message=message, fix=fix, evidence=told_evidence(s), severity=severity)
