"""A node with no memory left for a new job: what free, top or /proc/meminfo print (pasted, read by
knowledge/messages/memory_summary.toml) or what /proc/meminfo says on the node itself
(checks/memory.py), available memory a small fraction of the node and swap used up. A process
already killed for memory is host-memory-oom-killed's (MEM006); a refused allocation is
host-memory-insufficient's (MEM007)."""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_evidence

_SYMBOL = "node-memory-taken-by-other-jobs"
# A number as free -h, top and procps 3.2's top print it: a decimal point or, in a locale that uses
# one, a comma (printf %.1f); free's suffixes B K M G T P E, with i from procps-ng 3.3.13; top 3.2's
# k. Powers of 1024 throughout: --si's powers of 1000 change a fraction between columns of one
# table by at most a few percent, and every column of one table carries the same kind of suffix.
_NUMBER = re.compile(r"(\d{1,15}(?:[.,]\d{1,3})?)([KMGTPEkmg]?)i?B?$")
_POWER = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
# Bare integers below this are too coarse to divide: free -g and -m truncate (a 1.8 GiB node with 400
# MiB available prints total 1, available 0 under -g).
_COARSE = 100
_MEMINFO = ("memory_summary:meminfo-available", "memory_summary:meminfo-swap")
_TOP_OLD = "memory_summary:top-buffers-cached"
_WHAT = {"free-available": "free's table", "free-wide-available": "free -w's table",
         "free-buffers-cache-row": "free's table (procps before 3.3.10: the -/+ buffers/cache row)",
         "top-avail-mem": "top's summary", "top-buffers-cached": "top's summary (free + buffers + cached)",
         "meminfo-available": "/proc/meminfo"}


def _amount(text: object) -> Optional[float]:
    """A printed amount in one unit per table: a suffixed number in bytes, a bare one as printed."""
    m = _NUMBER.match(str(text or "").strip())
    if not m:
        return None
    value = float(m.group(1).replace(",", "."))
    return value * 1024 ** _POWER[m.group(2).upper()]


def _fractions(s: dict, swap: Optional[dict]) -> Optional[Tuple[float, float]]:
    """(available / total, swap free / swap total) of one reading, or None where a number is missing,
    the node has no memory to speak of, or no swap is configured (swap that is not there is not used up)."""
    total, available = _amount(s.get("total")), _amount(s.get("available"))
    if s.get("id") == _TOP_OLD:
        parts = [_amount(s.get(k)) for k in ("free", "buffers", "cache")]
        available = sum(parts) if None not in parts else None  # type: ignore[arg-type]
    src = swap or s
    swap_total = _amount(src.get("swap_total"))
    swap_free = _amount(src.get("swap_free"))
    if swap_free is None and swap_total is not None and _amount(src.get("swap_used")) is not None:
        swap_free = swap_total - _amount(src.get("swap_used"))  # type: ignore[operator]
    if not total or available is None or not swap_total or swap_free is None:
        return None
    if str(s.get("total", "")).strip().isdigit() and total < _COARSE:
        return None  # free -g on a small node: "1 1 0 ... 0" rounds down what is there to nothing
    return available / total, max(swap_free, 0.0) / swap_total


_FIX = ("free -h   # what the node has now: total, used, available and swap\n"
        "ps -eo user:20,pid,rss,comm --sort=-rss | head -15   # whose processes hold the memory (RSS in KiB)\n"
        "squeue -w $(hostname -s) -o '%.12i %.10u %.10m %.20j'   # Slurm: the jobs on this node and the memory each asked for\n"
        "# then ask the owners or the administrators to stop what holds it, or run where the scheduler gives the job "
        "its own memory (sbatch --mem=<what the job needs>, or --exclusive)")


@rule("MEM008", _SYMBOL, "warning", "the node has no memory left for a new job: available memory and swap used up",
      impact=7)
