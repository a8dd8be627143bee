"""Slurm's client commands refusing a request before the controller is asked, for how the cluster is
configured (no accounting storage behind sacct, sacctmgr, sreport) or for what the environment they
inherited says (SLURM_HOSTFILE forcing arbitrary distribution, an outer job's SLURM_MEM_PER_* or
SLURM_NTASKS_PER_GPU read by a nested srun, a SLURM_JOB_ID left from an ended job), and the accounting
commands that cannot reach slurmdbd. The words are the clients' own (knowledge/messages/
slurm_client_env.toml and slurmdbd_conn.toml, read from Slurm's source)."""

from __future__ import annotations

import re

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

_ACCOUNTING_FIX = (
    "scontrol show config | grep -E 'AccountingStorage(Type|Host|Port)|JobCompType'   # what the cluster keeps\n"
    "squeue -u \"$USER\" -t all   # pending and running jobs, and those ended within MinJobAge, without accounting\n"
    "scontrol show job JOBID   # one job's state and exit code while slurmctld still holds it\n"
    "# administrators: run slurmdbd and set AccountingStorageType=accounting_storage/slurmdbd in slurm.conf "
    "(https://slurm.schedmd.com/accounting.html)")

_JOBCOMP_FIX = (
    "scontrol show config | grep -E 'JobCompType|AccountingStorageType'   # sacct -c needs JobCompType\n"
    "sacct -j JOBID   # without -c, sacct reads accounting storage where the cluster has it")


@rule("ENV121", "slurm-accounting-disabled", "error",
      "sacct, sacctmgr or sreport refused: this Slurm cluster keeps no accounting storage", impact=4)
