"""An NFS server that stopped answering this node, as the kernel's RPC client says it
(knowledge/messages/kernel_storage.toml: "nfs: server X not responding, still trying" / "timed out",
for nfs, nfs4 and lockd alike, and "nfs: server X OK" when it answers again). The line states the
fact: a hard mount blocks every process that touches it, a soft mount returns I/O errors. The
server's own load or health is not on this node; what this node can check is whether it reaches it."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "nfs-server-not-responding"
_OK = "kernel_storage:rpc-server-ok"
# A server name as the kernel prints it (xprt->servername: a host name or an IPv4/IPv6 address).
_SERVER = re.compile(r"[\w.:\[\]-]{1,255}")


def _fix(server: str) -> str:
    host = shlex.quote(server) if server else "SERVER"
    return "\n".join([
        "findmnt -t nfs,nfs4 -o TARGET,SOURCE,OPTIONS   # this node's NFS mounts: hard or soft, timeo=, retrans=, and which "
        "server each names",
        f"ping -c 3 {host}   # does this node reach the server at all",
        f"rpcinfo -n 2049 -t {host} nfs   # does the server's NFS service answer on its port (no answer: the server or a "
        "firewall between)",
        "sudo dmesg -T | grep -E 'not responding|server .* OK'   # when it stopped answering and whether it came back",
        "# administrators: on the server, its nfsd threads, load and disks (a server busy with other jobs' I/O answers late); "
        "jobs blocked in state D on a hard mount resume when it answers",
    ])


def _recovered(f: FactView, s: dict) -> Optional[dict]:
    """The kernel's "server X OK" for the same server after the line that said it stopped answering."""
    line = s.get("line") if isinstance(s.get("line"), int) else 0
    return next((o for o in f.get("ticket.symptoms") or [] if o.get("id") == _OK and o.get("server") == s.get("server")
                 and isinstance(o.get("line"), int) and o["line"] > line), None)


@rule("SYS046", SYMBOL, "error", "an NFS server stopped answering this node: I/O on its mounts hangs or fails", impact=6,
      also={"warning": "the same server answered again later in the paste (\"server X OK\"): the outage is over"})
def nfs_server_not_responding(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, the RPC client's "<program>: server <name> not responding, still
        trying" (a hard mount: the call is retried until the server answers) and "... not
        responding, timed out" (a soft mount: the call failed), for nfs, nfs4 and lockd (the NFS
        lock manager) alike: an error. Where the same server's "server <name> OK" follows, it
        answered again: a warning.

    Why it matters:
        On a hard mount (the default) every process touching the mount blocks in state D until the
        server answers: jobs hang, cannot be killed, and the node may be drained as unresponsive;
        on a soft mount reads and writes fail with "Input/output error". The cause is the server
        (overloaded, down, failing over) or the network between; the node's own health is fine.

    How to fix:
        Check that the node reaches the server (ping, rpcinfo on port 2049) and which mounts name
        it (findmnt); administrators look at the server's load, nfsd threads and disks. Jobs on a
        hard mount resume by themselves when it answers.

    References:
        - https://github.com/torvalds/linux/blob/v6.1/net/sunrpc/clnt.c (rpc_check_timeout: "%s: server %s not responding, still trying" / "timed out"; call_decode: "%s: server %s OK")
        - https://man7.org/linux/man-pages/man5/nfs.5.html (hard and soft mounts, timeo, retrans)
        - https://github.com/pulibrary/princeton_ansible/issues/6612 (nfs: server not responding, still trying; fixed by mounting from another server)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    raw = str(s.get("server") or "")
    server = raw if _SERVER.fullmatch(raw) else ""
    soft = s.get("state") == "timed out"
    gets = ("its calls failed with I/O errors (a soft mount)" if soft else
            "every process touching its mounts blocks until it answers (a hard mount)")
    back = _recovered(f, s)
    if back is not None:
        yield Hit(message=f"the NFS server {server or '(named in the line)'} stopped answering this node (line {s.get('line')}: "
                          f"\"{told_text(s)}\") and answered again at line {back.get('line')}: {gets} meanwhile",
                  fix=_fix(server), evidence=told_evidence(s), severity="warning")
        return
    yield Hit(message=f"the NFS server {server or '(named in the line)'} stopped answering this node (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): {gets}; the server or the network to it, not this node",
              fix=_fix(server), evidence=told_evidence(s))