def node_memory_taken(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A node whose memory a new job cannot get: what the kernel counts as available (MemAvailable,
        free's "available" column, top's "avail Mem") below 5% of the node's memory, with swap
        configured and at least 95% of it used (knowledge/thresholds.toml [node_memory]). Read from a
        pasted free table of every procps layout (free 3.3.10+ and busybox "total used free shared
        buff/cache available", free -w, and before 3.3.10 the "-/+ buffers/cache:" row, in any unit
        or -h suffix), top's summary lines ("KiB Mem : ... avail Mem" from procps-ng 3.3.10, "Mem:
        ... buffers" / "Swap: ... cached" before it, where free + buffers + cached is the estimate),
        or /proc/meminfo's MemTotal, MemAvailable, SwapTotal and SwapFree; on a node itself, from its
        own /proc/meminfo. It states what was read: whose processes hold the memory is not in these
        tables, and ps shows it.

    Why it matters:
        On a shared node (a login node, a node several jobs share, a workstation) other users'
        processes can hold the memory: a job started there is killed by the kernel's OOM killer, or
        crawls while the kernel swaps, whatever the job itself needs. Swap used up as well means the
        kernel has nowhere left to put pages.

    How to fix:
        See who holds the memory (ps sorted by RSS; under Slurm, squeue -w for the node's jobs); ask
        them or the administrators to stop it, or run where the scheduler gives the job memory of its
        own (sbatch --mem, --exclusive).

    References:
        - https://gitlab.com/procps-ng/procps/-/blob/master/man/free.1 (available: memory for new applications without swapping)
        - https://github.com/torvalds/linux/blob/master/Documentation/filesystems/proc.rst (MemAvailable, SwapTotal, SwapFree)
        - https://github.com/hpc-admin-sist/DockerMonitor/issues/13 (a shared node's memory taken by other users)
    """
    limits = knowledge.load("thresholds")["node_memory"]
    low, swap_low = limits["available_max_fraction"], limits["swap_free_max_fraction"]
    read = catalogued(f, _SYMBOL)
    swap = next((s for s in read if s.get("id") == _MEMINFO[1]), None)
    for s in read:
        if s.get("id") == _MEMINFO[1]:
            continue
        got = _fractions(s, swap if s.get("id") == _MEMINFO[0] else None)
        if got is None or got[0] >= low or got[1] >= swap_low:
            continue
        key = str(s.get("key", ""))
        if key == "meminfo-available":
            avail, total = f"{int(s['available']) / 2**20:.1f} GiB", f"{int(s['total']) / 2**20:.1f} GiB"
            sw = swap or {}
            swap_said = f"{int(sw['swap_free']) / 2**20:.1f} GiB of {int(sw['swap_total']) / 2**20:.1f} GiB swap free"
        else:
            unit = f" {s['unit']}" if s.get("unit") else ""
            avail = (f"{s.get('available')}{unit}" if s.get("available")
                     else f"{s.get('free')} free + {s.get('buffers')} buffers + {s.get('cache')} cached{unit}")
            total = f"{s.get('total')}{unit}"
            swap_said = (f"{s.get('swap_free')} of {s.get('swap_total')}{unit} swap free" if s.get("swap_free") is not None
                         else f"{s.get('swap_used')} of {s.get('swap_total')}{unit} swap used")
        yield Hit(message=f"{_WHAT.get(key, 'the pasted table')} (line {s.get('line')}) shows {avail} of {total} "
                          f"available ({got[0]:.1%}) and {swap_said}: the node has no memory left for a new job, "
                          "whatever the job itself needs; the table does not say whose processes hold it",
                  fix=_FIX, evidence=dict(ticket_evidence(s), available_fraction=round(got[0], 4),
                                          swap_free_fraction=round(got[1], 4)))
        return
    if read:
        return
    total, available = f.get("memory.total_bytes"), f.get("memory.available_bytes")
    swap_total, swap_free = f.get("memory.swap_total_bytes"), f.get("memory.swap_free_bytes")
    if not all(isinstance(v, int) for v in (total, available, swap_total, swap_free)) or not total or not swap_total:
        return
    if available / total < low and swap_free / swap_total < swap_low:
        yield Hit(message=f"/proc/meminfo: {available / 2**30:.1f} GiB of {total / 2**30:.1f} GiB available "
                          f"({available / total:.1%}) and {swap_free / 2**30:.1f} GiB of {swap_total / 2**30:.1f} GiB "
                          "swap free: the node has no memory left for a new job",
                  fix=_FIX, evidence={"memory.total_bytes": total, "memory.available_bytes": available,
                                      "memory.swap_total_bytes": swap_total, "memory.swap_free_bytes": swap_free})
