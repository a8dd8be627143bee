"""Grid Engine jobs that wait for a reason the host, not the job, holds: an execution daemon that does
not report (queue instances in state u, "temporarily not available", qhost's "-"), and a cluster with
no parallel environment that keeps a job's slots on one host (canu's grid check). Read from
knowledge/messages/sge_sched.toml, sge_qstat.toml, canu_grid.toml and prose.toml."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

EXECD = "sge-execd-not-running"
NO_PE_SLOTS = "sge-no-single-node-parallel-environment"

# The lines that show the daemon down (a state or a load figure), before the scheduler's words
# (which also cover states E, c, s, S, d and o) and a user's sentence.
_SHOWN = ("sge_qstat:queue-state-unknown", "sge_qstat:qhost-host-no-load")
_SCHED = ("sge_sched:queue-not-available", "sge_sched:summary-queue-not-available", "sge_sched:loglist-queues-unavailable")
_SAID = "prose:sge-execd-not-running-said"
# A user's sentence that asks or supposes rather than reports ("check whether sge_execd is not running").
_NOT_A_REPORT = re.compile(r"(?i)\b(?:if|whether|maybe|perhaps|might|may|could|check|suspect|make sure|ensure)\b[^.;:!?]{0,40}$")


def _host_of(s: dict) -> str:
    q = str(s.get("queue") or s.get("host") or "")
    return q.split("@", 1)[1] if "@" in q else q


@rule("SYS059", EXECD, "error", "a Grid Engine execution host does not report: its sge_execd is not running", impact=6)
def sge_execd_not_running(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a Grid Engine execution host whose daemon does not report to the qmaster:
        a queue instance in state u (unknown) in `qstat -f` (often "au": the load alarm raised
        because no load arrives), a `qhost` line whose LOAD, MEMUSE and SWAPUS are "-", the
        scheduler's "queue instance "Q@H" dropped because it is temporarily not available" under
        qstat -j's "scheduling info:" (MSG_SCHEDD_INFO_QUEUENOTAVAIL_S 47081, its summary 47126 and
        the log list 47230), or the user's or administrator's own words that sge_execd (sgeexecd)
        is not running on a worker.

    Why it matters:
        The scheduler sends no job to a queue instance whose execd does not report: jobs stay in
        qw with free slots in sight ("All queues dropped because of overload or full"). The
        scheduler's "temporarily not available" also covers queue instances in error (E),
        configuration-ambiguous (c), suspended (s, S), disabled or orphaned state, so qstat -f's
        state letters decide: u is the daemon.

    How to fix:
        qstat -f (and qhost) show the host's state; with u, the administrators start the
        execution daemon on that host as the installation names it (the sgeexecd script or
        service of Son of Grid Engine, a distribution's gridengine-exec, sge_execd) and read its
        messages file, $SGE_ROOT/$SGE_CELL/spool/<host>/messages (or the local spool directory
        the execd_spool_dir parameter names), for why it stopped. A host that is off or
        unreachable is a node problem, not Grid Engine's.

    References:
        - https://github.com/daimh/sge/blob/d913cab5b7efa54d597cbb95ee59a11405848ba9/doc/man/man1/qstat.1 (queue states: "If the state is u, the corresponding sge_execd cannot be contacted")
        - https://github.com/daimh/sge/blob/d913cab5b7efa54d597cbb95ee59a11405848ba9/source/libs/sched/msg_schedd.h (MSG_SCHEDD_INFO_QUEUENOTAVAIL_S 47081)
        - https://github.com/daimh/sge/blob/d913cab5b7efa54d597cbb95ee59a11405848ba9/source/daemons/qmaster/sge_sched_thread.c (the queues left out as temporarily not available)
        - https://github.com/daimh/sge/blob/d913cab5b7efa54d597cbb95ee59a11405848ba9/source/clients/common/sge_qhost.c ("-" for a load value not reported)
        - https://github.com/daimh/sge/blob/d913cab5b7efa54d597cbb95ee59a11405848ba9/source/dist/util/rctemplates/systemd/README (restarting the execd kills running jobs)
        - https://github.com/elasticluster/elasticluster/issues/368 (sge_execd not running on the worker; restarting the service fixed it)
    """
    told = catalogued(f, EXECD)
    if not told:
        return
    by_id = {}
    for s in told:
        by_id.setdefault(str(s.get("id")), s)
    shown = next((by_id[i] for i in _SHOWN if i in by_id), None)
    sched = next((by_id[i] for i in _SCHED if i in by_id), None)
    said = by_id.get(_SAID)
    if said is not None:
        text, matched = str(said.get("text", "")), str(said.get("matched", ""))
        at = text.find(matched[:30]) if matched else -1
        if at > 0 and _NOT_A_REPORT.search(text[max(0, at - 60):at]):
            said = None
    s = shown or sched or said
    if s is None:
        return
    host = _host_of(shown or sched or {})
    if shown is not None and str(shown.get("id")) == "sge_qstat:queue-state-unknown":
        what = (f"queue instance {shown.get('queue')} is in state \"{shown.get('states')}\" (u: its sge_execd "
                "cannot be contacted, qstat(1))")
    elif shown is not None:
        what = f"qhost shows no load for {shown.get('host')} (\"-\"): its sge_execd does not report"
    elif sched is not None:
        what = ("the scheduler left the queue instance out as temporarily not available: state u (its sge_execd "
                "not reporting) unless qstat -f shows E, c, s, S, d or o there")
    else:
        what = "the paste says sge_execd is not running on a worker"
    also = []
    if sched is not None and s is not sched:
        also.append(f"scheduling info: \"{told_text(sched)}\"")
    if said is not None and s is not said:
        also.append(f"the user: \"{told_text(said)}\"")
    extra = f" ({'; '.join(also)})" if also else ""
    pick = (f"H={host}   # the host the paste names" if host else
            "H=$(qstat -f | awk '$1 ~ /@/ && $NF ~ /^[aAcCdDEoPsS]*u[aAcCdDEoPsS]*$/ {split($1, q, \"@\"); print q[2]; exit}')"
            "   # the first host whose queue instance is in state u (empty: none is, and the cause is another state)")
    fix = (f"{pick}\n"
           "qstat -f | awk '$1 ~ /@/ && NF >= 6'   # every queue instance with a state: u = execd not reporting; E, c, s, S, d, o = another cause\n"
           "qhost -h \"$H\"   # LOAD '-': no load report from that host's execd\n"
           "ssh \"$H\" 'pgrep -a sge_execd; systemctl list-units --all | grep -i -E \"execd|gridengine\"'   # is the daemon running, and the service name this installation gives it\n"
           "ssh \"$H\" \"tail -n 50 $SGE_ROOT/${SGE_CELL:-default}/spool/$H/messages\"   # why it stopped (a local execd_spool_dir keeps it elsewhere: qconf -sconf \"$H\")\n"
           "# administrators: start the execd service by the name listed (sgeexecd, gridengine-exec, ...): "
           "stopping or restarting a running execd kills its jobs")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}{extra}. Jobs stay qw while it does not report",
              fix=fix, evidence=told_evidence(s))


