"""A batch system whose daemon does not answer this host: LSF's LIM, Grid Engine's qmaster, TORQUE's
pbs_server (knowledge/messages/batch_daemons.toml). Slurm's controller has its own rule
(slurm_rpc.py, slurm-controller-unreachable)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "batch-system-not-in-service"
_WHICH = {
    "batch_daemons:LSE_LIM_DOWN": ("LSF", "LIM (the Load Information Manager)",
                                   "lsid; lsclusters   # does any LSF master answer (LSF_ENVDIR/lsf.conf names the masters)"),
    "batch_daemons:LSE_MASTR_UNKNW": ("LSF", "master LIM",
                                      "lsid; lsclusters   # does any LSF master answer (LSF_ENVDIR/lsf.conf names the masters)"),
    "batch_daemons:sge-unable-to-contact-qmaster": ("Grid Engine", "sge_qmaster",
                                                    "cat $SGE_ROOT/${SGE_CELL:-default}/common/act_qmaster   # the master host the clients try"),
    "batch_daemons:sge-unable-to-send-to-qmaster": ("Grid Engine", "sge_qmaster",
                                                    "cat $SGE_ROOT/${SGE_CELL:-default}/common/act_qmaster   # the master host the clients try"),
    "batch_daemons:PBSE_SERVER_NOT_FOUND": ("TORQUE", "pbs_server",
                                            "cat /var/spool/torque/server_name   # the server host the clients try"),
    # cnt2server.c's words for ECONNREFUSED, and the command's own line with errno=111 (pbs_clients.toml)
    "pbs_clients:torque-default-server-refused": ("TORQUE", "pbs_server",
                                                  "cat /var/spool/torque/server_name   # the server host the clients try"),
    "pbs_clients:torque-specified-server-refused": ("TORQUE", "pbs_server",
                                                    "echo \"${PBS_DEFAULT:-${PBS_SERVER:-no server named in the environment}}\"   # the server host given"),
    "pbs_clients:torque-server-connection-refused": ("TORQUE", "pbs_server",
                                                     "cat /var/spool/torque/server_name   # the server host the clients try"),
}


# Grid Engine's lines that name the qmaster's host and port (MSG_GDI_UNABLE_TO_CONNECT_SUS 43119,
# MSG_GDI_CANT_SEND_MSG_TO_PORT_ON_HOST_SUSS 43118, MSG_GDI_CANT_CONNECT_HANDLE_SSUUS 43298).
_SGE_QMASTER = frozenset({"batch_daemons:sge-unable-to-contact-qmaster", "batch_daemons:sge-unable-to-send-to-qmaster",
                          "batch_daemons:sge-cant-connect-handle"})
_SGE_PORT = "6444"   # sge_qmaster's registered port (IANA sge-qmaster 6444), the installer's default


@rule("ENV091", SYMBOL, "error", "the batch system's daemon does not answer: it is down, or this cluster does not run it",
      impact=6)
def batch_system_not_in_service(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a batch client that reached no daemon of its batch system: LSF's
        lserrno texts "LIM is down; try later" (LSE_LIM_DOWN) and "Cannot locate master LIM now,
        try later" (LSE_MASTR_UNKNW), as lsid, bsub or MATLAB's LSF integration print them; Grid
        Engine's "unable to contact qmaster using port N on host "H"" (43119), "unable to send
        message to qmaster using port N on host "H": <commlib text>" (43118) and "communication
        error for "host/prog/1" using connect port N: "<commlib text>"" (43298), with the reason
        its "commlib error: <text> (<errno text>)" line gives (commlib's CL_RETVAL_* table: got
        select error, can't connect to service, got connect timeout, access denied ...); TORQUE's
        "Could not connect to batch server" (PBSE_SERVER_NOT_FOUND), and its clients' words for a
        refused connection: "Cannot connect to default server host 'H' - check pbs_server daemon
        and/or trqauthd." (cnt2server.c, ECONNREFUSED), "Cannot connect to specified server host
        'H'." and "<cmd>: cannot connect to server H (errno=111) Connection refused".

    Why it matters:
        Nothing can be submitted or queried until the daemon answers. Where it is down, the
        administrators restart it; where the site has moved to another batch system (LSF replaced
        by Slurm), the client, the tool's cluster profile or a module still points at the old
        one, and only switching the tool to the scheduler the cluster runs helps.

    How to fix:
        Ask which batch system the cluster runs now (sinfo, qstat, bqueues answer on a login
        node); point the tool's profile at it, or have the administrators restart the daemon.
        Grid Engine, in order: the host act_qmaster names (is it the qmaster now?), qping on that
        host and port, sge_qmaster's service there, then a firewall between (nc -zv host port).
        The paste cannot tell these apart: one "Connection refused" came from a host still
        configured as the master, one from a master move, one from a network move.

    References:
        - https://www.ibm.com/docs/en/spectrum-lsf/10.1.0?topic=lsf-troubleshooting-error-messages
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/libs/gdi/msg_gdilib.h (MSG_GDI_UNABLE_TO_CONNECT_SUS)
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/libs/comm/lists/msg_commlistslib.h (commlib's texts)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/include/pbs_error_db.h (PBSE_SERVER_NOT_FOUND)
        - https://github.com/cihlab/fics-cluster-guide/issues/14 (LSF replaced by Slurm)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/lib/Libcmds/cnt2server.c (ECONNREFUSED)
        - https://github.com/cBio/cbio-cluster/issues/178 (pbs_server crashed)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    sge = next((s for s in told if str(s.get("id")) in _SGE_QMASTER), None)
    if sge is not None:
        yield _sge_hit(f, sge)
        return
    s = told[0]
    product, daemon, look = _WHICH.get(str(s.get("id")), ("the batch system", "its daemon", "# the batch system's configuration names its master host"))
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the {product} client reached no {daemon}: it is down, "
                      f"or this cluster no longer runs {product} (a site that moved to another scheduler)",
              fix=(f"{look}\n"
                   "command -v sinfo qstat bqueues condor_q   # which scheduler's clients this host has; the one that answers is the cluster's\n"
                   f"# another scheduler answers: switch the tool's cluster profile (MATLAB's, a workflow's executor) to it; "
                   f"none does: the administrators restart {daemon}"),
              evidence=told_evidence(s))


def _sge_hit(f: FactView, s: dict) -> Hit:
    """Grid Engine's qmaster line, with the host and port it names and the commlib reason beside it
    (the "commlib error: ..." line the client prints first, batch_daemons.toml's CL_RETVAL_* entries)."""
    host, port = s.get("host"), s.get("port") or _SGE_PORT
    commlib = next((c for c in f.get("ticket.symptoms") or []
                    if str(c.get("id", "")).startswith("batch_daemons:CL_RETVAL_")), None)
    why = ""
    if commlib is not None:
        detail = f" ({commlib['detail'].strip()})" if commlib.get("detail") else ""
        why = f"; commlib said \"{commlib.get('message', '').strip()}{detail}\" ({str(commlib.get('id')).split(':')[1]})"
        if "refused" in str(commlib.get("detail", "")).lower():
            why += (": the host answered and nothing took the connection on that port (sge_qmaster not running "
                    "there, or a firewall rejecting it)")
    where = f"on host {host} port {port}" if host else f"on port {port}"
    target = host or "$(cat $SGE_ROOT/${SGE_CELL:-default}/common/act_qmaster)"
    fix = (f"cat $SGE_ROOT/${{SGE_CELL:-default}}/common/act_qmaster   # the host the clients try: is {host or 'it'} the qmaster now?\n"
           f"qping -info {target} {port} qmaster 1   # does a qmaster answer on that host and port\n"
           f"ssh {target} 'systemctl status sgemaster* ; pgrep -a sge_qmaster'   # is sge_qmaster running there (unit names vary by site)\n"
           f"nc -zv {target} {port}   # refused or timed out with the qmaster running: a firewall between this host and it\n"
           "# act_qmaster names the wrong host: fix act_qmaster or the host's role; qmaster down: the administrators start it")
    ev = told_evidence(s)
    if commlib is not None:
        ev["ticket.commlib"] = told_text(commlib)
    return Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the Grid Engine client reached no sge_qmaster "
                       f"{where}{why}. The paste alone does not say which: the qmaster is down or moved, "
                       "this host's act_qmaster names the wrong host, or the network between them blocks the port",
               fix=fix, evidence=ev)
