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
    "batch_daemons:PBSE_SERVER_NOT_FOUND": ("TORQUE", "pbs_server",
                                            "cat /var/spool/torque/server_name   # the server host the clients try"),
}


@rule("ENV091", SYMBOL, "error", "the batch system's daemon does not answer: it is down, or this cluster does not run it",
      impact=6)
def batch_system_not_in_service(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a batch client that reached no daemon of its batch system: LSF's
        lserrno texts "LIM is down; try later" (LSE_LIM_DOWN) and "Cannot locate master LIM now,
        try later" (LSE_MASTR_UNKNW), as lsid, bsub or MATLAB's LSF integration print them; Grid
        Engine's "unable to contact qmaster using port N on host "H""; TORQUE's "Could not
        connect to batch server" (PBSE_SERVER_NOT_FOUND).

    Why it matters:
        Nothing can be submitted or queried until the daemon answers. Where it is down, the
        administrators restart it; where the site has moved to another batch system (LSF replaced
        by Slurm), the client, the tool's cluster profile or a module still points at the old
        one, and only switching the tool to the scheduler the cluster runs helps.

    How to fix:
        Ask which batch system the cluster runs now (sinfo, qstat, bqueues answer on a login
        node); point the tool's profile at it, or have the administrators restart the daemon.

    References:
        - https://www.ibm.com/docs/en/spectrum-lsf/10.1.0?topic=lsf-troubleshooting-error-messages
        - https://github.com/daimh/sge/blob/05d828f59b32c238936b362cdb89292d261a2b9f/source/libs/gdi/msg_gdilib.h (MSG_GDI_UNABLE_TO_CONNECT_SUS)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/include/pbs_error_db.h (PBSE_SERVER_NOT_FOUND)
        - https://github.com/cihlab/fics-cluster-guide/issues/14 (LSF replaced by Slurm)
    """
    told = catalogued(f, SYMBOL)
    if not told:
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
