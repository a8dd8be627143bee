"""A cgroup's pids limit reached: the kernel's pids controller refused a fork or a thread in one cgroup
(a systemd unit's TasksMax, a container's --pids-limit, a job's cgroup), read from its own line
(knowledge/messages/kernel_limits.toml, Linux 6.1's kernel/cgroup/pids.c). The program sees "Resource
temporarily unavailable" (EAGAIN), as it does for ulimit -u (nproc-limit-too-low): the kernel's line
names the cgroup, and the fix is that cgroup's pids.max, not the user's ulimit."""

from __future__ import annotations

import re
import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cgroup-pids-limit-reached"
_PATH = re.compile(r"/[\w.@:\\/+=-]{0,200}")
_UNIT = re.compile(r"[\w.@:\\+=-]{1,200}\.(?:service|scope|slice)")


def _fix(path: str) -> str:
    v2, v1 = shlex.quote(f"/sys/fs/cgroup{path}"), shlex.quote(f"/sys/fs/cgroup/pids{path}")
    lines = [f"cat {v2}/pids.max {v2}/pids.current 2>/dev/null || cat {v1}/pids.max {v1}/pids.current   # the limit and "
             "the tasks now (cgroup v2, or v1's pids hierarchy)",
             f"cat {v2}/pids.events 2>/dev/null || cat {v1}/pids.events   # max N: how many forks it refused"]
    unit = next((p for p in reversed(path.split("/")) if _UNIT.fullmatch(p)), None)
    if unit:
        u = shlex.quote(unit)
        lines += [f"systemctl show -p TasksMax -p TasksCurrent {u}   # systemd's TasksMax for the unit (DefaultTasksMax "
                  "when the unit sets none)",
                  f"sudo systemctl set-property {u} TasksMax=infinity   # administrators: or a number; for good: TasksMax= "
                  "in a drop-in (systemctl edit), then restart the unit"]
    lines.append("# a container: its runtime's pids limit (docker run --pids-limit, Kubernetes podPidsLimit); a batch job: "
                 "the site's cgroup settings; ulimit -u does not change this limit")
    return "\n".join(lines)


@rule("SYS038", SYMBOL, "error", "a cgroup's pids limit refused new processes or threads", impact=6,
      also={"warning": "on this node, a pids limit above this process refused forks before, or is nine tenths used"})
def cgroup_pids_limit_reached(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, the pids controller's "cgroup: fork rejected by pids controller in
        <cgroup>": a fork, clone or new thread in that cgroup failed because its pids.max was
        reached. The cgroup is a systemd unit (/system.slice/<unit>.service: TasksMax, 15 % of
        the kernel's pid limit by default for services), a login session (user.slice), a container
        (docker's --pids-limit, Kubernetes' podPidsLimit) or a batch job's cgroup.

    Why it matters:
        Every process and thread in the cgroup counts: a service or job that starts threads per
        CPU or per connection fails to start more ("Resource temporarily unavailable", EAGAIN from
        fork or pthread_create), or aborts. Raising ulimit -u does nothing for it.

    How to fix:
        Read the cgroup's pids.max and pids.current; raise the limit where it is set: TasksMax= for
        a systemd unit (systemctl set-property, or a drop-in), the container runtime's pids limit,
        or the site's job cgroup settings.

    On a node (checks/affinity.py), every cgroup from this process's own up to the root that sets
    pids.max is read with its pids.current and pids.events: at its limit now, an error (no process
    or thread can start in it); forks it refused before ("max N"), or nine tenths used, a warning.

    References:
        - https://github.com/torvalds/linux/blob/v6.1/kernel/cgroup/pids.c (pids_can_fork: "cgroup: fork rejected by pids controller in ")
        - https://docs.kernel.org/admin-guide/cgroup-v2.html (PID controller: pids.max, pids.current, pids.events)
        - https://www.freedesktop.org/software/systemd/man/latest/systemd.resource-control.html (TasksMax=)
        - https://github.com/stevejenkins/unifi-linux-utils/issues/17 (a service's threads refused: TasksMax=infinity)
        - https://github.com/Icinga/icinga2/issues/4918 (the same line for icinga2.service)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        yield from _live(f)
        return
    s = told[0]
    raw = str(s.get("cgroup") or "")
    path = raw if _PATH.fullmatch(raw) else ""
    more = f"; {len(told) - 1} more such line(s)" if len(told) > 1 else ""
    yield Hit(message=f"the kernel's pids controller refused a new process or thread in {path or 'a cgroup'} (line "
                      f"{s.get('line')}: \"{told_text(s)}\"{more}): that cgroup reached its pids.max (systemd's TasksMax, a "
                      "container's pids limit or the job's cgroup), so fork and pthread_create fail with EAGAIN; ulimit -u "
                      "is not the limit here",
              fix=_fix(path or "/CGROUP"), evidence=told_evidence(s))


def _live(f: FactView) -> Iterator[Hit]:
    """The node's own pids limits (checks/affinity.py): read only where no pasted line said it."""
    levels = f["affinity.pids_limits"]
    if not isinstance(levels, list):
        return
    for lv in levels:
        limit, now, refused = lv.get("max"), lv.get("current"), int(lv.get("refused") or 0)
        path = str(lv.get("cgroup") or "")
        shown = path if _PATH.fullmatch(path) else "/CGROUP"
        full = isinstance(limit, int) and isinstance(now, int) and now >= limit
        near = isinstance(limit, int) and isinstance(now, int) and limit > 0 and now >= 0.9 * limit
        if not (full or near or refused):
            continue
        said = [f"{now} of its {limit} tasks in use" if isinstance(limit, int) and isinstance(now, int)
                else f"pids.max {limit if limit is not None else 'max'}"]
        if refused:
            said.append(f"{refused} fork(s) refused so far (pids.events max)")
        yield Hit(message=f"cgroup {path}: {', '.join(said)}: "
                          + ("no process or thread can start in it now" if full else
                             "a program that starts threads or processes there gets EAGAIN (\"Resource temporarily "
                             "unavailable\") at the limit; ulimit -u is not that limit"),
                  severity="error" if full else "warning", fix=_fix(shown),
                  evidence={"affinity.pids_limits": lv})
