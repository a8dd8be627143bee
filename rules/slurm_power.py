"""Cloud and power-saved Slurm nodes that never come up: slurmctld ran ResumeProgram and the node's
slurmd did not register before ResumeTimeout, or the program failed (knowledge/messages/slurm_power.toml).
Read only from what the paste shows of it: slurmctld's lines, a node's reason, a node left DOWN with a
power flag. Jobs pending for Resources alone, or idle~ and idle# nodes, are the ordinary life of a
cloud cluster and say nothing here."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cloud-nodes-fail-to-start"

# What slurmctld logs, or sets as the node's reason: the failure itself (an error).
_STATED = ("slurm_power:not-resumed-by-resumetimeout", "slurm_power:resumetimeout-reached",
           "slurm_power:power-save-program-exit-status", "slurm_power:resume-program-failed",
           "slurm_power:power-save-resume-program-invalid")
_WHY = {
    "slurm_power:not-resumed-by-resumetimeout": "slurmctld powered the node up (ran ResumeProgram) and its slurmd did not "
                                                "register within ResumeTimeout, so it was set DOWN and powered down",
    "slurm_power:resumetimeout-reached": "the node's reason says it did not come up within ResumeTimeout after ResumeProgram ran",
    "slurm_power:power-save-program-exit-status": "a power-save program (ResumeProgram or SuspendProgram) exited with an error",
    "slurm_power:resume-program-failed": "ResumeProgram, which starts (on a cloud cluster: creates) the nodes, failed",
    "slurm_power:power-save-resume-program-invalid": "slurmctld cannot run the power-save program as configured and has "
                                                     "disabled power saving: no powered-down node will be started",
}
_FIX = ("sinfo -R   # the nodes down and their reason (ResumeTimeout reached, or the resume script's own)\n"
        "scontrol show node NODE | grep -E 'State|Reason'   # DOWN+CLOUD+POWERED_DOWN: slurmctld gave up on it\n"
        "scontrol show config | grep -E 'ResumeProgram|ResumeTimeout|ResumeFailProgram|SuspendProgram'   # the program and the wait\n"
        "sudo grep -iE 'resume|power_save' /var/log/slurm/slurmctld.log | tail -20   # why (the log's path: SlurmctldLogFile)\n"
        "# then read ResumeProgram's own log (the cloud API's error: quota, capacity, credentials), fix that, and return the nodes:\n"
        "sudo scontrol update nodename=NODE state=resume   # or state=power_down_force to reset a cloud node to idle~")


@rule("ENV127", SYMBOL, "error", "Slurm's cloud or power-saved nodes fail to start", impact=7,
      also={"warning": "only a node state is shown (DOWN with a power flag), not why"})
def cloud_nodes_fail_to_start(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, Slurm nodes under power saving (cloud nodes) that were not brought up:
        slurmctld's "node X not resumed by ResumeTimeout(N)" (", setting DOWN and POWERED_DOWN",
        or " - marking down and power_save" before 23.02), the node reason "ResumeTimeout reached",
        "power_save: program exit status of N" (up to 22.05), slurmscriptd's "resumeprog exit
        status" (23.02 on), "power_save module disabled, invalid ResumeProgram", and, as a warning,
        a node state that is DOWN with a power flag (sinfo's down~ or down#, scontrol's
        State=DOWN+CLOUD+POWERED_DOWN). Jobs pending for Resources, and idle~ or idle# nodes,
        are not enough: they are the normal states of a cloud cluster.

    Why it matters:
        Jobs wait for ever, or are requeued again and again, while the cluster looks healthy: the
        program that creates the instances (ResumeProgram) failed, often for a reason only its
        own log shows (a cloud API error, quota or capacity, expired credentials, an image that
        does not boot or a slurmd that cannot reach slurmctld), and slurmctld leaves the node
        DOWN until an administrator returns it.

    How to fix:
        Find the nodes and their reason (sinfo -R), read slurmctld's log and ResumeProgram's own
        log for the error, fix it (quota, credentials, network, image, or a ResumeTimeout
        shorter than the instances take to boot), then return the nodes with scontrol update
        nodename=NODE state=resume (or power_down_force for a cloud node).

    References:
        - https://slurm.schedmd.com/power_save.html (ResumeProgram, ResumeTimeout, ResumeFailProgram)
        - https://slurm.schedmd.com/elastic_computing.html (cloud nodes, states ~ # %)
        - https://slurm.schedmd.com/sinfo.html (NODE STATE CODES)
        - https://github.com/SchedMD/slurm/blob/slurm-25-05-8-1/src/slurmctld/power_save.c
        - https://github.com/aws/aws-parallelcluster/issues/5919 (not resumed by ResumeTimeout)
    """
    said = catalogued(f, SYMBOL)
    if not said:
        return
    stated = next((s for s in said if s.get("id") in _STATED), None)
    if stated is not None:
        node = f" (node {stated['node']})" if stated.get("node") else ""
        status = f", exit status {stated['status']}" if stated.get("status") else ""
        yield Hit(message=f"Slurm's powered-down (cloud) nodes are not coming up{node} (line {stated.get('line')}: "
                          f"\"{told_text(stated)}\"): {_WHY[stated['id']]}{status}; jobs that need them wait or are requeued",
                  fix=_FIX, evidence=told_evidence(stated))
        return
    s = said[0]
    yield Hit(message=f"a Slurm node is DOWN while powered down or powering up (line {s.get('line')}: \"{told_text(s)}\"): "
                      "on a cloud or power-saving cluster that is a node Slurm could not start (ResumeTimeout reached, or "
                      "its resume script set it down); its reason says which",
              fix=_FIX, evidence=told_evidence(s), severity="warning")
