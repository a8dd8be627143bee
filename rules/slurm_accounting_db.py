"""slurmdbd storing a cluster's jobs in tables that do not exist: the cluster was never added to the
accounting database (knowledge/messages/slurmdbd_mysql.toml)."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "slurm-cluster-not-registered-in-slurmdbd"


@rule("ENV147", SYMBOL, "error", "the cluster was never added to slurmdbd: its jobs are not recorded", impact=5)
def slurm_cluster_not_registered_in_slurmdbd(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted slurmdbd log, MySQL's "Table 'slurm_acct_db.<cluster>_job_table' doesn't exist"
        (or another of a cluster's own tables: step, assoc, resv, event ...), as slurmdbd prints it
        ("We should have gotten a new id: ...").

    Why it matters:
        slurmdbd keeps each cluster's records in tables named after it, created when the cluster is
        added to the accounting database. A controller whose ClusterName was never added reports its
        jobs into tables that do not exist: sacct shows nothing, and limits and fair share that need
        the associations do not work.

    How to fix:
        Add the cluster (the ClusterName of slurm.conf) with sacctmgr, which creates its tables, then
        restart slurmctld so it registers with slurmdbd.

    References:
        - https://slurm.schedmd.com/accounting.html (sacctmgr add cluster)
        - https://github.com/SchedMD/slurm/blob/master/src/plugins/accounting_storage/mysql/accounting_storage_mysql.c (create_cluster_tables)
        - https://github.com/giovtorres/slurm-docker-cluster/issues/9
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    cluster = s.get("cluster")
    name = shlex.quote(str(cluster)) if cluster else "CLUSTER"
    yield Hit(message=f"slurmdbd has no tables for the cluster {cluster or '(unnamed)'} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): the cluster was never added to the accounting database, so its jobs are "
                      "not recorded (sacct shows none)",
              fix=("scontrol show config | grep -i '^ClusterName'   # the cluster's name, as slurmctld reports it\n"
                   "sacctmgr show cluster   # the clusters slurmdbd knows\n"
                   f"sacctmgr -i add cluster {name}   # administrators: creates the cluster's tables; then restart "
                   "slurmctld (systemctl restart slurmctld) so it registers"),
              evidence=told_evidence(s))