def slurm_accounting_disabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a Slurm accounting client refusing to run because slurm.conf configures
        no accounting storage: sacct's "Slurm accounting storage is disabled" (no
        AccountingStorageType) or, for sacct -c, "Slurm job completion is disabled" (no
        JobCompType); sacctmgr's and sreport's "You are not running a supported accounting_storage
        plugin / Only 'accounting_storage/slurmdbd' is supported"; slurmrestd's "Slurm accounting
        storage is disabled. Could not query the following".

    Why it matters:
        Nothing on the user's side is wrong and no option makes it work: the cluster (often a cloud
        or test cluster built without slurmdbd) records no finished jobs, accounts or usage. Tools
        that poll sacct for job states (Snakemake's and other workflow executors) fail the same
        way; squeue and scontrol show job still see jobs while slurmctld holds them.

    How to fix:
        Use squeue and scontrol show job for job states, or ask the administrators to set up
        slurmdbd and AccountingStorageType=accounting_storage/slurmdbd (Slurm's accounting guide).

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/sacct/options.c (accounting storage and job completion disabled)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/sacctmgr/sacctmgr.c (only accounting_storage/slurmdbd)
        - https://slurm.schedmd.com/accounting.html
        - https://github.com/galaxyproject/galaxy/issues/9927
    """
    told = catalogued(f, "slurm-accounting-disabled")
    if not told:
        return
    s = told[0]
    if s.get("id") == "slurm_client_env:sacct-job-completion-disabled" and len(told) == 1:
        yield Hit(message=f"sacct -c refused (line {s.get('line')}: \"{told_text(s)}\"): this cluster's slurm.conf "
                          "names no job completion plugin (JobCompType), so there is no completion log to read",
                  fix=_JOBCOMP_FIX, evidence=told_evidence(s))
        return
    yield Hit(message=f"Slurm's accounting commands refused (line {s.get('line')}: \"{told_text(s)}\"): this cluster "
                      "keeps no accounting storage (slurm.conf's AccountingStorageType is unset, or not "
                      "accounting_storage/slurmdbd for sacctmgr and sreport), so finished jobs, accounts and usage are "
                      "recorded nowhere; no option of the command changes that",
              fix=_ACCOUNTING_FIX, evidence=told_evidence(s))


# Which variable a refusal's words name, and what undoing it looks like (sbatch(1), srun(1): INPUT
# ENVIRONMENT VARIABLES; an option on the command line overrides its variable, except where noted).
_HOSTFILE_FIX = ("env | grep -E '^SLURM_HOSTFILE='   # set: the node list comes from that file, with arbitrary distribution\n"
                 "unset SLURM_HOSTFILE   # before sbatch or salloc; export it again just before the srun that uses it\n"
                 "sbatch job.sh")
_ENV_FIX = ("env | grep -E '^(SLURM|SBATCH|SALLOC|SRUN)_'   # the variables the client reads as options\n"
            "unset SLURM_MEM_PER_CPU SLURM_MEM_PER_GPU   # an example: keep the one variable the step should use\n"
            "srun --mem-per-cpu=2G ./app   # or give the option on the command line, which wins over the variables")
_JOBID_FIX = ("echo \"$SLURM_JOB_ID\"; squeue -j \"$SLURM_JOB_ID\"   # the job srun tries to run in, and whether it still exists\n"
              "unset SLURM_JOB_ID SLURM_JOBID   # outside a live allocation, so that srun asks for a new one\n"
              "srun -N1 -n1 hostname")


@rule("ENV122", "slurm-inherited-env-conflict", "error",
      "a Slurm client refused the request for Slurm variables inherited from its environment", impact=5)
def slurm_inherited_env_conflict(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, sbatch, salloc or srun refusing a request because of variables in its
        environment: "--nodes is incompatible (incompatable) with --distribution=arbitrary" and
        "Failure getting NodeNames from hostfile" (SLURM_HOSTFILE is set: the node list comes from
        that file and the distribution is forced to arbitrary); "SLURM_MEM_PER_CPU,
        SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive", "SLURM_NTASKS_PER_NODE
        (SLURM_GPUS_PER_TASK ...) is mutually exclusive with --ntasks-per-gpu and
        SLURM_NTASKS_PER_GPU", "Both --core-spec and --thread-spec set using environment
        variables", "... set by two different environment variables" (a nested srun reading what
        the outer job exported); "Slurm job N has expired" or "Unable to confirm allocation for job
        N: Invalid job id specified" (a SLURM_JOB_ID left from an ended job); a malformed
        SLURM_WORKING_CLUSTER; --relative against SLURM_JOB_NUM_NODES.

    Why it matters:
        sbatch, salloc and srun read SLURM_*, SBATCH_* and SALLOC_* variables as options. A batch
        job exports its own request to its steps, and a workflow tool or a module may export more:
        the same script then fails inside a job (or from a compute node, or after a Slurm update
        that added a check) while it works from a clean login shell. Slurm 23.11 began refusing
        --nodes under arbitrary distribution, which SLURM_HOSTFILE implies.

    How to fix:
        List the variables (env | grep -E '^(SLURM|SBATCH|SALLOC|SRUN)_'), unset the one the line
        names before the command (SLURM_HOSTFILE before sbatch, set again only for the srun that
        needs it; SLURM_JOB_ID outside a live allocation), or give the option on the command line.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_opt.c (validate_options_salloc_sbatch_srun, _validate_nodelist, _validate_arbitrary)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/srun/allocate.c (existing_allocation: SLURM_JOB_ID)
        - https://slurm.schedmd.com/sbatch.html#SECTION_INPUT-ENVIRONMENT-VARIABLES
        - https://github.com/esm-tools/esm_tools/issues/1148
    """
    told = catalogued(f, "slurm-inherited-env-conflict")
    if not told:
        return
    s = told[0]
    key = str(s.get("id", "")).split(":", 1)[-1]
    where = f"line {s.get('line')}: \"{told_text(s)}\""
    if key in ("nodes-incompatible-arbitrary-distribution", "hostfile-nodenames-failure"):
        yield Hit(message=f"Slurm refused the request ({where}): SLURM_HOSTFILE in the environment makes sbatch, "
                          "salloc and srun take their node list from that file with --distribution=arbitrary, which "
                          "Slurm 23.11 and later refuse beside --nodes (or the file cannot be read); where -m arbitrary "
                          "was asked for on purpose, drop --nodes instead",
                  fix=_HOSTFILE_FIX, evidence=told_evidence(s))
        return
    if key in ("srun-stale-job-id", "srun-job-has-expired"):
        yield Hit(message=f"srun tried to run inside a job that no longer exists ({where}): SLURM_JOB_ID in its "
                          "environment is left from an ended allocation (a shell, tmux or screen session opened inside "
                          "salloc or a job, or exported job variables)",
                  fix=_JOBID_FIX, evidence=told_evidence(s))
        return
    yield Hit(message=f"Slurm refused the request for variables in its environment ({where}): the client reads "
                      "SLURM_*, SBATCH_* and SALLOC_* variables as options, and a job exports its own request to the "
                      "steps inside it (or a workflow tool or module set them), so the request contradicts itself",
              fix=_ENV_FIX, evidence=told_evidence(s))


_DBD_DEFAULT_PORT = "6819"  # slurmdbd's DbdPort and slurm.conf's AccountingStoragePort default (slurm.conf(5))
_LOCAL = ("localhost", "127.0.0.1", "::1", "localhost.localdomain")


def _dbd_fix(host: str, port: str) -> str:
    where = f"{host}:{port}" if host else "the AccountingStorageHost"
    return (
        "scontrol show config | grep -i AccountingStorage   # users: the host and port the clients ask for slurmdbd "
        "(AccountingStorageHost/Port); send this and the error to the administrators\n"
        f"# administrators, on {'the host slurmdbd runs on' if not host or host in _LOCAL else host}:\n"
        "systemctl status slurmdbd; journalctl -u slurmdbd -n 50   # running? why it stopped\n"
        f"ss -ltnp | grep ':{port or _DBD_DEFAULT_PORT} '   # slurmdbd listening on DbdPort (slurmdbd.conf)\n"
        f"# from the failing node: nothing answers at {where}? AccountingStorageHost=localhost is right only on "
        "the node slurmdbd runs on: elsewhere set it in slurm.conf to the slurmdbd host, and open the port in the firewall")


@rule("ENV124", "slurmdbd-unreachable", "error",
      "sacct, sacctmgr or sreport cannot reach slurmdbd, the Slurm accounting daemon", impact=4)
def slurmdbd_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a Slurm program that could not reach slurmdbd: libslurm's "failed to
        open persistent connection to host:H:P: <reason>" (to slurmdbd's port, or beside a slurmdbd
        line), the accounting plugin's "Sending PersistInit msg" (older "slurmdbd: Sending
        DbdInit msg"), "failed to send persistent connection init message", "No response to
        persist_init", "DBD_GET_... failure", "Sending message type ...", "Getting response to
        message type"; sacct's (and sacctmgr's before 20.11) "Problem talking to the database",
        sreport's "Problem connecting to the database", --cluster's "Problem talking to database"
        and "There is a problem talking to the database ... Only local cluster communication is
        available". slurmdbd answering with an error (authentication, protocol) is not this.

    Why it matters:
        Accounting is configured (unlike slurm-accounting-disabled), but nothing answers at the
        host and port the node's slurm.conf names: sacct, sacctmgr and sreport fail, and so do
        workflow tools polling sacct. Often AccountingStorageHost=localhost copied to a login or
        portal node where slurmdbd does not run, or slurmdbd (or its database) is down.

    How to fix:
        Users: scontrol show config | grep -i AccountingStorage shows the host and port; tell the
        administrators. Administrators: systemctl status slurmdbd on that host, check it listens
        on DbdPort, and that AccountingStorageHost is not localhost on a node without slurmdbd.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/persist_conn.c (failed to open persistent connection)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/plugins/accounting_storage/slurmdbd/dbd_conn.c (Sending PersistInit msg)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/sacct/options.c (Problem talking to the database)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_AccountingStorageHost
        - https://github.com/Azure/az-hop/issues/1857
    """
    told = catalogued(f, "slurmdbd-unreachable")
    if not told:
        return
    opened = [s for s in told if s.get("id") == "slurmdbd_conn:persist-conn-open-failed"]
    # The persistent connection also joins federated controllers (slurmctld's port): alone, it is
    # slurmdbd's only on slurmdbd's default port.
    if len(opened) == len(told) and not any(str(s.get("port")) == _DBD_DEFAULT_PORT for s in opened):
        return
    where = next((s for s in told if s.get("host") and s.get("port")), None)
    host = str(where.get("host")) if where else ""
    port = str(where.get("port")) if where else ""
    said = where or told[0]
    reason = str(said.get("reason") or next((s.get("reason") for s in told if s.get("reason")), "") or "")
    # the window joins the next lines: the reason ends where the next program line begins
    reason = re.split(r"\s\S{1,60}: (?:error|fatal|warning|debug\d?):|\s\[exit", reason)[0].strip()
    at = f"slurmdbd at {host}:{port}" if host else "slurmdbd (at slurm.conf's AccountingStorageHost:AccountingStoragePort)"
    low = reason.lower()
    if "refused" in low:
        why = "nothing listens on that port of that host: slurmdbd is not running there, or the host or port is wrong"
    elif "timed out" in low or "no route" in low or "unreachable" in low:
        why = "the host does not answer: it is down, or a firewall drops the port"
    elif "resolve" in low or "no error" in low or "name or service" in low:
        why = "the host name may not resolve on this node"
    else:
        why = "slurmdbd is down, or the host or port is wrong for this node"
    local = (f"; {host} is this node itself: AccountingStorageHost={host} is right only on the node where "
             "slurmdbd runs, and on a login, portal or compute node it points at nothing") if host in _LOCAL else ""
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": Slurm's accounting commands (sacct, sacctmgr, "
                      f"sreport) could not reach {at}" + (f" ({reason})" if reason else "") + f": {why}{local}. "
                      "Accounting is configured; it is its daemon that does not answer",
              fix=_dbd_fix(host, port), evidence=told_evidence(said))
