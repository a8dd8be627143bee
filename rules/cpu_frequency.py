"""The CPU held at its lowest frequency by the cpufreq policy: the generic powersave governor, a
userspace governor set to the minimum (Slurm's --cpu-freq=low), or a policy maximum capped at the
hardware minimum. Read on the node from cpu0's cpufreq policy (fact cpu.cpufreq) and, in a paste,
from a user's words (knowledge/messages/prose.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cpu-governor-pins-min-frequency"
# Drivers whose "powersave" is their own frequency-selection algorithm, not the generic governor that
# requests policy->min (intel_pstate.rst: active mode; amd-pstate.rst: active mode, amd-pstate-epp).
_OWN_ALGORITHM = frozenset({"intel_pstate", "amd-pstate-epp"})
_FIX = ("cpupower frequency-info   # the driver, the governor, the policy's limits and the hardware's\n"
        "sudo cpupower frequency-set -g schedutil   # or performance (ondemand where schedutil is absent); "
        "administrators, persistently through the distribution's tuned/cpupower service\n"
        "cat /sys/devices/system/cpu/cpufreq/policy0/scaling_max_freq /sys/devices/system/cpu/cpufreq/policy0/cpuinfo_max_freq"
        "   # a capped maximum: sudo cpupower frequency-set -u <the cpuinfo_max_freq value>KHz\n"
        "cat /sys/devices/system/cpu/cpu*/cpufreq/bios_limit 2>/dev/null | sort | uniq -c   # a firmware limit on every "
        "CPU: the BIOS power profile (set it to performance), or a power cap from the BMC; a reboot clears a stuck state\n"
        "# under Slurm: srun --cpu-freq=Performance ./app (or --cpu-freq=high); --cpu-freq=low and a "
        "SLURM_CPU_FREQ_REQ of low set the userspace governor to the minimum")


def _khz(policy: dict, name: str) -> Optional[int]:
    v = policy.get(name)
    return v if isinstance(v, int) and v > 0 else None


def _pinned(policy: dict) -> Optional[str]:
    """Why cpu0's policy holds the lowest frequency, or None where it does not (or cannot be told)."""
    hw_min, hw_max = _khz(policy, "cpuinfo_min_freq"), _khz(policy, "cpuinfo_max_freq")
    if hw_min is None or hw_max is None or hw_max <= hw_min:
        return None   # no range to scale over (a fixed-clock part, or limits not readable)
    gov, driver = policy.get("scaling_governor"), policy.get("scaling_driver")
    lo, hi = _khz(policy, "scaling_min_freq"), _khz(policy, "scaling_max_freq")
    if hi is not None and hi <= hw_min:
        return f"the policy's maximum (scaling_max_freq {hi} kHz) is capped at the hardware's minimum ({hw_min} kHz)"
    bios = _khz(policy, "bios_limit")
    if bios is not None and bios <= hw_min:
        return (f"the platform firmware limits the CPU to {bios} kHz (bios_limit), the hardware's minimum of a CPU "
                f"that reaches {hw_max} kHz: a BIOS power-saving or power-capping state, which the OS cannot lift")
    if gov == "powersave" and isinstance(driver, str) and driver not in _OWN_ALGORITHM and lo is not None and lo < hw_max:
        return (f"the generic powersave governor (driver {driver}) requests the policy's lowest frequency, "
                f"scaling_min_freq {lo} kHz, of a CPU that reaches {hw_max} kHz")
    setspeed = _khz(policy, "scaling_setspeed")
    if gov == "userspace" and setspeed is not None and setspeed <= hw_min:
        return f"the userspace governor holds the frequency at {setspeed} kHz, the hardware's minimum"
    return None


def _slurm_low(f: FactView) -> Optional[str]:
    try:
        value = f.env("SLURM_CPU_FREQ_REQ")
    except MissingFact:
        return None
    return value if value and value.strip().lower().startswith("low") else None


@rule("CPU006", SYMBOL, "warning", "the cpufreq policy holds the CPU at its lowest frequency", impact=6,
      also={"info": "the user says the powersave or userspace governor keeps the CPU at a low frequency"})
def cpu_governor_pins_min_frequency(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node, cpu0's cpufreq policy holding the lowest frequency: the generic powersave
        governor under a driver other than intel_pstate or amd-pstate-epp in active mode (whose
        "powersave" is their own algorithm), a userspace governor set to the hardware minimum
        (Slurm's --cpu-freq=low does that), scaling_max_freq capped at cpuinfo_min_freq, or the
        platform firmware's limit (bios_limit, acpi-cpufreq) at cpuinfo_min_freq: a node whose BIOS
        went into a low-power state runs every CPU at its lowest clock. In a
        paste, a user saying the powersave or userspace governor keeps the CPU at a low frequency.

    Why it matters:
        The kernel's powersave governor requests the policy's minimum (cpufreq_powersave.c:
        __cpufreq_driver_target(policy, policy->min)), so every job on the node runs at perhaps a
        third of the CPU's speed. It is the default where a distribution builds it as the default
        governor or where intel_pstate runs passive (the intel_cpufreq driver); intel_pstate's own
        active-mode "powersave" scales normally and is not flagged, nor is performance or schedutil.

    How to fix:
        Select a scaling governor (schedutil, ondemand or performance) with cpupower
        frequency-set -g, raise a capped scaling_max_freq, or under Slurm ask for
        --cpu-freq=Performance or high; administrators make it persistent.

    References:
        - https://www.kernel.org/doc/html/latest/admin-guide/pm/cpufreq.html (governors, scaling_* and cpuinfo_* attributes)
        - https://www.kernel.org/doc/html/latest/admin-guide/pm/intel_pstate.html (active and passive modes, intel_cpufreq)
        - https://www.kernel.org/doc/html/latest/admin-guide/pm/amd-pstate.html
        - https://github.com/torvalds/linux/blob/master/drivers/cpufreq/cpufreq_powersave.c
        - https://slurm.schedmd.com/srun.html#OPT_cpu-freq
        - https://github.com/mhardcastle/ddf-pipeline/issues/85 (nodes stuck at 1 GHz in a low-power state, cleared by a reboot and the BIOS settings)
    """
    policy = f.get("cpu.cpufreq")
    why = _pinned(policy) if isinstance(policy, dict) else None
    if why:
        low = _slurm_low(f)
        yield Hit(message=f"the CPU is held at its lowest frequency: {why}"
                          + (f" (SLURM_CPU_FREQ_REQ={low} asked for it)" if low else ""),
                  fix=_FIX, evidence={"cpu.cpufreq": policy})
        return
    told = catalogued(f, SYMBOL)
    if told:
        s = told[0]
        yield Hit(message=f"the user says the governor keeps the CPU at a low frequency (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the kernel's generic powersave governor requests the lowest frequency "
                          "(cpufreq.rst); `cpupower frequency-info` confirms the driver and governor",
                  fix=_FIX, evidence=told_evidence(s), severity="info")
