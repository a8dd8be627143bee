"""RDMA set up half-way: an InfiniBand port without an IP address on its IPoIB interface, which
connection managers (rdma_cm) address peers by (libfabric's verbs provider and fabtests,
knowledge/messages/libfabric.toml); RDMA devices whose user-space providers are not installed where
the program runs, as in a container image without rdma-core (libibverbs.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

IPOIB = "ipoib-interface-unconfigured"
# fabtests' fi_getinfo ENODATA has other causes (provider not built, no NIC): a hint, never an alarm.
_HINT = "libfabric:fabtests-getinfo-enodata"
# dask's get_ip_interface naming an ib* interface without IPv4 (net_interfaces.toml).
_DASK = "net_interfaces:dask-ib-interface-no-ipv4"

LIBS = "container-rdma-libs-missing"
_NO_DRIVER = "libibverbs:no-userspace-driver"
_LOAD_FAILED = "libibverbs:driver-load-failed"

_IPOIB_FIX = ("ip -br addr show type ipoib   # every IPoIB interface (ib0, ibp...) and its addresses: none, or DOWN, is the fault\n"
              "ibdev2netdev 2>/dev/null || ls /sys/class/infiniband/*/device/net   # which netdev belongs to which HCA (mlx5_0 -> ib0)\n"
              "sudo nmcli connection add type infiniband ifname ib0 ipv4.method manual ipv4.addresses ADDRESS/PREFIX   "
              "# administrators: ib0's address on the fabric's IP subnet (or the site's DHCP/ifcfg-ib0), then nmcli connection up infiniband-ib0\n"
              "FI_LOG_LEVEL=warn fi_info -p verbs -t FI_EP_MSG   # libfabric: the connected endpoints are listed once an address is there")


@rule("NET027", IPOIB, "error", "no IPoIB interface has an IP address, so RDMA connection setup (rdma_cm) cannot work",
      impact=5, also={"info": "fabtests' fi_getinfo found no provider (FI_ENODATA): one of its causes, not shown",
                      "warning": "on a live node: an InfiniBand interface is up with no address beyond IPv6 link-local, "
                                 "and the node has RDMA devices"})
def ipoib_interface_unconfigured(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, libfabric's verbs provider warning that no RDMA-capable interface has an
        IP address: "no valid IPoIB interfaces found, FI_EP_MSG endpoint type would not be
        available" (libfabric 1.9 and later) or "No interface address found" (1.6 to 1.8), an
        error. A fabtests program's "fi_getinfo(): ..., ret=-61 (No data available)" alone is
        quoted back at info: FI_ENODATA says that no provider offered what was asked for, which
        an unaddressed IPoIB interface causes for the verbs provider's connected endpoints, and
        so do a provider that is not built and a node without the NIC. dask's "interface 'ib0'
        doesn't have an IPv4 address" (distributed's get_ip_interface, for interface='ib0') is the
        same fact on the node that printed it, an error.
        On a live node (or its snapshot), a warning where an InfiniBand interface (ARPHRD_INFINIBAND,
        type 32 in /sys/class/net/<if>/type) is up and has no IPv4 address and no IPv6 address
        beyond the link-local one the kernel gives every interface, on a node with RDMA devices.

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
        - https://github.com/torvalds/linux/blob/v6.12/include/uapi/linux/if_arp.h (ARPHRD_INFINIBAND 32)
    """
    told = catalogued(f, IPOIB)
    said = next((s for s in told if s.get("id") != _HINT), None)
    if said is not None and str(said.get("id")) == _DASK:
        quoted = str(said.get("matched") or told_text(said)).strip()[:120]
        yield Hit(message=f"\"{quoted}\": dask was told to use {said.get('ifname')}, which this node has without an "
                          "IPv4 address: IPoIB is unconfigured here or has only IPv6 (the host where it worked, often the "
                          "login node, has an IPv4 address on it). Give these nodes' IPoIB interfaces IPv4 addresses, or "
                          "name an interface they have with one",
                  fix=_IPOIB_FIX, evidence=told_evidence(said))
        return
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
        return
    if not told:
        yield from _live_ipoib_unaddressed(f)


_ARPHRD_INFINIBAND = "32"   # include/uapi/linux/if_arp.h


def _routable(iface: dict) -> bool:
    """An address rdma_cm can be handed by a peer: any IPv4, or IPv6 other than link-local (which
    every up interface gets, and which needs the interface named beside it)."""
    return bool(iface.get("ipv4")) or any(isinstance(a, dict) and a.get("scope") not in ("link", "host")
                                          for a in iface.get("ipv6") or [])


