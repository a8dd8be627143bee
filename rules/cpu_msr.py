"""Performance tools that cannot open the CPU's model-specific registers (knowledge/messages/
cpu_msr.toml): LIKWID, Intel PCM, turbostat and x86_energy_perf_policy read hardware counters,
energy and frequencies through /dev/cpu/<n>/msr."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "msr-module-not-loaded"

_CHECK = ("ls -l /dev/cpu/0/msr; lsmod | grep -w msr   # no file: the msr module is not loaded; crw------- root: only "
          "root (or LIKWID's setuid access daemon) may open it")
_ADMIN = ("sudo modprobe msr && echo msr | sudo tee /etc/modules-load.d/msr.conf   # administrators: load it now and at "
          "every boot (sites that let users read counters also install msr-safe or LIKWID's access daemon)")
_LIKWID = ("ls -l \"$(dirname \"$(command -v likwid-perfctr)\")\"/../sbin/likwid-accessD   # LIKWID's access daemon: it "
           "must be there and setuid root (-rwsr-xr-x) for users")

# which of the causes the words name: a missing device file is the module; a refused one is permissions
_MODULE_REASONS = ("No such file or directory", "No such device")


@rule("SYS056", SYMBOL, "error",
      "the CPU's model-specific registers cannot be opened: the msr module is not loaded or the msr devices are root-only",
      impact=4)
def msr_module_not_loaded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log: LIKWID's "Cannot get access to MSRs. Please check permissions to the
        MSRs" (perfmon_init), its direct mode's "Cannot access MSR device file /dev/cpu/0/msr:
        <strerror>." and its access daemon's "Failed to find the daemon '...'" and "Exiting due to
        timeout: The socket file at '...' could not be" (likwid-accessD did not start); Intel PCM's
        "Try to execute 'modprobe msr' as root user"; turbostat's and x86_energy_perf_policy's "no
        /dev/cpu/0/msr, Try "# modprobe msr"".

    Why it matters:
        Hardware counters (FLOPS, memory bandwidth, cache misses), RAPL energy and uncore
        frequencies are read through /dev/cpu/<n>/msr. The device exists only when the msr kernel
        module is loaded, and it is root-only; LIKWID reaches it for users through its setuid-root
        access daemon. Without the module, or without the daemon, every measurement fails; a VM,
        WSL2 or a container without the devices has no MSRs to give.

    How to fix:
        Check whether /dev/cpu/0/msr exists and whose it is. If it is absent, the administrators
        load the msr module (modprobe msr, and a modules-load.d entry for boot). If it is
        root-only, LIKWID needs its access daemon installed setuid root (or the site's msr-safe
        allow-list); ask the site which nodes or partitions allow counter access.

    References:
        - https://github.com/RRZE-HPC/likwid/wiki/Build (access modes: accessdaemon, direct, perf_event)
        - https://github.com/RRZE-HPC/likwid/blob/master/src/perfmon.c (perfmon_init: "Cannot get access to MSRs")
        - https://github.com/RRZE-HPC/likwid/blob/master/src/access_x86_msr.c
        - https://github.com/intel/pcm/blob/master/src/cpucounters.cpp
        - https://man7.org/linux/man-pages/man4/msr.4.html (/dev/cpu/CPUNUM/msr, the msr module)
        - https://github.com/RRZE-HPC/likwid/issues/318 (likwid-perfctr on Haswell: the msr module not loaded)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = next((t for t in told if t.get("reason")), told[0])
    sid, reason = str(s.get("id")), str(s.get("reason") or "")
    quote = f"(line {s.get('line')}: \"{told_text(s)}\")"
    if reason in _MODULE_REASONS or sid == "cpu_msr:linux-tools-no-dev-msr":
        cause = f"{s.get('path') or '/dev/cpu/<n>/msr'} does not exist: the msr kernel module is not loaded on this node"
    elif reason:
        cause = f"{s.get('path') or '/dev/cpu/<n>/msr'} exists but is refused to this user ({reason}): it is root-only"
    elif sid in ("cpu_msr:likwid-access-daemon-missing", "cpu_msr:likwid-access-daemon-socket-timeout"):
        cause = ("LIKWID's access daemon, which opens the MSRs for users, is missing or did not start (not setuid root, "
                 "or no MSR device for it to open)")
    else:
        cause = ("the msr kernel module is not loaded, or /dev/cpu/*/msr is root-only and no access daemon opens it for "
                 "this user (a VM or container may expose no MSRs at all)")
    likwid = sid.startswith("cpu_msr:likwid")
    yield Hit(message=f"the tool could not open the CPU's model-specific registers {quote}: {cause}",
              fix="\n".join([_CHECK] + ([_LIKWID] if likwid else []) + [_ADMIN]),
              evidence=told_evidence(s))
