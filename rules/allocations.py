"""A project's compute allocation spent, or too small for what the job asks: a site's bank plugin
refusing the submission (knowledge/messages/allocations.toml), and Slurm's accumulated-usage
limits (GrpTRESMins: the Assoc/QOS ...Minutes reasons of slurm_reasons.toml, whose RunMinutes
siblings are a running-jobs cap instead and are left to slurm-qos-limit-reached)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "allocation-balance-exhausted"
# slurm.h's WAIT_{ASSOC,QOS}_GRP_*_MIN reasons: GrpTRESMins, usage accumulated over the life of the
# association or QOS (until an administrator resets it or PriorityDecayHalfLife decays it): the
# allocation. The *RunMinutes reasons (GrpTRESRunMins) cap the jobs running at once; *PerJob ones a
# single job's size: neither is a spent balance.
_GRP_MINUTES = re.compile(r"^(?:Assoc|QOS)Grp[A-Za-z]{0,12}Min(?:utes)?(?:Limit)?$")


def _slurm_minutes(f: FactView) -> Optional[dict]:
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("family") == "slurm_reasons"
                 and _GRP_MINUTES.match(str(s.get("key") or "")) and "Run" not in str(s.get("key"))), None)


_FIX = (
    "sshare -U -u $USER -o Account,User,RawUsage,GrpTRESMins,GrpTRESRaw   # Slurm: the association's usage against its GrpTRESMins\n"
    "sacctmgr show assoc where user=$USER format=Account,User,GrpTRESMins,QOS   # which account and limit apply\n"
    "scontrol show job JOBID | grep -E 'Reason|TimeLimit|NumCPUs|TRES'   # what the job asks: cores x time is what it is charged\n"
    "sbatch -A OTHER_ACCOUNT -t 01:00:00 job.sh   # a shorter time limit, fewer cores or an account with balance left\n"
    "# the site's balance command shows the allocation (e.g. sbank balance statement, mybalance, saldo, projects --balance); "
    "ask the allocation's PI or the site for more units")


@rule("ENV080", SYMBOL, "error",
      "the project's allocation has too little balance left for the job", impact=6)
def allocation_balance_exhausted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a submission refused or a job held because the allocation charged for it
        has too few service units left: a site's bank plugin ("bank_limit plugin: The requested
        time can not exceed the available balance.", with its Requested SUs and Allocation
        available group SUs lines, whose numbers the finding quotes), and Slurm's GrpTRESMins
        reasons (AssocGrpCPUMinutesLimit, AssocGrpBillingMinutes, QOSGrpCPUMinutesLimit,
        AssocGrpNodeMinutes, QOSGrpGRESMinutes and the other ...Minutes reasons of slurm.h, not the
        RunMinutes ones, which cap what runs at once).

    Why it matters:
        Allocations are granted in core-hours or service units; the bank charges each job its
        cores (or nodes, or GPUs) times its time limit up front. When that exceeds the balance the
        job is refused or never starts, however idle the cluster; a workflow manager that submits
        many jobs reports only that submission failed.

    How to fix:
        Check the balance with the site's command (sshare for Slurm's GrpTRESMins); ask for less
        (a shorter --time, fewer cores), charge another account with balance left, or ask the
        allocation's PI or the site for more units.

    References:
        - https://slurm.schedmd.com/resource_limits.html (GrpTRESMins)
        - https://slurm.schedmd.com/sshare.html
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/slurm/slurm.h (WAIT_ASSOC_GRP_CPU_MIN and the other _MIN reasons)
        - https://github.com/marbl/canu/issues/1164
    """
    told = catalogued(f, SYMBOL)
    refusal = next((s for s in told if s.get("id") == "allocations:bank-limit-exceeds-balance"), None)
    if refusal is not None:
        requested = next((s.get("requested") for s in told if s.get("requested")), None)
        available = next((s.get("available") for s in told if s.get("available") is not None), None)
        numbers = "".join([f"; the job asks for {requested} SUs" if requested else "",
                           f" and {available} are left" if available is not None else ""])
        yield Hit(message=f"line {refusal.get('line')}: \"{told_text(refusal)}\": the site's bank refused the submission: "
                          f"it charges more service units than the allocation has left{numbers}",
                  fix=_FIX, evidence=told_evidence(refusal))
        return
    reason = _slurm_minutes(f)
    if reason is None:
        return
    yield Hit(message=f"line {reason.get('line')}: \"{told_text(reason)}\": Slurm holds the job at {reason.get('key')}: "
                      "the account's (or QOS's) accumulated usage limit, GrpTRESMins, is reached: the allocation is "
                      "spent, or too little is left for this job's cores x time",
              fix=_FIX, evidence=told_evidence(reason))