def _live_ipoib_unaddressed(f: FactView) -> Iterator[Hit]:
    """The live judgement on network.interfaces (checks/network.py). Read with f[...] so that a
    snapshot without the RDMA devices or an interface's addresses is skipped, never passed."""
    if not f["network.rdma_ports"]:
        return
    ifaces = f["network.interfaces"]
    bare = []
    for i, iface in enumerate(ifaces):
        if not isinstance(iface, dict) or str(iface.get("type")) != _ARPHRD_INFINIBAND or iface.get("operstate") != "up":
            continue
        for family in ("ipv4", "ipv6"):
            if iface.get(family) is None:   # unknown (flattened to None): f[...] skips the rule with its reason
                _ = f[f"network.interfaces.{i}.{family}"]
        if not _routable(iface):
            bare.append(str(iface.get("name")))
    if not bare:
        return
    names = ", ".join(bare)
    yield Hit(message=f"the InfiniBand interface(s) {names} are up with no IP address (none, or IPv6 link-local only) on a node "
                      "with RDMA devices: rdma_cm (libfabric's verbs FI_EP_MSG, UCX's rdmacm, perftest -R) has no address to "
                      "bind or resolve through them",
              fix=_IPOIB_FIX, severity="warning",
              evidence={"interfaces": [{k: x.get(k) for k in ("name", "operstate", "type", "ipv4", "ipv6")}
                                       for x in ifaces if isinstance(x, dict) and str(x.get("name")) in bare],
                        "rdma_ports": len(f["network.rdma_ports"])})


_LIBS_FIX = ("ls /etc/libibverbs.d; ls /usr/lib*/libibverbs /usr/lib/*-linux-gnu/libibverbs 2>/dev/null   # the providers installed where the "
             "program runs (in the container: run these inside it)\n"
             "apt-get install -y ibverbs-providers libibverbs1 ibverbs-utils   # Debian/Ubuntu image: rdma-core's providers (libmlx5 among them)\n"
             "dnf install -y rdma-core libibverbs libibverbs-utils   # RHEL/Rocky image (yum on older ones)\n"
             "ibv_devinfo   # then: the HCA is listed with its ports, no 'no userspace device-specific driver' warning\n"
             "# an image with NVIDIA's MLNX_OFED user space (their mofed_dockerfiles) instead must match the host's driver version")


@rule("NET028", LIBS, "error", "the node's RDMA devices have no user-space provider where the program runs", impact=5,
      also={"warning": "libibverbs' provider list (/etc/libibverbs.d) is missing and no device is named yet"})
def container_rdma_libs_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, libibverbs' "Warning: no userspace device-specific driver found for
        <device>": the kernel shows the RDMA device, and no user-space provider library (libmlx5,
        librxe, ...) claims it, an error (with its "couldn't load driver '<name>': ..." quoted
        where that says which library is absent); and "couldn't open config directory
        '/etc/libibverbs.d'" alone, a warning: no provider package is installed. A "couldn't
        load driver" alone is left alone: where another provider serves the device (a RoCE node
        with ipath.driver left in /etc/libibverbs.d) it is harmless.

    Why it matters:
        RDMA is split between the kernel driver (on the host) and a user-space provider loaded
        by libibverbs (in the program's file system). A container image or environment with
        libibverbs but without rdma-core's providers sees /dev/infiniband and
        /sys/class/infiniband and still cannot open the HCA: ibv_devinfo lists nothing, Open
        MPI, UCX and NCCL fall back to TCP sockets, and multi-node jobs run many times slower
        or fail.

    How to fix:
        Install rdma-core's providers in the image (ibverbs-providers and libibverbs1 on
        Debian/Ubuntu, rdma-core and libibverbs on RHEL), or build it from an image that has
        them (NVIDIA's MOFED images, whose version must match the host driver's), and check
        with ibv_devinfo inside the container.

    References:
        - https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/init.c (no userspace device-specific driver found)
        - https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/dynamic_driver.c (config directory, couldn't load driver)
        - https://github.com/Mellanox/k8s-rdma-sriov-dev-plugin/issues/17 (the libraries come with the image, not the device plugin)
        - https://github.com/Mellanox/mofed_dockerfiles (images with the RDMA user space)
    """
    told = catalogued(f, LIBS)
    symptoms = f.get("ticket.symptoms") or []
    device = next((s for s in told if s.get("id") == _NO_DRIVER), None)
    if device is not None:
        failed = next((s for s in symptoms if s.get("id") == _LOAD_FAILED), None)
        extra = (f"; libibverbs could not load the provider named in its list (line {failed.get('line')}: "
                 f"\"{told_text(failed)}\")") if failed is not None else ""
        yield Hit(message=f"libibverbs found no user-space provider for an RDMA device the kernel shows (line {device.get('line')}: "
                          f"\"{told_text(device)}\"){extra}: the provider libraries (rdma-core's ibverbs-providers) are not installed "
                          "where the program runs, as in a container image without them",
                  fix=_LIBS_FIX, evidence=told_evidence(device))
        return
    conf = next((s for s in told if s.get("id") == "libibverbs:config-dir-missing"), None)
    if conf is not None:
        yield Hit(message=f"libibverbs has no provider list (line {conf.get('line')}: \"{told_text(conf)}\"): no RDMA provider package "
                          "is installed where the program runs, so it cannot open an HCA there",
                  fix=_LIBS_FIX, evidence=told_evidence(conf), severity="warning")
