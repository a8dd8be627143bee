"""A CPU affinity that names only CPUs the process may not use (knowledge/messages/affinity.toml):
taskset's, numactl's and hwloc-bind's refusals, Slurm's --cpu-bind outside the step, libgomp's places
without a usable CPU. sched_setaffinity(2) answers EINVAL when no CPU of the mask is both present and
in the thread's cpuset; a CPU number the machine lacks gives the same answer, and is the user's, not the
node's."""

from __future__ import annotations

from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.parse.cpulist import format_cpulist, parse_cpulist
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cpu-affinity-outside-cpuset"
_COMMAND = "affinity:taskset-cpu-list-command"
_COUNT = "affinity:getconf-online-cpus"
_SLURM = "affinity:slurm-cpu-binding-outside-step"
_STATES = {"affinity:libnuma-cpu-out-of-range", _SLURM}   # the tool checked against the allowed CPUs itself

_FIX = ("grep Cpus_allowed_list /proc/self/status   # the CPUs this shell (and what it starts) may use: its cpuset, "
        "the job's allocation\n"
        "cat /sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup)/cpuset.cpus.effective 2>/dev/null; cat /sys/devices/system/cpu/isolated   "
        "# the cgroup's CPUs (cgroup v2) and the kernel's isolcpus\n"
        "taskset -c \"$(grep Cpus_allowed_list /proc/self/status | cut -f2)\" COMMAND   # bind within that set (or leave the "
        "binding to the scheduler: srun --cpu-bind=cores)")
_SLURM_FIX = ("env | grep '^SLURM_CPU_BIND'   # a mask inherited from the job or interactive step this srun or sbatch was started in\n"
              "unset SLURM_CPU_BIND SLURM_CPU_BIND_LIST SLURM_CPU_BIND_TYPE SLURM_CPU_BIND_VERBOSE   # before the nested srun/sbatch\n"
              "srun --cpu-bind=cores COMMAND   # or let Slurm bind within the step's own CPUs (--cpu-bind=none to not bind)")


def _asked(f: FactView, line: int) -> Optional[List[int]]:
    """The CPU list of the taskset -c command typed on the line just above a refusal, or None."""
    cmd = next((s for s in f.get("ticket.symptoms") or []
                if s.get("id") == _COMMAND and isinstance(s.get("line"), int) and line - 2 <= s["line"] < line), None)
    try:
        return parse_cpulist(str(cmd.get("cpus"))) if cmd else None
    except ValueError:
        return None


def _online(f: FactView) -> Optional[int]:
    said = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == _COUNT), None)
    return int(said["count"]) if said and str(said.get("count", "")).isdigit() else None


def _mask_cpus(mask: str) -> List[int]:
    """The CPUs of Slurm's hexadecimal mask (bit n = CPU n)."""
    try:
        value = int(mask.replace(",", "").removeprefix("0x"), 16)
    except ValueError:
        return []
    return [i for i in range(value.bit_length()) if value >> i & 1]


@rule("CPU007", SYMBOL, "warning", "a CPU affinity names only CPUs this process may not use", impact=4,
      also={"error": "numactl (libnuma) or Slurm, which compare the list with the allowed CPUs themselves, say the CPUs lie outside them",
            "info": "the CPU asked for is not on the machine at all (the paste shows the CPU count): sched_setaffinity's answer, not a fault"})
