"""A node whose slurmd cannot start batch jobs: its SlurmdSpoolDir, where slurmstepd writes each
job's script before running it, is gone, hidden from the job, full or not executable (slurmstepd's
own lines, knowledge/messages/slurm.toml, from src/slurmd/slurmstepd/mgr.c and task.c); or the job's
launch there failed before the script ran, so Slurm held it and drained the node (the held job's
reason and the drain reason, knowledge/messages/slurm_launch.toml, from src/slurmctld/job_mgr.c and
src/slurmd/slurmd/req.c). The fault is the node's, so the fix is the administrators' and, meanwhile,
another node."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

# execve() of the spool's own script: ENOENT means the file slurmstepd had just written is not there
# for the task (task.c prints "bad interpreter(...)" instead when the file opens and its #! is
# missing); any other errno may also be the script's #! interpreter, so it is said less firmly.
_GONE = "No such file or directory"
_WHY = {
    "slurm:stepd-batch-script-exec-failed": "slurmstepd wrote the batch script into the node's SlurmdSpoolDir and could not run it",
    "slurm:stepd-batch-dir-mkdir-failed": "slurmstepd could not create the job's directory in the node's SlurmdSpoolDir",
    "slurm:stepd-batch-script-open-failed": "slurmstepd could not write the batch script into the node's SlurmdSpoolDir",
    "slurm:stepd-batch-setup-failed": "slurmstepd could not set the batch job up in the node's SlurmdSpoolDir",
    "slurm:drain-slurmd-spool-full": "slurmstepd drained the node: its SlurmdSpoolDir is full",
}
_SPOOL_OF = re.compile(r"^(?P<spool>/\S{0,200}?)/job\d{1,12}(?:\.\d{1,12})?(?:/slurm_script)?$")


def _spool(s: dict) -> Optional[str]:
    """The SlurmdSpoolDir the line names: the path before "/jobNNNNN"."""
    m = _SPOOL_OF.match(str(s.get("script") or s.get("path") or ""))
    return m.group("spool") if m and m.group("spool") else None


_FIX = ("scontrol show config | grep -i SlurmdSpoolDir   # where slurmd writes batch scripts (default /var/spool/slurmd)\n"
        "sinfo -R   # nodes Slurm drained, with the reason it recorded\n"
        "sbatch --exclude=NODE job.sh   # meanwhile, resubmit away from the node that failed, and tell the administrators\n"
        "findmnt -T /var/spool/slurmd   # on the node (the configured path): a local file system, not a /tmp that is "
        "cleaned or replaced by a job's private /tmp, mounted without noexec\n"
        "df -h /var/spool/slurmd   # on the node: room to write the scripts")


@rule("SYS015", "slurmd-spool-broken", "error",
      "the node's SlurmdSpoolDir cannot hold or run batch scripts: jobs fail there at once", impact=8,
      also={"warning": "execve() of the spool's script refused with an errno other than ENOENT, which the "
                       "script's #! interpreter can also cause"})
def slurmd_spool_broken(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted job log or node state, slurmstepd failing on its own spool directory:
        "execve(): <SlurmdSpoolDir>/jobNNNNN/slurm_script: No such file or directory" (or
        Permission denied), "mkdir(<SlurmdSpoolDir>/jobNNNNN): ...", "couldn't open
        `.../slurm_script': ...", "batch script setup failed for JobId=N on NODE: ...", and the
        drain reason "SlurmdSpoolDir is full".

    Why it matters:
        slurmstepd writes every batch job's script into SlurmdSpoolDir on the node and then runs
        it; the user cannot make that file disappear. When the spool lives under a /tmp that is
        cleaned, is replaced inside the job by a private /tmp (job_container with
        EntireStepInNS), is full, is mounted noexec, or is not the node-local directory slurm.conf
        says, every batch job on that node fails at once, whatever it runs, while the same job
        works elsewhere.

    How to fix:
        Resubmit away from the node (--exclude) and tell the administrators, who check the
        configured SlurmdSpoolDir on that node (node-local, writable, executable, with room) and
        restart slurmd, or reboot the node, once it is right.

    References:
        - https://slurm.schedmd.com/slurm.conf.html#OPT_SlurmdSpoolDir
        - https://slurm.schedmd.com/job_container.conf.html (EntireStepInNS)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/mgr.c (_make_batch_dir, _make_batch_script)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/task.c (exec_task)
    """
    told = catalogued(f, "slurmd-spool-broken")
    if not told:
        return
    s = told[0]
    why = _WHY.get(s.get("id"), "slurmstepd failed on the node's SlurmdSpoolDir")
    error = s.get("error")
    firm = s.get("id") != "slurm:stepd-batch-script-exec-failed" or error == _GONE
    where = f" ({s['script']})" if s.get("script") else (f" ({s['path']})" if s.get("path") else "")
    message = (f"{why}{where} (line {s.get('line')}: \"{told_text(s)}\"): the node's batch-script spool is broken "
               "(gone, hidden from the job, full or not executable); every batch job there fails at once")
    if not firm:
        message += f"; with {error}, a #! interpreter that may not be executed gives the same line"
    spool = _spool(s)
    fix = _FIX.replace("/var/spool/slurmd   # on the node (the configured path)", f"{shlex.quote(spool)}   # on the node") \
        .replace("df -h /var/spool/slurmd", f"df -h {shlex.quote(spool)}") if spool else _FIX
    yield Hit(message=message, fix=fix, evidence=told_evidence(s), **({} if firm else {"severity": "warning"}))


