"""Hardware performance counters refused by the kernel's perf_event_paranoid policy: read from the
counter tools' own words (knowledge/messages/perf_events.toml: perf, LIKWID, prof.h) and a user's
statement of the level (prose.toml); the node's own level (system.perf_event_paranoid) is a fact
that sharpens the answer, never a finding alone: 2 is the kernel's default and most jobs count nothing."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "perf-event-paranoid-restricts-counters"
_SAID = "prose:perf-event-paranoid-said"
# What each level refuses to a process without CAP_PERFMON (kernel.rst; include/linux/perf_event.h
# perf_allow_cpu and perf_allow_kernel; 3 and above: the Debian/Ubuntu patch).
_REFUSES = {0: "raw and ftrace function tracepoints", 1: "CPU-wide events (system-wide counting, uncore and NUMA-domain counters)",
            2: "CPU-wide events and counting in the kernel (events without the :u modifier)",
            3: "every performance event (a Debian/Ubuntu kernel's level)"}
_FIX = ("cat /proc/sys/kernel/perf_event_paranoid   # 2 (the kernel's default): only your own processes, user space "
        "only; 1: also kernel space; 0 or -1: also CPU-wide (uncore) events; 3 or more: nothing without CAP_PERFMON\n"
        "perf stat -e cycles:u,instructions:u ./app   # what level 2 allows: your process, user-space counts "
        "(prof.h: #define PROF_USER_EVENTS_ONLY before #include \"prof.h\"; LIKWID: likwid-perfctr --execpid)\n"
        "# uncore, NUMA-domain and system-wide counters need level 0 or CAP_PERFMON: administrators, where the "
        "site's policy allows: sudo sysctl -w kernel.perf_event_paranoid=0 (and kernel.perf_event_paranoid = 0 in "
        "/etc/sysctl.d/ to keep it), or CAP_PERFMON for a perf binary kept to one group (perf-security.rst)\n"
        "# in a container: docker run --cap-add PERFMON (Linux 5.8+) lets the kernel skip the level for it")


def _level(f: FactView, told: list) -> Optional[int]:
    """The level the given pasted lines state, else this node's own."""
    for s in told:
        try:
            return int(s["level"])
        except (KeyError, TypeError, ValueError):
            continue
    live = f.get("system.perf_event_paranoid")
    return live if isinstance(live, int) else None


def _what(level: Optional[int]) -> str:
    if level is None:
        return "the kernel's perf_event_paranoid level refuses the event to a process without CAP_PERFMON"
    return (f"kernel.perf_event_paranoid is {level}, which refuses "
            f"{_REFUSES.get(min(level, 3), 'nothing') if level >= 0 else 'nothing'} to a process without CAP_PERFMON")


@rule("SYS018", SYMBOL, "error", "the kernel's perf_event_paranoid level refuses the performance counters a tool asks for",
      impact=4, also={"info": "the user states a perf_event_paranoid level that refuses counters, beside their tool's failure"})
def perf_event_paranoid_restricts_counters(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a counter tool refused by kernel.perf_event_paranoid: perf's "Access to
        performance monitoring and observability operations is limited." (with "perf_event_paranoid
        setting is N"), its older "You may not have permission to collect stats." / "Consider
        tweaking /proc/sys/kernel/perf_event_paranoid", "No permission to enable <event> event.",
        LIKWID's "Cannot use performance monitoring with perf_event_paranoid = N" and "Cannot setup
        events without PID of executed application because perf_event_paranoid > 0", prof.h's "PROF
        error (Permission denied)", AMD uProf's "For non root users with perf_event_paranoid value
        greater than -1, the maximum number of events supported together is : N", rr's "rr needs
        /proc/sys/kernel/perf_event_paranoid <= 1, but it is N". A user stating a level of 1 or more ("perf_event_paranoid is set
        to 2") is answered at info. The node's own level (/proc/sys/kernel/perf_event_paranoid,
        fact system.perf_event_paranoid) is named where known, never a finding alone.

    Why it matters:
        perf_event_open returns EACCES for what the level forbids to a process without CAP_PERFMON:
        above 0 CPU-wide events (system-wide counting, the uncore and NUMA-domain counters LIKWID's
        memory groups read), above 1 counting in the kernel (an event without exclude_kernel, prof.h's
        default), 3 and above (Debian, Ubuntu) everything. Profilers then abort or report nothing.

    How to fix:
        Count what the level allows (your own process, user space only: perf's :u modifier,
        PROF_USER_EVENTS_ONLY, likwid-perfctr --execpid), or have the administrators lower the
        level (sysctl kernel.perf_event_paranoid) or grant CAP_PERFMON to a perf binary kept to a group.

    References:
        - https://www.kernel.org/doc/html/latest/admin-guide/sysctl/kernel.html#perf-event-paranoid
        - https://www.kernel.org/doc/html/latest/admin-guide/perf-security.html
        - https://man7.org/linux/man-pages/man2/perf_event_open.2.html (EACCES, perf_event_paranoid)
        - https://github.com/RRZE-HPC/likwid/blob/034a9adfb622f5788e7c7e3628347722a301df5c/src/includes/perfmon_perfevent.h
        - https://github.com/cyrus-and/prof/blob/18e93fa6d9b26230391173746b92349f8f085f70/prof.h
        - https://github.com/sinkovit/profiling-tutorial/issues/1 (AMD uProf's event limit above level -1)
        - https://github.com/rr-debugger/rr/issues/2835 (rr's check, and why it needs level 1)
    """
    told = catalogued(f, SYMBOL)
    tools = [s for s in told if s.get("id") != _SAID]
    if tools:
        # the tool's own number: a user's line may be perf's advice ("e.g. kernel.perf_event_paranoid = -1")
        level = _level(f, tools)
        s = tools[0]
        # uProf states its own limit: the events it may program together while the level is above -1
        limit = (f"; AMD uProf counts at most {s['limit']} events together for a non-root user until the level is "
                 f"-1 (split the collection's events, or the administrators lower the level)") if s.get("limit") else ""
        yield Hit(message=f"the performance counters were refused (line {s.get('line')}: \"{told_text(s)}\"): {_what(level)}{limit}",
                  fix=_FIX, evidence={**told_evidence(s), "perf_event_paranoid": level})
        return
    level = _level(f, told)
    said = [s for s in told if s.get("id") == _SAID and isinstance(level, int) and level >= 1]
    if said:
        s = said[0]
        yield Hit(message=f"the user states kernel.perf_event_paranoid = {level} (line {s.get('line')}): at that level "
                          f"the kernel refuses {_REFUSES[min(level, 3)]} to a process without CAP_PERFMON, the usual "
                          "cause of a counter tool's permission error (the kernel's sysctl documentation)",
                  fix=_FIX, evidence={**told_evidence(s), "perf_event_paranoid": level}, severity="info")