def cpu_affinity_outside_cpuset(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a CPU binding the kernel or the tool refused because none of its CPUs is
        one the process may use: util-linux taskset's "failed to set pid N's affinity: Invalid
        argument" (and the older "sched_setaffinity: Invalid argument" form), hwloc-bind's
        "hwloc_set_cpubind ... failed (errno 22 Invalid argument)", libgomp's "None of the
        places contain usable logical CPUs" (warnings: EINVAL means no CPU of the mask is present
        and in the allowed set); numactl's "cpu argument N is out of range" and Slurm's "CPU
        binding outside of job step allocation, allocated CPUs are: 0x..." (errors: the tool
        compared with the allowed CPUs). Where the paste shows the taskset -c list and the
        machine's CPU count and every CPU asked for is beyond it, an info: the CPU does not
        exist, which is how sched_setaffinity works, not a fault of the node. On a live node or
        a snapshot the finding names the CPUs the process may use (Cpus_allowed_list).

    Why it matters:
        A job confined to a cpuset (Slurm's or Kubernetes' cgroup, a container's --cpuset-cpus)
        or a node with isolcpus keeps CPUs out of the process's allowed set; a script that pins
        to fixed CPU numbers, or a --cpu-bind mask inherited from another job, then fails at
        launch, or the runtime drops the binding.

    How to fix:
        Read the allowed CPUs (grep Cpus_allowed_list /proc/self/status) and bind within them,
        or let the scheduler bind (srun --cpu-bind=cores); for Slurm's error, unset the
        SLURM_CPU_BIND* variables inherited from the outer job before the nested srun/sbatch.

    References:
        - https://man7.org/linux/man-pages/man2/sched_setaffinity.2.html (EINVAL: no CPU present and permitted by the cpuset)
        - https://man7.org/linux/man-pages/man7/cpuset.7.html (a task's allowed CPUs)
        - https://github.com/util-linux/util-linux/blob/master/schedutils/taskset.c
        - https://github.com/numactl/numactl/blob/master/libnuma.c (numa_parse_cpustring: "cpu argument %s is out of range")
        - https://slurm.schedmd.com/srun.html#OPT_cpu-bind (SLURM_CPU_BIND, --cpu-bind=none)
        - https://github.com/util-linux/util-linux/issues/1701 (a CPU beyond the machine's count: EINVAL by design)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    line = s.get("line") if isinstance(s.get("line"), int) else 0
    allowed = f.get("affinity.allowed_cpus")
    allowed_note = (f"; this process may use CPUs {format_cpulist(allowed)} (Cpus_allowed_list)"
                    if isinstance(allowed, list) and allowed else "")
    if s.get("id") == _SLURM:
        cpus = _mask_cpus(str(s.get("allowed")))
        yield Hit(message=f"line {line}: \"{told_text(s)}\": the --cpu-bind mask names CPUs outside the step's allocation "
                          f"({'CPUs ' + format_cpulist(cpus) if cpus else 'the mask the line names'}); slurmd refuses to launch: "
                          "usually a SLURM_CPU_BIND inherited from the "
                          "job the srun or sbatch was started in",
                  fix=_SLURM_FIX, evidence=told_evidence(s), severity="error")
        return
    asked, online = _asked(f, line), _online(f)
    if asked and online is not None and min(asked) >= online:
        yield Hit(message=f"line {line}: \"{told_text(s)}\": taskset asked for CPU {format_cpulist(asked)} on a machine with "
                          f"{online} online CPUs (0-{online - 1}): sched_setaffinity refuses a list with no CPU that exists, "
                          "and drops absent CPUs from a list that holds one; nothing is wrong with the node",
                  fix=f"taskset -c 0-{online - 1} COMMAND   # CPU numbers start at 0: name CPUs that exist",
                  evidence=told_evidence(s), severity="info")
        return
    tool = {"affinity:libnuma-cpu-out-of-range": "numactl", "affinity:hwloc-set-cpubind-einval": "hwloc-bind",
            "threads:libgomp-no-usable-places": "libgomp (OMP_PLACES)"}.get(str(s.get("id")), "taskset")
    what = (f"CPU {format_cpulist(asked)} is" if asked else "the CPUs asked for are")
    yield Hit(message=f"line {line}: \"{told_text(s)}\": {tool}: {what} not among the CPUs this process may run on "
                      f"(outside its cpuset or the job's allocation, isolated, or offline){allowed_note}",
              fix=_FIX, evidence=told_evidence(s), severity="error" if s.get("id") in _STATES else "warning")
