"""Open MPI's TCP transport between nodes: a connect() to a peer's address that does not route (an
interface such as docker0 or virbr0, or a second subnet, that the TCP BTL pairs with a peer's), read
from its own lines (knowledge/messages/openmpi.toml), and an exclude list that drops the default
loopback exclusion (the command line pasted, or the job's environment)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, stated, ticket_all, told_evidence, told_text

SYMBOL = "mpi-tcp-interface-unreachable"
# connect()'s errnos that say the peer's address is not reachable from this node (Linux errno
# numbers, glibc's strerror texts). Open MPI 3.0 to 4.0.2 printed "Operation now in progress (115)"
# in [client connect fail] instead of the socket's error (ompi PR #7131): the connect failed all the same.
_UNREACHABLE = {"113": "No route to host", "101": "Network is unreachable", "110": "Connection timed out"}
_MISREPORTED = "115"
_EXCLUDE_VAR = "OMPI_MCA_btl_tcp_if_exclude"
_CURED = "prose:ompi-tcp-if-cures-said"
# The TCP BTL's default exclude list is "127.0.0.1/8,sppp" (btl_tcp_component.c @ v4.1.8): a list
# set by hand keeps loopback out only where it names it.
_LOOPBACK = re.compile(r"^(?:lo\d{0,2}|127(?:\.\d{1,3}){0,3}(?:/\d{1,2})?)$")

_FIX = ("ip -brief address   # on every node: which interface joins the nodes; docker0, virbr0 or a subnet only some "
        "nodes share must not be used\n"
        "mpirun --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 ...   # the interface (or its network in "
        "CIDR, 10.0.0.0/16) that joins the nodes, for MPI traffic and the runtime's\n"
        "export OMPI_MCA_btl_tcp_if_include=eth0 OMPI_MCA_oob_tcp_if_include=eth0   # the same for every mpirun of the job "
        "(an exclude list instead must also name lo: btl_tcp_if_exclude lo,docker0,virbr0)")


def _unreachable(s: dict) -> Optional[str]:
    """The errno's text where this connect() failure says the peer's address does not route; None otherwise."""
    errno, error = str(s.get("errno") or ""), str(s.get("error") or "").strip()
    if errno in _UNREACHABLE or error in _UNREACHABLE.values():
        return _UNREACHABLE.get(errno) or error
    if errno == _MISREPORTED and s.get("key") == "btl-tcp:client-connect-fail-detail":
        return "connect() did not complete (Open MPI 3.0 to 4.0.2 print errno 115 there)"
    return None


def _exclude_without_loopback(f: FactView) -> Optional[dict]:
    """Where a pasted command line or the job's environment sets btl_tcp_if_exclude without the
    loopback device: {"list", "where", "evidence"}; None otherwise."""
    for s in ticket_all(f, "prose:ompi-btl-tcp-if-exclude"):
        items = [i for i in str(s.get("exclude") or "").strip("\"'").split(",") if i]
        if items and not any(_LOOPBACK.match(i) for i in items):
            return {"list": ",".join(items), "where": f"line {s.get('line')}: \"{told_text(s)}\"",
                    "evidence": told_evidence(s)}
    value = (f.get("env.vars") or {}).get(_EXCLUDE_VAR)
    if isinstance(value, str) and value.strip():
        items = [i.strip() for i in value.split(",") if i.strip()]
        if items and not any(_LOOPBACK.match(i) for i in items):
            return {"list": ",".join(items), "where": f"{_EXCLUDE_VAR}={value[:120]} in the job's environment",
                    "evidence": {f"env.vars.{_EXCLUDE_VAR}": value[:200]}}
    return None


@rule("NET014", SYMBOL, "warning", "Open MPI's TCP transport tries an interface that does not route between the nodes",
      impact=7, also={"info": "the user says naming the TCP interfaces (btl_tcp_if_include/exclude) cured a hang"})
def mpi_tcp_interface_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Open MPI's TCP BTL failing to connect to an address a peer rank published
        with "No route to host" (113), "Network is unreachable" (101) or "Connection timed out"
        (110): Open MPI 1.10 and 2.x's "[btl_tcp_endpoint.c:...:mca_btl_tcp_endpoint_complete_connect]
        connect() to <address> failed: No route to host (113)", 3.0 and later's "WARNING: Open MPI
        failed to TCP connect to a peer MPI process" topic with "Message: connect() to <address>:<port>
        failed" and its "Error:" line (errno 115 there in 3.0 to 4.0.2, which printed the wrong errno),
        "Unable to connect to the peer <address> on port <port>: ...", and the FAQ's older
        "connect() failed with errno=113". Also an exclude list set without the loopback device, in
        a pasted mpirun command line (--mca btl_tcp_if_exclude virbr0,...) or in the job's
        environment (OMPI_MCA_btl_tcp_if_exclude). At info, a user's own words that naming the
        interfaces (btl_tcp_if_include eth0, or an exclude list) stopped a hang or made the job
        work: the cure Open MPI's FAQ gives for this fault, reported, not the fault's own message.

    Why it matters:
        Open MPI uses every "up" IP interface it finds and pairs them with the peers' by its own
        reachability rules; an interface that only exists on one machine (docker0, virbr0: the
        same private address on every node) or a subnet only some nodes share is tried for
        traffic between nodes, and the job hangs or fails after MPI_Init. Setting the exclude list
        replaces its default, which excluded loopback; Open MPI's FAQ says loopback must then be
        named too.

    How to fix:
        Name the interface (or its network in CIDR) that joins the nodes, for MPI traffic and the
        runtime's: mpirun --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0, or the
        same as OMPI_MCA_ environment variables; an exclude list must include lo.

    References:
        - https://docs.open-mpi.org/en/v5.0.x/tuning-apps/networking/tcp.html (TCP errors; which interfaces to use)
        - https://github.com/open-mpi/ompi/blob/v4.1.8/opal/mca/btl/tcp/btl_tcp_endpoint.c
        - https://github.com/open-mpi/ompi/blob/v4.1.8/opal/mca/btl/tcp/btl_tcp_component.c (if_exclude's default)
        - https://github.com/open-mpi/ompi/issues/2168
        - https://github.com/horovod/horovod/issues/106 (a hang; fixed by excluding the nodes' other interfaces)
    """
    for s in catalogued(f, SYMBOL):
        why = _unreachable(s)
        if why is None:
            continue
        address = s.get("address")
        yield Hit(message=f"Open MPI's TCP transport could not connect to a peer's address{f' {address}' if address else ''}: "
                          f"{why} (line {s.get('line')}: \"{told_text(s)}\"); Open MPI's TCP FAQ: usually an interface that "
                          "does not route between the nodes (docker0, virbr0, a subnet only some nodes share) was paired with a peer's",
                  fix=_FIX, evidence={**told_evidence(s), "address": address})
        return
    excluded = _exclude_without_loopback(f)
    if excluded is not None:
        yield Hit(message=f"Open MPI's TCP exclude list {excluded['list']} does not name the loopback device ({excluded['where']}): "
                          "setting it replaces the default that excluded 127.0.0.1/8, so the TCP transport may try loopback and "
                          "the other local-only interfaces for peers on other nodes; Open MPI's FAQ: an exclude list must name them",
                  fix=f"mpirun --mca btl_tcp_if_exclude lo,{excluded['list']} ...   # loopback too, as Open MPI's TCP FAQ asks\n{_FIX}",
                  evidence=excluded["evidence"])
        return
    said = next((s for s in catalogued(f, SYMBOL) if s.get("id") == _CURED and stated(s)), None)
    if said is not None:
        yield Hit(message=f"the ticket says naming Open MPI's TCP interfaces cured it (line {said.get('line')}: "
                          f"\"{str(said.get('matched') or told_text(said))[:160]}\"): an interface that does not route between the nodes (a second NIC with "
                          "nobody behind it, docker0, virbr0) was being tried; Open MPI's TCP FAQ gives the same cure, for the "
                          "runtime's own traffic too", fix=_FIX, evidence=told_evidence(said), severity="info")


