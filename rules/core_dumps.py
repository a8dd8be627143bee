"""Why a crashed program left no core file, or a cut one: systemd-coredump's coredump.conf limits
(ExternalSizeMax, ProcessSizeMax, Storage=, MaxUse/KeepFree), the crashed process's RLIMIT_CORE, and the
kernel's own refusals (kernel.core_pattern, core_pipe_limit), each from its emitter's line
(knowledge/messages/coredump.toml). Each names its own fix: the limit that dropped the core."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "core-dump-size-limited"

_CONF = ("systemd-analyze cat-config systemd/coredump.conf   # Storage=, ProcessSizeMax=, ExternalSizeMax= in force, "
         "with the defaults (coredump.conf(5))\n")
_SIZES = (_CONF + "sudo mkdir -p /etc/systemd/coredump.conf.d && printf '[Coredump]\\nProcessSizeMax=32G\\nExternalSizeMax=32G\\n' | "
          "sudo tee /etc/systemd/coredump.conf.d/size.conf   # administrators: room for the largest core; applies to the next crash\n"
          "df -h /var/lib/systemd/coredump   # the cores land here: room for one that size")
_RLIMIT = ("grep -i core /proc/self/limits   # 'Max core file size 0': this shell's processes dump nothing\n"
           "ulimit -c unlimited   # in the shell or job script that starts the program (sbatch: before srun)\n"
           "# a service: LimitCORE=infinity in its unit (systemctl edit UNIT); every service: DefaultLimitCORE=infinity "
           "in /etc/systemd/system.conf")
_TRUNCATED = (_CONF + "df -h /var/lib/systemd/coredump   # MaxUse= and KeepFree= are measured against this file system\n"
              "grep -i core /proc/self/limits   # a finite 'Max core file size' also cuts the core")
_KERNEL = ("cat /proc/sys/kernel/core_pattern /proc/sys/kernel/core_pipe_limit /proc/sys/fs/suid_dumpable   # where the "
           "kernel sends cores, how many at once, and setuid programs' rule\n"
           "# administrators: a full path (or a working |handler) in kernel.core_pattern, via /etc/sysctl.d/, "
           "and a core_pipe_limit of 0 (no limit) or above the crashes that come at once")

# Each entry's cause and fix (coredump.toml's keys): the limit its line names.
_BY_KEY = {
    "external-size-max": ("the core was larger than coredump.conf's ExternalSizeMax and was dropped, though ulimit -c allowed it", _SIZES, None),
    "process-size-max": ("the core was larger than coredump.conf's ProcessSizeMax: no stack trace was made (the core may "
                         "still be stored)", _SIZES, "info"),
    "resource-limits-disable": ("the crashed process ran with RLIMIT_CORE 0 (ulimit -c 0, or its unit's LimitCORE=): "
                                "nothing was stored", _RLIMIT, None),
    "core-dumping-disabled": ("the crashed process ran with RLIMIT_CORE 0 (ulimit -c 0, or its unit's LimitCORE=): "
                              "nothing was stored", _RLIMIT, None),
    "limits-both-zero": ("coredump.conf switches core dumps off (ProcessSizeMax=0 with Storage=none or ExternalSizeMax=0)", _SIZES, None),
    "limiting-core-size": ("the core will be cut short: the file system under /var/lib/systemd/coredump is short of room "
                           "(MaxUse=, KeepFree=)", _TRUNCATED, None),
    "core-truncated": ("the stored core was cut at a size limit: a debugger may not read it", _TRUNCATED, None),
    "kernel-full-path-required": ("the kernel skipped the dump: a setuid program's core needs a full path in "
                                  "kernel.core_pattern", _KERNEL, None),
    "kernel-over-core-pipe-limit": ("the kernel skipped the dump: more cores at once than kernel.core_pipe_limit", _KERNEL, None),
    "kernel-pipe-failed": ("the kernel could not start the core handler kernel.core_pattern pipes to: nothing was stored", _KERNEL, None),
}


@rule("SYS039", SYMBOL, "warning", "a core dump was not stored, or cut short, by a configured limit", impact=3,
      also={"info": "the core was too large for systemd-coredump's stack trace (ProcessSizeMax), and may still be stored"})
def core_dump_size_limited(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted journal or kernel log, the line that says why a crashed program left no core
        file: systemd-coredump's "The core will not be stored: size N is greater than M (the
        configured maximum)" (ExternalSizeMax), "Resource limits disable core dumping for process"
        (and its older "Core Dumping has been disabled": RLIMIT_CORE 0), "Limits for coredump
        processing and storage are both 0", "Limiting core file size to N bytes" and "Core file was
        truncated" (MaxUse/KeepFree, size limits), and the kernel's "can only dump core to fully
        qualified path", "over core_pipe_limit" and "Core dump to |<handler> pipe failed":
        warnings, each naming its own limit. "Not generating stack trace: core size N is greater
        than M" (ProcessSizeMax) is info: the core may still be stored.

    Why it matters:
        A crash that leaves no core cannot be debugged after the fact; ulimit -c unlimited does not
        help when systemd-coredump's own limits or the kernel's core_pattern drop the core.

    How to fix:
        Raise the limit the line names: ProcessSizeMax= and ExternalSizeMax= in coredump.conf (a
        drop-in), ulimit -c unlimited (LimitCORE= for a service), room under
        /var/lib/systemd/coredump, or a working kernel.core_pattern.

    References:
        - https://www.freedesktop.org/software/systemd/man/latest/coredump.conf.html (Storage=, ProcessSizeMax=, ExternalSizeMax=, MaxUse=, KeepFree=)
        - https://github.com/systemd/systemd/blob/v252/src/coredump/coredump.c (the messages)
        - https://github.com/torvalds/linux/blob/v6.1/fs/coredump.c (do_coredump: "Skipping core dump")
        - https://man7.org/linux/man-pages/man5/core.5.html (RLIMIT_CORE, core_pattern, core_pipe_limit)
        - https://github.com/TrunkRecorder/trunk-recorder/issues/583 (a 4.4 GB core over the 2 GB maximum)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    key = str(s.get("id", "")).split(":", 1)[-1]
    what, fix, severity = _BY_KEY.get(key, ("a core dump was not stored", _CONF.rstrip("\n"), None))
    size = f" ({int(s['size']) / 2**30:.1f} GiB over {int(s['limit']) / 2**30:.1f} GiB)" if str(s.get("size", "")).isdigit() \
        and str(s.get("limit", "")).isdigit() else ""
    more = f"; {len(told) - 1} more such line(s)" if len(told) > 1 else ""
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\"{more}: {what}{size}", fix=fix,
              evidence=told_evidence(s), severity=severity)
