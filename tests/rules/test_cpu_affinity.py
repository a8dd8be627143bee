"""cpu-affinity-outside-cpuset on real pastes (set U, tests/fixtures/pastes/SOURCES.md) and the tools'
own output recorded on the development VM: taskset refused inside a cpuset (a warning), Slurm's and
numactl's comparisons with the allowed CPUs (errors), and a CPU number beyond the machine's count,
which is the user's and stays an info (set U's healthy control)."""

from __future__ import annotations

from pathlib import Path

from rulekit import facts, fired, paste_facts, told_facts, told_paste_facts
from hpcdoctor.triage.messages import find_messages

SET_U = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_u"


def test_taskset_refused_inside_a_cpuset_is_a_warning(tmp_path):
    (f,) = fired("cpu-affinity-outside-cpuset", paste_facts(tmp_path, (SET_U / "util-linux-413-affinity-outside-cpuset.txt").read_text()))
    assert f.severity == "warning" and "CPU 1 is not among the CPUs this process may run on" in f.message
    assert "grep Cpus_allowed_list /proc/self/status" in f.fix


def test_another_thread_taskset_after_a_cpuset_moved_the_host():
    (f,) = fired("cpu-affinity-outside-cpuset", told_paste_facts("vfio-isolate-5-taskset-after-cpuset-isolation.txt"))
    assert f.severity == "warning" and "taskset" in f.message


def test_the_live_node_names_its_allowed_cpus():
    # the recorded node's own Cpus_allowed (affinity.allowed_cpus) beside util-linux 2.38.1's refusal on the development VM
    symptoms = find_messages("taskset: failed to set pid 28986's affinity: Invalid argument\n")
    node = facts("h100-kvm-1gpu", **{"ticket.symptoms": symptoms})
    allowed = node["facts"]["affinity"]["allowed_cpus"]
    assert isinstance(allowed, list) and allowed
    (f,) = fired("cpu-affinity-outside-cpuset", node)
    from hpcdoctor.parse.cpulist import format_cpulist
    assert f"this process may use CPUs {format_cpulist(allowed)} (Cpus_allowed_list)" in f.message


def test_a_cpu_beyond_the_machine_is_only_an_info(tmp_path):
    text = (SET_U / "util-linux-1701-cpu-index-beyond-vm-cpus-healthy.txt").read_text()
    (f,) = fired("cpu-affinity-outside-cpuset", paste_facts(tmp_path, text))
    assert f.severity == "info" and "CPU 2 on a machine with 2 online CPUs" in f.message and "taskset -c 0-1" in f.fix


def test_slurm_mask_outside_the_step_is_decoded():
    # Slurm task/affinity's format, as a Fred Hutch user's notebook quotes srun (affinity.toml's example)
    (f,) = fired("cpu-affinity-outside-cpuset", told_facts(
        "srun: error: CPU binding outside of job step allocation, allocated CPUs are: 0x200000.\n"))
    assert f.severity == "error" and "CPUs 21" in f.message and "unset SLURM_CPU_BIND" in f.fix


def test_hwloc_bind_refusal_recorded_on_the_vm():
    (f,) = fired("cpu-affinity-outside-cpuset", told_facts(
        "hwloc_set_cpubind 0x00000010 (flags 0x0) failed (errno 22 Invalid argument)\n"))
    assert f.severity == "warning" and "hwloc-bind" in f.message


def test_silent_on_taskset_reading_an_affinity():
    # util-linux 2.38.1's taskset -p on the development VM: a listing, no refusal
    assert not fired("cpu-affinity-outside-cpuset", told_facts("pid 711's current affinity list: 0,1\n"))