LAUNCH = "slurm-job-launch-failed-on-node"
_HELD = {
    "slurm_launch:launch-failed-requeued-held": "Slurm requeued the job held after its node failed to launch it",
    "slurm_launch:user-env-retrieval-failed-requeued-held": "Slurm requeued the job held after its node could not read the "
                                                           "user's login environment (--get-user-env)",
    "slurm_launch:launch-failure-limit-exceeded-requeued-held": "Slurm stopped requeueing the job after more failed launches "
                                                               "than MaxBatchRequeue allows",
}
_LAUNCH_FIX = ("sinfo -R   # the node Slurm drained and why (\"Prolog error\", \"Job env setup error\")\n"
               "scontrol show job JOBID | grep -E 'JobState|Reason|BatchHost|NodeList'   # the held job and the node it failed on\n"
               "scontrol release JOBID   # once the node is fixed, or scancel it and resubmit with sbatch --exclude=NODE\n"
               "# administrators, on that node: slurmd's log (SlurmdLogFile, or journalctl -u slurmd) around the job id: "
               "the Prolog's exit status and output, a user the node cannot look up (id USER), or munge refusing "
               "credentials from a clock that is off (munge -n | unmunge; chronyc tracking)")


@rule("SYS023", LAUNCH, "error",
      "the node failed to start the batch job before its script ran: Slurm held the job (and drains the node)", impact=7)