_ROMIO_FIX = ("ompi_info | grep -E 'MCA io:|Open MPI:'   # the io components this Open MPI has (romio321 in 4.x, "
              "romio341 in 5.0) and its version\n"
              "export OMPI_MCA_io=^ompio   # MPI-IO through ROMIO instead (or mpirun --mca io ^ompio; "
              "OMPI_MCA_io=romio321 on 4.x, romio341 on 5.0)\n"
              "# or keep OMPIO and tune it (Open MPI's MPI-IO tuning page): fs_ufs_lock_algorithm (its locking on "
              "NFS-like file systems), io_ompio_num_aggregators, the Lustre stripe settings")


@rule("NET022", "ompi-ompio-slow-on-parallel-fs", "info",
      "MPI-IO through Open MPI's default OMPIO component is slow or hangs on a shared file system", impact=4)
def ompi_ompio_slow_on_parallel_fs(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a user saying that MPI-IO through Open MPI's OMPIO component is slow or
        hangs (parallel HDF5 or NetCDF dumps, MPI_File_write_all on Lustre, GPFS or NFS).

    Why it matters:
        OMPIO is Open MPI's default io component: from 4.1 on every file system (priority 30
        against ROMIO's 10), in 4.0 everywhere but Lustre, where it lowered its own priority so
        that ROMIO ran. MPICH and Intel MPI use ROMIO. Applications tuned for ROMIO (HDF5's
        collective writes, older HDF5 API use) can run far slower or deadlock under OMPIO's
        locking and aggregation on a shared file system, and selecting ROMIO restores them.

    How to fix:
        Select ROMIO (OMPI_MCA_io=^ompio, or the romio component by name) and compare; or keep
        OMPIO and tune its locking (fs_ufs_lock_algorithm) and aggregators.

    References:
        - https://docs.open-mpi.org/en/v5.0.x/tuning-apps/mpi-io/ompio.html
        - https://docs.open-mpi.org/en/v5.0.x/tuning-apps/mpi-io/romio.html
        - https://github.com/open-mpi/ompi/blob/v4.1.8/ompi/mca/io/ompio/io_ompio_component.c (priority 30)
        - https://github.com/open-mpi/ompi/blob/v4.0.7/ompi/mca/io/ompio/io_ompio_component.c (priority 1 on Lustre)
        - https://github.com/open-mpi/ompi/issues/9479
    """
    told = catalogued(f, "ompi-ompio-slow-on-parallel-fs")
    if not told:
        return
    s = told[0]
    yield Hit(message=f"the user says MPI-IO through Open MPI's OMPIO is slow or hangs (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): OMPIO is Open MPI's default io component (4.1 and later on every file "
                      "system), and applications tuned for ROMIO often run far faster with it selected",
              fix=_ROMIO_FIX, evidence=told_evidence(s))
