"""A Jupyter kernel that died, for host-memory-oom-killed (rules/memory.py): Jupyter's own words
(knowledge/messages/jupyter_kernel.toml) and the user's sentence naming memory with it (prose.toml
kernel-dies-memory-said). Neither says why the process ended, so the answer is a hint (info) with the
commands that tell memory from a crash."""

from __future__ import annotations

from typing import Optional

from hpcdoctor.engine import Hit
from hpcdoctor.rules._common import stated, told_evidence, told_text

JUPYTER = "jupyter_kernel:"
MEMORY_SAID = "prose:kernel-dies-memory-said"

_FIX = ("cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.events 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes "
        "/sys/fs/cgroup/memory/memory.failcnt   # in a terminal of the same server: its memory limit, and how often it was "
        "hit (oom_kill in memory.events, cgroup v2; failcnt, v1)\n"
        "echo \"$MEM_LIMIT\"   # the limit JupyterHub's spawner gave the server, in bytes (empty where it sets none)\n"
        "dmesg -T 2>/dev/null | grep -iE 'out of memory|oom-kill|killed process' | tail -3   # on a machine of your own: "
        "the kernel's OOM line names the process\n"
        "# then hold less in memory at once (del large objects, read data in chunks), or ask the hub's administrators "
        "for a larger memory limit")


def is_kernel_line(s: dict) -> bool:
    sid = str(s.get("id", ""))
    return sid.startswith(JUPYTER) or sid == MEMORY_SAID


def kernel_died_hint(told: list) -> Optional[Hit]:
    """The hint for a dead notebook kernel, or None where no such line was read."""
    died = next((s for s in told if str(s.get("id", "")).startswith(JUPYTER)), None)
    memory = next((s for s in told if s.get("id") == MEMORY_SAID and stated(s)), None)
    if memory is not None:
        also = f"; Jupyter says the kernel died (line {died.get('line')})" if died is not None else ""
        return Hit(message=f"the user says the notebook kernel fails and names its memory (line {memory.get('line')}: "
                           f"\"{told_text(memory)}\"){also}: the usual cause is the memory limit of the notebook server "
                           "(the hub's or the container's), at which the kernel's OOM killer ends the kernel process",
                   fix=_FIX, evidence=told_evidence(memory), severity="info")
    if died is None:
        return None
    return Hit(message=f"Jupyter says the notebook's kernel died (line {died.get('line')}: \"{told_text(died)}\"): it sees "
                       "the process gone, not why; the usual cause is memory (the kernel's OOM killer, at the host's or the "
                       "hub's or container's limit), a crash in native code (a segmentation fault) the other",
               fix=_FIX, evidence=told_evidence(died), severity="info")