def slurm_job_launch_failed_on_node(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted squeue, scontrol or job listing, a job Slurm requeued held because its node
        could not start it: "launch failed requeued held" (scontrol: launch_failed_requeued_held),
        "user env retrieval failed requeued held" and "launch failure limit exceeded requeued
        held"; the drain reasons the node then gets ("Prolog error", "Job env setup error",
        "Prolog/Epilog failure" in sinfo -R or scontrol show node); slurmd's "prolog failed
        status=N:M" and the job's "Prolog failure on node NODE".

    Why it matters:
        slurmd fails a batch launch before the user's script starts: the node's Prolog exited
        non-zero, the user's environment or identity could not be read there, or slurmstepd could
        not be started (a credential munge refuses, a node whose clock is off). Slurm then holds
        the job with priority 0, so it never starts by itself, and drains the node; every job
        sent there fails the same way until the node is fixed. Nothing in the job script causes
        it, and resubmitting unchanged to the same node repeats it.

    How to fix:
        See which node failed and why (sinfo -R, scontrol show job), release or resubmit the job
        away from that node, and report the node to the administrators, who read slurmd's log
        there: the Prolog's exit status and output, user lookup (id USER), munge and the clock.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/job_mgr.c (_job_complete, _handle_requeue_limit)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmd/req.c (_launch_job_fail)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/node_mgr.c (Prolog error, Job env setup error)
        - https://slurm.schedmd.com/prolog_epilog.html (a Prolog that fails drains the node and requeues the job held)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_MaxBatchRequeue
    """
    told = catalogued(f, LAUNCH)
    if not told:
        return
    held = next((s for s in told if s.get("id") in _HELD), None)
    node = next((s for s in told if s is not held), None)
    s = held or node
    if held is not None:
        what = f"{_HELD[str(held.get('id'))]} (line {held.get('line')}: \"{told_text(held)}\"): the script never ran"
        if node is not None:
            what += f"; the node's side (line {node.get('line')}: \"{told_text(node)}\")"
    else:
        what = (f"the node failed a job before its script ran (line {s.get('line')}: \"{told_text(s)}\"): Slurm requeues "
                "such a job held and drains the node")
    yield Hit(message=what + ". The fault is the node's (its Prolog, user lookup, slurmd or munge), not the job script's",
              fix=_LAUNCH_FIX, evidence=told_evidence(s))


LOW_MEMORY = "slurm-node-low-realmemory"
REGISTRATION = "slurm-node-registration-invalid"

# What each drain reason compares, and the field of slurmd -C and of the NodeName line that holds it.
_DECLARED = {
    "slurm_node_reg:low-realmemory": ("memory", "RealMemory"),
    "slurm_node_reg:log-low-real-memory": ("memory", "RealMemory"),
    "slurm_node_reg:low-cpus": ("CPUs", "CPUs"),
    "slurm_node_reg:log-low-cpu-count": ("CPUs", "CPUs"),
    "slurm_node_reg:low-socket-core-thread": ("sockets x cores x threads", "Sockets, CoresPerSocket, ThreadsPerCore"),
    "slurm_node_reg:log-low-socket-core-thread": ("sockets x cores x threads", "Sockets, CoresPerSocket, ThreadsPerCore"),
    "slurm_node_reg:low-tmpdisk": ("temporary disk space (TmpFS)", "TmpDisk"),
    "slurm_node_reg:log-low-tmp-disk": ("temporary disk space (TmpFS)", "TmpDisk"),
    "slurm_node_reg:gres-count-low": ("generic resources (GRES)", "Gres"),
    "slurm_node_reg:gres-unpack-failed": ("generic resources (GRES)", "Gres"),
}
_NODES_OK = re.compile(r"^[A-Za-z][\w.-]{0,60}(?:\[[\d,-]{1,60}\])?$")


def _nodes(told: list) -> str:
    """The node (or hostlist) a pasted reason names, as one shell word; NODE where none is pasted."""
    for s in told:
        name = str(s.get("nodes") or "")
        if _NODES_OK.match(name):
            return shlex.quote(name)
    return "NODE"


def _first_host(hostlist: str) -> str:
    """One host of a Slurm hostlist, for ssh: compute[001-003] is compute001."""
    m = re.match(r"^'?([\w.-]{1,60})\[(\d{1,9})", hostlist)
    return m.group(1) + m.group(2) if m else hostlist


def _registration_fix(told: list, field: str) -> str:
    node = _nodes(told)
    gres = field == "Gres"
    return ("sinfo -R   # the drained nodes and each one's reason\n"
            f"ssh {_first_host(node)} slurmd -C   # what slurmd finds on the node: CPUs, Sockets, CoresPerSocket, ThreadsPerCore, RealMemory, TmpDisk\n"
            + (f"ssh {_first_host(node)} 'nvidia-smi -L; ls -l /dev/nvidia[0-9]*; slurmd -G'   # the GPUs and device files there, and the GRES slurmd finds\n" if gres else "")
            + "grep -E '^[[:space:]]*NodeName=' /etc/slurm/slurm.conf   # what slurm.conf declares for it (the path: scontrol show config | grep SLURM_CONF)\n"
            f"# administrators: make the NodeName line's {field} at most what slurmd -C (or slurmd -G) reports, on every node's slurm.conf, then:\n"
            "sudo scontrol reconfigure   # slurmctld rereads slurm.conf (restart slurmd on the nodes where their copy changed)\n"
            f"sudo scontrol update nodename={node} state=resume   # clear the drain once the node registers without the reason")


def _figures(s: dict) -> str:
    got, declared = s.get("reported"), s.get("configured")
    if got is not None and declared is not None:
        return f" (slurmd reported {got}, slurm.conf declares {declared})"
    return ""


def _registration_hit(told: list, what: str) -> Hit:
    s = told[0]
    thing, field = _DECLARED.get(str(s.get("id")), ("resources", "NodeName line"))
    return Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": slurmctld drained the node when its slurmd registered: "
                       f"slurm.conf declares more {thing} ({field}) than slurmd found on the node{_figures(s)}. {what}",
               fix=_registration_fix(told, field), evidence=told_evidence(s))


@rule("ENV086", LOW_MEMORY, "error",
      "slurmctld drained the node at registration: slurm.conf's RealMemory is above the memory slurmd found", impact=7)
def slurm_node_low_realmemory(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted sinfo -R, scontrol show node (Reason=) or slurmctld log, the drain reason
        "Low RealMemory" (Slurm 22.05 and later: "Low RealMemory (reported:N < P% of
        configured:M)") or slurmctld's "Node N has low real_memory size": the node's slurmd
        reported less memory than the RealMemory of its NodeName line in slurm.conf.

    Why it matters:
        slurmctld checks every registration against slurm.conf (validate_node_specs) and drains a
        node that has less than it declares, so jobs stay pending though the nodes look up. The
        node is healthy: RealMemory was set to the RAM installed, or copied from another node
        type, while slurmd counts only the memory the kernel gives (MemTotal, less than the RAM).

    How to fix:
        Compare slurmd -C on the node with the NodeName line, set RealMemory at or below what
        slurmd -C reports (every node's slurm.conf), scontrol reconfigure, and resume the node
        with scontrol update nodename=<n> state=resume (administrators).

    References:
        - https://github.com/SchedMD/slurm/blob/0040dcd5dadf8fdd2b5814af6f1d25c57af04f0d/src/slurmctld/node_mgr.c (validate_node_specs: Low RealMemory)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_RealMemory (RealMemory; SlurmctldParameters=node_reg_mem_percent)
        - https://slurm.schedmd.com/slurmd.html (slurmd -C prints the node's configuration as slurmd finds it)
        - https://github.com/clusterinthecloud/terraform/issues/11 (nodes drained with Low RealMemory after a shape's memory was set too high)
    """
    told = catalogued(f, LOW_MEMORY)
    if told:
        yield _registration_hit(told, "Lower RealMemory for those nodes to what slurmd -C reports, then resume them")