@rule("SYS060", NO_PE_SLOTS, "error",
      "Grid Engine has no parallel environment that keeps a job's slots on one host (allocation_rule $pe_slots)",
      impact=5)
def sge_no_single_node_pe(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, canu's Grid Engine check stopping because no parallel environment has
        allocation_rule $pe_slots ("No Sun Grid Engine Parallel Environment is using allocation rule
        '$pe_threads'", whose '$pe_threads' is a misprint for $pe_slots, and "Multi-thread execution
        not supported on this grid"), or refusing the PE named in gridEngineResourceOption ("Sun
        Grid Engine parallel environment 'X' is using 'allocation_rule' other than '$pe_slots'").

    Why it matters:
        A multi-threaded job asks Grid Engine for N slots with -pe NAME N and runs its threads in
        one process on one host; only a PE whose allocation_rule is $pe_slots puts all N slots on
        one host ($fill_up and $round_robin spread them). Without one, the job's threads share one
        slot's worth of the host, or the pipeline refuses to run.

    How to fix:
        qconf -spl lists the PEs; qconf -sp NAME | grep allocation_rule shows each one's rule. Use
        the one with $pe_slots (-pe NAME N, or canu's gridEngineResourceOption="-pe NAME THREADS
        -l <mem>=MEMORY"); where none exists the administrators add one (qconf -ap NAME with
        allocation_rule $pe_slots) and put it in the queue's pe_list.

    References:
        - https://github.com/marbl/canu/blob/d2ec645cf89a7fc862dcfdf2dea5a547eba15376/src/pipelines/canu/Grid_SGE.pm (discoverThreadsOption, configureSGE)
        - https://github.com/daimh/sge/blob/d913cab5b7efa54d597cbb95ee59a11405848ba9/doc/man/man5/sge_pe.5 (allocation_rule: $pe_slots)
        - https://github.com/marbl/canu/issues/1975
    """
    told = catalogued(f, NO_PE_SLOTS)
    if not told:
        return
    s = told[0]
    pe = s.get("pe")
    ignored = [x for x in f.get("ticket.symptoms") or [] if x.get("id") == "canu_grid:sge-pe-ignored"]
    seen = "; ".join(f"{x.get('pe')}: {x.get('rule')}" for x in ignored[:6])
    seen = f" (canu set aside: {seen})" if seen else ""
    if pe:
        what = f"the parallel environment '{pe}' does not have allocation_rule $pe_slots"
    else:
        what = "no parallel environment on this Grid Engine has allocation_rule $pe_slots (canu's '$pe_threads' is a misprint for it)"
    fix = ("qconf -spl   # the parallel environments\n"
           "for pe in $(qconf -spl); do echo \"$pe: $(qconf -sp $pe | grep allocation_rule)\"; done   # each one's allocation_rule\n"
           "# one shows $pe_slots: use it, -pe THAT_PE N (canu: gridEngineResourceOption=\"-pe THAT_PE THREADS -l <mem_name>=MEMORY\")\n"
           "# none does: ask the administrators for one (qconf -ap smp, allocation_rule $pe_slots, added to the queue's pe_list with qconf -mq)")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}{seen}: a multi-threaded job needs all its slots on one host",
              fix=fix, evidence=told_evidence(s))
