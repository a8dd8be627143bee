"""host-memory-oom-killed (MEM006) read from the user-space memory monitors that kill before the
kernel does (knowledge/messages/memory_monitors.toml): Ray's memory monitor (the task's
OutOfMemoryError and the raylet's summary), Dask's nanny and systemd-oomd, each in the wordings its
releases print. Each case is a verbatim public paste (tests/fixtures/pastes/SOURCES.md); each near
miss is a real paste where the same emitter says something that is not a kill for memory."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_paste_facts

OOM = "host-memory-oom-killed"

KILLED = [
    ("flingbot-11-ray-task-killed-node-low-memory.txt", "Ray's memory monitor", "ray logs raylet.out"),
    ("plantf-28-raylet-workers-killed-oom.txt", "Ray's memory monitor", "ray logs raylet.out"),
    ("jetstream-336-dask-nanny-memory-budget.txt", "Dask's nanny", "distributed.worker.memory"),
    ("systemd-23606-oomd-killed-scope-memory-pressure.txt", "systemd-oomd", "oomctl"),
    ("systemd-42321-oomd-marked-for-killing.txt", "systemd-oomd", "journalctl -u systemd-oomd"),
    ("earlyoom-321-sigterm-cellxgene-server.txt", "earlyoom", "journalctl -u earlyoom"),
    ("kubefate-64-pod-evicted-node-low-memory.txt", "the kubelet evicted the pod", "MemoryPressure"),
    ("openshift-76967-evicted-larger-consumption.txt", "the kubelet evicted the pod", "requests.memory"),
]


@pytest.mark.parametrize("paste,who,fix", KILLED, ids=[p for p, _w, _f in KILLED])
def test_a_memory_monitors_kill_is_host_memory(paste, who, fix):
    (f,) = fired(OOM, recorded_paste_facts(paste))
    assert f.severity == "warning"
    assert f.message.startswith(who) and "memory" in f.message
    assert fix in f.fix


def test_the_line_quoted_is_the_kill():
    (f,) = fired(OOM, recorded_paste_facts("systemd-42321-oomd-marked-for-killing.txt"))
    assert "line 7" in f.message and "Marked /system.slice/systemd-journald.service" in f.message


def test_a_dask_budget_configured_to_zero_is_not_memory_used_up():
    # terminate: 0 kills every worker at once, whatever it uses
    assert not run_rule(OOM, told_paste_facts("coffea-casa-409-dask-terminate-zero-budget.txt"))[0]


@pytest.mark.parametrize("paste", ["og-usa-108-dask-worker-pausing-healthy.txt", "systemd-35270-oomctl-dump-healthy.txt",
                                   # earlyoom's start-up lines ("sending SIGTERM when mem <= ..."): its limits, no kill
                                   "earlyoom-269-no-kill-startup-healthy.txt",
                                   # the kubelet's eviction for a full node disk, not memory
                                   "hush-house-8-evicted-ephemeral-storage.txt"])
def test_a_monitor_watching_without_killing_is_silent(paste):
    assert not run_rule(OOM, told_paste_facts(paste))[0]


def test_rays_hedged_list_of_causes_stays_a_hint():
    # "(1) The process is killed by SIGKILL by OOM killer ... (2) ray stop --force ... (3) ... SIGSEGV"
    findings = run_rule(OOM, recorded_paste_facts("modin-5659-ray-worker-died-possible-causes.txt"))[0]
    assert all(f.severity == "info" for f in findings)


# --- docker inspect's State (container_oom.toml) ---------------------------------------------------

def test_docker_inspect_recording_an_oom_kill_is_the_containers_limit():
    (f,) = fired(OOM, recorded_paste_facts("moby-15621-inspect-oomkilled-true.txt"))
    assert f.severity == "warning" and "killed by the kernel's OOM killer for its memory limit" in f.message
    assert "{{.State.OOMKilled}}" in f.fix and "--filter exited=137" in f.fix


def test_exit_137_with_oomkilled_false_is_not_a_memory_kill():
    findings = run_rule(OOM, told_paste_facts("docker-cli-2665-inspect-exit-137-not-oom.txt"))[0]
    assert all(f.severity == "info" for f in findings)