@rule("ENV087", REGISTRATION, "error",
      "slurmctld drained the node at registration: slurm.conf declares more CPUs, cores, TmpDisk or GRES than slurmd found", impact=7)
def slurm_node_registration_invalid(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted sinfo -R, scontrol show node (Reason=) or slurmctld log, the other drain
        reasons of a node's registration: "Low CPUs", "Low socket*core*thread count", "Low
        TmpDisk", "gres/gpu count reported lower than configured (0 < 4)" (any GRES), "Could not
        unpack gres data", and slurmctld's "Node N has low cpu count", "has low
        socket*core*thread count", "has low tmp_disk size" lines. Each means slurm.conf's
        NodeName line declares more than the node's slurmd found (Low RealMemory has its own rule,
        slurm-node-low-realmemory).

    Why it matters:
        slurmctld drains such a node (state INVALID_REG, "inval" in sinfo) and jobs stay pending.
        For CPUs: hyper-threading off in the BIOS, or a line written for another node type; for
        TmpDisk: the TmpFS not mounted or smaller; for GPUs: the driver not loaded, a GPU lost from
        the bus, or gres.conf missing or without File= for each GPU.

    How to fix:
        Compare slurmd -C (and slurmd -G for GRES) on the node with its NodeName line, fix the
        node or the line, scontrol reconfigure, and resume the node with scontrol update
        nodename=<n> state=resume (administrators).

    References:
        - https://github.com/SchedMD/slurm/blob/0040dcd5dadf8fdd2b5814af6f1d25c57af04f0d/src/slurmctld/node_mgr.c (validate_node_specs: Low CPUs, Low TmpDisk)
        - https://github.com/SchedMD/slurm/blob/master/src/common/gres.c (count reported lower than configured)
        - https://slurm.schedmd.com/slurm.conf.html#SECTION_NODE-CONFIGURATION
        - https://slurm.schedmd.com/gres.html (gres.conf, File= for GPUs)
    """
    told = catalogued(f, REGISTRATION)
    if told:
        yield _registration_hit(told, "Make the NodeName line match the node (or repair the node), then resume it")
