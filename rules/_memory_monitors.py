"""The kills of user-space memory monitors (knowledge/messages/memory_monitors.toml): Ray's raylet,
Dask's nanny, systemd-oomd. Each kills before the kernel would, so the kernel log holds no line, and
each is asked what it saw in its own way."""

from __future__ import annotations

from hpcdoctor.engine import Hit
from hpcdoctor.rules._common import ticket_evidence, told_text

MONITOR_KILLED = "memory_monitors:"

_OF = {"ray-task-killed-node-low-memory": "ray", "raylet-workers-killed-memory-pressure": "ray",
       "dask-nanny-memory-budget": "dask", "systemd-oomd-killed-cgroup": "systemd",
       "earlyoom-sending-signal": "earlyoom"}
_SAID = {
    "ray": ("Ray's memory monitor killed a worker because the node's memory use crossed its threshold "
            "(RAY_memory_usage_threshold, 0.95 by default)",
            "ray logs raylet.out   # on the node named (-ip <node IP> from the head): the workers killed and "
            "the node's top memory users\n# then give each task more memory or run fewer at once "
            "(@ray.remote(memory=..., num_cpus=...)), or run on nodes with more memory"),
    "dask": ("Dask's nanny restarted a worker whose memory passed the terminate fraction of its memory limit",
             "python -c \"import dask, distributed; print(dask.config.get('distributed.worker.memory'))\""
             "   # the target/spill/pause/terminate fractions in force\n# then give each worker more memory "
             "(--memory-limit, a dask-jobqueue job's memory=) or fewer threads per worker, or smaller partitions"),
    "systemd": ("systemd-oomd killed a cgroup because its memory pressure (PSI) stayed above the limit, or swap ran out",
                "oomctl   # the cgroups systemd-oomd watches, their pressure limits and current pressure\n"
                "journalctl -u systemd-oomd   # each kill and the cgroup it chose\n# then run the job with "
                "less memory at once, or on a host with more; or raise ManagedOOMMemoryPressureLimit= for its slice"),
    "earlyoom": ("earlyoom killed the process using most memory because available memory and free swap fell to its limits",
                 "journalctl -u earlyoom | grep -E 'low memory|sending SIG'   # each kill, its limits and the process chosen\n"
                 "free -g   # what the host has; then run with less data in memory at once, or on a host with more"),
}


def monitor_killed(s: dict) -> Hit:
    what, fix = _SAID[_OF[str(s.get("key"))]]
    return Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"): the host or the job's memory limit "
                       "was exhausted", fix=fix, evidence=ticket_evidence(s))
