"""Name resolution that maps one node's address to another node's name (a stale /etc/hosts after
nodes were re-created with reused addresses, or DNS records that disagree): read from Grid
Engine's commlib, which names both host names when they disagree
(knowledge/messages/sge_commlib_hosts.toml)."""

from __future__ import annotations

import re
import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "etc-hosts-stale-entries"
_ADDRESS_FIRST = "sge_commlib_hosts:CL_TCP_FW_ADDR_NAME_RESOLVE_HOST_ERROR"


def _label(name: str) -> str:
    return name.strip().lower().split(".")[0]


def _q(name: str) -> str:
    return shlex.quote(name) if re.fullmatch(r"[A-Za-z0-9._-]{1,253}", name) else "HOST"


@rule("NET047", SYMBOL, "error", "one address resolves to two host names: a stale /etc/hosts entry (or DNS) maps a node's address to another node's name",
      impact=6)
def etc_hosts_stale_entries(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Grid Engine's communication library refusing a connection because the
        host names its two ends use disagree, with two different host names (not a short name
        and its domain): 'commlib error: local host name error (IP based host name resolving
        "node028" doesn't match client host name from connect message "node001")' (the peer's
        address resolves here to node028, the peer calls itself node001), the server's answer
        'client IP resolved to host name "A". This is not identical to clients host name "B"',
        'reverse mapping of IP "10.0.0.28" returns "A" while name resolving returns "B"', and the
        destination, source and rdata variants ('remote rdata host name "A" is not equal to local
        resolved host name "B"', 'server host resolves rdata host "A" as "B"').

    Why it matters:
        Two names for one address means that name resolution on this host (its /etc/hosts, or
        DNS) maps one node's address to another node's name: typically nodes re-created with
        reused addresses (cloud spot instances killed and restarted, StarCluster nodes re-added)
        while /etc/hosts keeps the old lines. Grid Engine refuses every connection from that node
        (qrsh, qsub -sync, execd), and MPI launchers and ssh meet the wrong host too. The
        pasted words name both hosts; only the node's /etc/hosts shows which line is stale.
        A short name against its fully qualified form is another fault (host_aliases,
        default_domain) and is not reported here.

    How to fix:
        Compare what each name and address resolves to on the host that printed the error
        (getent hosts NAME, getent hosts ADDRESS), find the lines that name them in /etc/hosts,
        and correct /etc/hosts on every node and the master so that each address carries one
        name (a cluster tool that writes /etc/hosts, StarCluster's, rewrites it when nodes are
        re-added); Grid Engine's host_aliases file maps names only, it does not fix an address.
        commlib keeps resolved names in its host cache (re-resolved after 1 minute, dropped
        after 10, cl_host_list.h); restart sge_execd or sge_qmaster if the error persists.

    References:
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/libs/comm/msg_commlib.h (85000-85025)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/libs/comm/cl_communication.c (cl_com_connection_complete_request, cl_com_cached_gethostbyaddr)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/libs/comm/cl_host_list.h
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/doc/man/man5/host_aliases.5
        - https://github.com/jtriley/StarCluster/issues/570
    """
    for s in catalogued(f, SYMBOL):
        resolved, claimed = str(s.get("resolved") or ""), str(s.get("claimed") or "")
        if not resolved or not claimed or _label(resolved) == _label(claimed):
            continue
        a, b = _q(claimed), _q(resolved)
        ip = str(s.get("ip") or "")
        if s.get("id") == _ADDRESS_FIRST and re.fullmatch(r"[0-9a-fA-F.:]{2,45}", ip):
            said = (f"the address {ip} resolves to \"{resolved}\", and that name resolves to \"{claimed}\": the address and "
                    "the name are listed under two different hosts")
            back = f"getent hosts {ip}   # the name {ip} resolves to here: {resolved} means a line maps it to that host"
        else:
            said = (f"the address of the host that names itself \"{claimed}\" resolves here to \"{resolved}\": one "
                    "address, two host names")
            back = (f"getent hosts \"$(getent hosts {a} | awk '{{print $1; exit}}')\"   # the name {claimed}'s address "
                    f"resolves back to: {resolved} means a stale line gives that address to {resolved}")
        yield Hit(message=(f"line {s.get('line')}: \"{told_text(s)}\": Grid Engine refused the connection because {said}; "
                           f"name resolution on this host maps a node's address to another node's name: a stale /etc/hosts "
                           "entry left when nodes were re-created with reused addresses (cloud instances restarted), or DNS "
                           "records that disagree"),
                  fix="\n".join([
                      f"getent hosts {a} {b}   # the address each name resolves to here (/etc/hosts first, then DNS: "
                      "grep hosts /etc/nsswitch.conf)",
                      back,
                      f"grep -n -w -e {a} -e {b} /etc/hosts   # the lines naming them: an old address left under one name, "
                      "or one address under both",
                      "cat \"$SGE_ROOT/$SGE_CELL/common/host_aliases\" 2>/dev/null   # Grid Engine's own name aliases, "
                      "applied before it compares names",
                      f"# administrators: on {claimed} run hostname -I (its address now), then correct /etc/hosts on every "
                      "node and the master so that each address has one name; commlib re-resolves cached names within "
                      "minutes (cl_host_list.h), or restart sge_execd / sge_qmaster"]),
                  evidence=told_evidence(s))
        return
