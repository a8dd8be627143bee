"""The x86 time-stamp counter given up as the kernel's clock: the clocksource watchdog found it drifting,
the CPUs' counters disagree, or the hypervisor does not keep it steady (knowledge/messages/kernel_hwerr.toml,
Linux 6.1's kernel/time/clocksource.c and arch/x86/kernel/tsc.c). Time is then read from hpet or acpi_pm
through a system call instead of the vDSO: clock_gettime costs microseconds, not nanoseconds."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "tsc-clocksource-unstable"
_SWITCHED = "kernel_hwerr:clocksource-switched"
# Clocks a guest reads in the vDSO as fast as the TSC (paravirtual pages): a fall back to one of them costs nothing.
_FAST_FALLBACK = ("kvm-clock", "hyperv_clocksource_tsc_page")

# Clock sources timekeeping reads slowly: acpi_pm and the PIT through port I/O in a system call, hpet
# through an uncached device read (arch/x86/kernel/hpet.c; the 8254 PIT and the ACPI PM timer have no vDSO
# clock mode), the jiffies counters at the timer tick's resolution only (kernel/time/jiffies.c).
_SLOW = {"hpet": "the HPET, an uncached device read, far slower than the TSC",
         "acpi_pm": "the ACPI power-management timer, read through a system call and port I/O",
         "pit": "the 8254 PIT, read through a system call and port I/O",
         "jiffies": "the timer-tick counter: time advances only at each tick",
         "refined-jiffies": "the timer-tick counter: time advances only at each tick"}

_FIX = ("cat /sys/devices/system/clocksource/clocksource0/current_clocksource   # tsc (or kvm-clock) is read in the vDSO; "
        "hpet or acpi_pm means every clock_gettime is a system call\n"
        "cat /sys/devices/system/clocksource/clocksource0/available_clocksource   # tsc gone from this list: the kernel gave "
        "it up until the next boot\n"
        "sudo dmesg -T | grep -iE 'clocksource|tsc'   # why: the watchdog's skew, CPUs' counters out of step, or the hypervisor\n"
        "# administrators: bare metal: update the BIOS and check its TSC and C-state settings; a VM: ask the hypervisor's "
        "owners for an invariant TSC passed through (or the paravirtual clock), then reboot the node")


def _fallback(f: FactView, after: int) -> Optional[str]:
    """The clock the kernel switched to after the TSC was given up, where the paste shows it."""
    switched = [s for s in f.get("ticket.symptoms") or [] if s.get("id") == _SWITCHED
                and isinstance(s.get("line"), int) and s["line"] >= after]
    return str(switched[-1].get("clocksource")) if switched else None


@rule("SYS037", SYMBOL, "warning", "the kernel gave up the TSC as its clock: time reads are slow system calls", impact=4,
      also={"info": "the TSC was given up for a paravirtual clock that is read as fast (kvm-clock, Hyper-V's TSC page)"})
def tsc_clocksource_unstable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, the kernel's own lines that it stopped using the CPU's time-stamp
        counter as its clock: the watchdog's "Marking clocksource 'tsc' as unstable because the
        skew is too large" ('tsc-early' at boot), "tsc: Marking TSC unstable due to <reason>" (the
        watchdog, CPUs' counters out of step, a boot parameter, the hypervisor), "TSC found unstable
        after boot, most likely due to broken BIOS" and "Override clocksource tsc is unstable": a
        warning, naming the clock it fell back to where the paste shows "Switched to clocksource"
        (hpet, acpi_pm); info where that clock is a paravirtual one read as fast (kvm-clock).
        On a live node (or its snapshot), a warning where the clock source timekeeping reads
        (/sys/devices/system/clocksource/clocksource0/current_clocksource) is hpet, acpi_pm, the
        PIT or a jiffies counter, saying whether the TSC is still in available_clocksource.

    Why it matters:
        The TSC is read in user space (the vDSO) in nanoseconds; hpet and acpi_pm are read by a
        system call that takes microseconds. A program that reads the clock often (profilers,
        timers in event loops, MPI progress, per-event timing) slows down many times, on that node
        only. The kernel does not take the TSC back until it reboots.

    How to fix:
        Confirm with current_clocksource; administrators fix the cause: firmware (BIOS update, TSC
        and C-state settings) on bare metal, the hypervisor's TSC on a VM; tsc=reliable on the kernel
        command line only hides a real skew.

    References:
        - https://github.com/torvalds/linux/blob/v6.1/kernel/time/clocksource.c (clocksource_watchdog, __clocksource_select)
        - https://github.com/torvalds/linux/blob/v6.1/arch/x86/kernel/tsc.c (mark_tsc_unstable)
        - https://docs.kernel.org/admin-guide/kernel-parameters.html (clocksource=, tsc=reliable)
        - https://github.com/torvalds/linux/blob/v6.1/Documentation/ABI/testing/sysfs-devices-system-clocksource
        - https://github.com/coreos/bugs/issues/185 (a node reading refined-jiffies with tsc available)
        - https://github.com/madgraph5/madgraph4gpu/issues/116 (clock_gettime slow on one VM: tsc-early marked unstable)
        - https://github.com/sozu-proxy/sozu/issues/500 (TSC marked unstable, switched to hpet: time measurements slow)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        yield from _reads_a_slow_clock(f)
        return
    s = told[0]
    line = s.get("line") if isinstance(s.get("line"), int) else 0
    to = _fallback(f, line)
    more = f"; {len(told) - 1} more such line(s)" if len(told) > 1 else ""
    if to in _FAST_FALLBACK:
        yield Hit(message=f"the kernel gave up the TSC as its clock (line {line}: \"{told_text(s)}\"{more}) and switched to "
                          f"{to}, a paravirtual clock read as fast in the vDSO: time reads stay cheap",
                  fix=_FIX, evidence=told_evidence(s), severity="info")
        return
    slow = f"switched to {to}: " if to else ""
    yield Hit(message=f"the kernel gave up the TSC as its clock (line {line}: \"{told_text(s)}\"{more}); {slow}every "
                      "clock_gettime and gettimeofday is now a system call to a slow clock (hpet or acpi_pm) instead of a "
                      "vDSO read: programs that time often run slower on this node until it reboots with a steady TSC",
              fix=_FIX, evidence=told_evidence(s))


def _reads_a_slow_clock(f: FactView) -> Iterator[Hit]:
    """The live judgement (checks/system.py): the clock source timekeeping reads now. Read with f[...] so
    a paste or snapshot without the sysfs files is skipped with its reason, never passed."""
    source = f["system.clocksource"]
    current = str(source.get("current") or "")
    if current not in _SLOW:
        return
    available = [str(a) for a in source.get("available") or []]
    fast = [a for a in available if a == "tsc" or a in _FAST_FALLBACK]
    why = (f"{', '.join(fast)} {'is' if len(fast) == 1 else 'are'} available but not chosen (a clocksource= boot "
           "parameter, or the watchdog gave the TSC up earlier and it came back only in the list)" if fast else
           "no TSC is in available_clocksource: the kernel gave it up (the watchdog, or CPUs out of step) or never had it")
    yield Hit(message=f"the kernel reads time from {current} ({_SLOW[current]}), not the TSC: every clock_gettime and "
                      f"gettimeofday costs far more than a vDSO read; {why}",
              fix=_FIX, severity="warning",
              evidence={"system.clocksource.current": current, "system.clocksource.available": available})
