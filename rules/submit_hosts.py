"""A job submitted from a host the site does not allow to submit (a compute node, inside another
job): read from the site filters' and schedulers' own refusals (knowledge/messages/submit_host.toml)."""

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
}
_WORKFLOW = ("# a workflow that submits its own jobs (Snakemake, Nextflow, Canu, a pilot): run its driver on a login "
             "node (in tmux or screen, or the site's workflow or interactive nodes), or run its steps inside one "
             "allocation with its local executor; Canu: useGrid=remote")


def _scheduler(s: dict) -> str:
    sid = str(s.get("id", ""))
    if sid.startswith("submit_host:sge-"):
        return "sge"
    if sid == "pbs_access:torque-host-acl":
        return "pbs"
    return "lsf" if sid.endswith("lsf-compute-nodes-cannot-submit") else "tacc"


@rule("SYS019", SYMBOL, "error", "the site refuses job submission from this host (a compute node): submit from a login node",
      impact=5)
def slurm_submit_from_compute_node_refused(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a submission refused because of the host it came from: TACC's Slurm filter
        "[TACC]: Job submission is not allowed from this host. Please submit through one of the
        available login resources.", Grid Engine's qmaster answers 'denied: host "<node>" is no
        submit host' and 'denied: host "<node>" is neither submit nor admin host' (qsub prints them
        after "Unable to run job: "), PBS's and TORQUE's host ACL refusal (pbs_access.toml), an LSF
        site's "Compute Nodes cannot be used as submission host".

    Why it matters:
        Many sites accept jobs only from login nodes: a job_submit filter, Slurm's partition
        AllocNodes, Grid Engine's submit host list. A workflow driver or pilot that runs inside a
        job and submits its next steps is refused there, though the same workflow works where
        compute nodes may submit (Slurm's default). Slurm's own refusal for AllocNodes is the
        generic "Access/permission denied", which other causes share, and is not read here.

    How to fix:
        Submit from a login node: run the workflow's driver there (tmux, screen, or the site's
        workflow nodes), or run all its steps inside one allocation with a local executor; only
        administrators can add compute nodes as submit hosts.

    References:
        - https://slurm.schedmd.com/slurm.conf.html#OPT_AllocNodes
        - https://slurm.schedmd.com/job_submit_plugins.html
        - https://github.com/hyeshik/tailseeker/issues/3
        - https://github.com/marbl/canu/issues/156
        - https://github.com/gridengine/gridengine/blob/7ff4c62d5793fb498f1d2955296a75717c823f12/source/daemons/qmaster/msg_qmaster.h (messages 33127, 33128)
        - https://github.com/TIGRLab/admin/issues/1270
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    kind = _scheduler(s)
    where = f" ({s.get('host')})" if s.get("host") else ""
    fix = _FIX[kind].replace("QUEUE", str(s["queue"])) if kind == "pbs" and s.get("queue") else _FIX[kind]
    yield Hit(message=f"the job was refused because of the host that submitted it{where} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): this site accepts submissions only from its login nodes (or its submit hosts)",
              fix=f"{fix}\n{_WORKFLOW}", evidence=told_evidence(s))
