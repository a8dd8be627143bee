"""A job submitted from a host the site does not allow to submit (a compute node, inside another
job): read from the site filters' and schedulers' own refusals (knowledge/messages/submit_host.toml)
and TORQUE's clients finding no trqauthd on the host (knowledge/messages/pbs_clients.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "slurm-submit-from-compute-node-refused"
_FIX = {
    "tacc": "sbatch job.sh   # from a login node: the site refuses submission from compute nodes",
    "sge": "qconf -ss   # the hosts Grid Engine accepts submissions from (an administrator adds one with qconf -as HOST)",
    "pbs": "qmgr -c 'list queue QUEUE acl_host_enable,acl_hosts'   # the hosts the queue admits (the message names the queue); submit from one of them",
    "lsf": "bsub < job.sh   # from a login node: the site refuses submission from compute nodes",
    "pbs-trust": ("qmgr -c 'print server' | grep -E 'allow_node_submit|submit_hosts|authorized_users|flatuid'   # the hosts "
                  "(and user@host pairs) the PBS server accepts submissions from\n"
                  "getent passwd $USER   # on the PBS server host: no line = the server does not know the account "
                  "(TORQUE then says 'MSG=User ... does not exist in server password file')\n"
                  "# administrators: TORQUE: qmgr -c 'set server allow_node_submit = True' or qmgr -c 'set server submit_hosts += NODE'; "
                  "OpenPBS: qmgr -c 'set server flatuid = True', or the node in the server's /etc/hosts.equiv"),
    "pbs-trqauthd": ("pgrep -l trqauthd; ls -l /tmp/trqauthd-unix   # TORQUE's commands authenticate through a trqauthd on "
                     "this host, over that socket: none answers here\n"
                     "echo \"${PBS_JOBID:-not inside a PBS job} on $(hostname)\"   # inside a job on a compute node: "
                     "run qsub from a login node instead\n"
                     "# administrators, where this is a login node: start trqauthd again (as root: systemctl start trqauthd); "
                     "compute nodes submit only where they run trqauthd and the server allows them "
                     "(qmgr -c 'set server allow_node_submit = True')"),
}
# PBSE_BADUSER entries (submit_host.toml): the bare text has three causes, the MSG= details name one.
_PBS_BARE = "submit_host:PBSE_BADUSER"
_PBS_HOST = ("submit_host:torque-ruserok-failed", "submit_host:torque-munge-not-authorized")
# TORQUE's client finding no trqauthd on this host (pbs_clients.toml): a compute node that does not run
# it (inside a job), or a login node whose trqauthd stopped; the line does not say which.
_TRQAUTHD = "pbs_clients:"
_WORKFLOW = ("# a workflow that submits its own jobs (Snakemake, Nextflow, Canu, Caper/Cromwell, Toil, a pilot): run its "
             "driver on a login node (in tmux or screen, or the site's workflow or interactive nodes), or run its steps "
             "inside one job (one allocation) with its local executor; Canu: useGrid=remote; Caper: caper init local; "
             "Toil: --batchSystem single_machine")


def _scheduler(s: dict) -> str:
    sid = str(s.get("id", ""))
    if sid.startswith("submit_host:sge-"):
        return "sge"
    if sid == "pbs_access:torque-host-acl":
        return "pbs"
    if sid == _PBS_BARE or sid in _PBS_HOST:
        return "pbs-trust"
    if sid.startswith(_TRQAUTHD):
        return "pbs-trqauthd"
    return "lsf" if sid.endswith("lsf-compute-nodes-cannot-submit") else "tacc"


@rule("SYS019", SYMBOL, "error", "the site refuses job submission from this host (a compute node): submit from a login node",
      impact=5, also={"warning": "PBS's bare \"Bad UID for job execution\" (PBSE_BADUSER): an untrusted submit host, or the "
                                 "account unknown on the PBS server, or root; TORQUE's \"could not connect to trqauthd\": no "
                                 "trqauthd on this host, a compute node inside a job or a login node whose trqauthd stopped"})
def slurm_submit_from_compute_node_refused(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a submission refused because of the host it came from: TACC's Slurm filter
        "[TACC]: Job submission is not allowed from this host. Please submit through one of the
        available login resources.", Grid Engine's qmaster answers 'denied: host "<node>" is no
        submit host' and 'denied: host "<node>" is neither submit nor admin host' (qsub prints them
        after "Unable to run job: "), PBS's and TORQUE's host ACL refusal (pbs_access.toml), an LSF
        site's "Compute Nodes cannot be used as submission host"; Grid Engine's "Unable to run job:
        denied: host" cut short. PBS's PBSE_BADUSER "Bad UID for job execution" at qsub: with
        TORQUE's "MSG=ruserok failed validating U/U from HOST" (or a MUNGE build's "could not
        authorize user U from HOST") the host is not trusted, an error; bare (OpenPBS, PBS Pro),
        a warning naming its three causes in the servers' source: a submit host not trusted for
        the user (not the server host; TORQUE's allow_node_submit, submit_hosts; ruserok's
        hosts.equiv), the user without a passwd entry on the PBS server host, or root. TORQUE's
        clients that find no trqauthd on the host ("<cmd>: cannot connect to server (null)
        (errno=15137) could not connect to trqauthd", "socket_connect_unix failed: 15137", "Error
        in connection to trqauthd (15137)-[could not connect to unix socket ...]"), a warning: every
        TORQUE command authenticates through a trqauthd on its own host, which sites run on their
        login nodes; a workflow driver submitting from inside a job meets it on the compute node,
        a login node meets it when its trqauthd stopped.

    Why it matters:
        Many sites accept jobs only from login nodes: a job_submit filter, Slurm's partition
        AllocNodes, Grid Engine's submit host list. A workflow driver or pilot that runs inside a
        job and submits its next steps is refused there, though the same workflow works where
        compute nodes may submit (Slurm's default). Slurm's own refusal for AllocNodes is the
        generic "Access/permission denied", which other causes share, and is not read here.

    How to fix:
        Submit from a login node: run the workflow's driver there (tmux, screen, or the site's
        workflow nodes), or run all its steps inside one job with a local executor (Caper's local
        mode, Toil's single_machine); only administrators can add compute nodes as submit hosts.
        TORQUE: qsub from a login node, where trqauthd runs; on a login node whose trqauthd
        stopped, the administrators start it again.

    References:
        - https://slurm.schedmd.com/slurm.conf.html#OPT_AllocNodes
        - https://slurm.schedmd.com/job_submit_plugins.html
        - https://github.com/hyeshik/tailseeker/issues/3
        - https://github.com/marbl/canu/issues/156
        - https://github.com/gridengine/gridengine/blob/7ff4c62d5793fb498f1d2955296a75717c823f12/source/daemons/qmaster/msg_qmaster.h (messages 33127, 33128)
        - https://github.com/TIGRLab/admin/issues/1270
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/server/geteusernam.c (is_user_allowed_to_submit_jobs, set_jobexid)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/lib/Libsite/site_check_u.c (site_check_user_map)
        - https://github.com/marbl/canu/issues/288 (PBS Pro: nodes not allowed to submit)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/lib/Libifl/trq_auth.c (socket_connect_unix to trqauthd)
        - https://github.com/ENCODE-DCC/atac-seq-pipeline/issues/232 (Caper inside a PBS job: the site's IT and the maintainer)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    # a refusal that names its cause first (a MSG= detail names the one PBSE_BADUSER's bare text leaves open); then TORQUE's command line that says trqauthd; the bare text last
    s = min(told, key=lambda t: (t.get("id") == _PBS_BARE,
                                 str(t.get("id", "")).startswith(_TRQAUTHD) and t.get("id") != _TRQAUTHD + "torque-trqauthd-unreachable",
                                 str(t.get("id", "")).startswith(_TRQAUTHD)))
    kind = _scheduler(s)
    where = f" ({s.get('host')})" if s.get("host") else ""
    fix = _FIX[kind].replace("QUEUE", str(s["queue"])) if kind == "pbs" and s.get("queue") else _FIX[kind]
    if kind == "pbs-trqauthd":
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": this TORQUE command found no trqauthd on the host it "
                          "ran on (every TORQUE command authenticates through a trqauthd on its own host, over the socket "
                          "/tmp/trqauthd-unix): a compute node, inside a job, where the site runs trqauthd only on its login "
                          "nodes (a workflow submitting its next jobs from inside a job), or a login node whose trqauthd "
                          "stopped; the line does not say which",
                  fix=f"{fix}\n{_WORKFLOW}", evidence=told_evidence(s), severity="warning")
        return
    if s.get("id") == _PBS_BARE:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the PBS server refused the job at submission "
                          "(PBSE_BADUSER), for one of three causes its source gives: the submitting host is not trusted for "
                          "this user (a compute node where only login nodes may submit: not the server host, not in "
                          "submit_hosts or allow_node_submit, not in hosts.equiv), or the user has no passwd entry on the PBS "
                          "server host, or the account is root; the line does not say which",
                  fix=f"{fix}\n{_WORKFLOW}", evidence=told_evidence(s), severity="warning")
        return
    yield Hit(message=f"the job was refused because of the host that submitted it{where} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): this site accepts submissions only from its login nodes (or its submit hosts)",
              fix=f"{fix}\n{_WORKFLOW}", evidence=told_evidence(s))
