"""What users write about GPU memory held by others, a build or process killed for host memory,
and work on a login node: gpu-memory-in-use, host-memory-oom-killed and login-node read the words
(knowledge/messages/prose.toml, faq_pytorch.toml) and a site's notice (login_policy.toml), on real
public pastes (tests/fixtures/pastes, SOURCES.md there), with near misses that must stay silent."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def _ids(facts):
    return {s["id"] for s in facts["facts"].get("ticket", {}).get("symptoms") or []}


@pytest.mark.parametrize("paste,said,line", [
    ("pai-3372-d-state-process-holds-gpu.txt", "already in use before the job started", 9),
    ("fastmri-238-oom-zombie-process-6gb.txt", "already in use before the job started", 4),
    ("devops-235-idle-containers-hold-gpus.txt", "idle work holds the GPUs", 5),
])
def test_memory_held_before_the_job_or_by_idle_work_in_words_is_info(paste, said, line):
    (hit,) = fired("gpu-memory-in-use", recorded_paste_facts(paste))
    assert hit.severity == "info" and said in hit.message and f"(line {line}:" in hit.message
    assert hit.fix.startswith("nvidia-smi --query-compute-apps=pid,used_memory --format=csv")


@pytest.mark.parametrize("paste,line", [
    ("xlm-40-other-gpus-keep-memory-leftover-processes.txt", 3),   # the end said before the memory
    ("bonito-54-cancelled-runs-keep-gpu-memory.txt", 2),            # failed or cancelled runs
])
def test_memory_kept_after_the_run_ended_is_the_faqs_leftover_subprocesses(paste, line):
    (hit,) = fired("gpu-memory-in-use", recorded_paste_facts(paste))
    assert hit.severity == "info" and "usual cause (PyTorch FAQ)" in hit.message and f"(line {line}:" in hit.message
    assert hit.fix.startswith("fuser -v /dev/nvidia*")


def test_a_model_too_big_for_its_card_is_not_memory_held_by_others():
    # A healthy control of set B: torch's out-of-memory on an 8 GB card, the model's own size.
    findings, _ = run_rule("gpu-memory-in-use", recorded_paste_facts("fastmri-252-oom-8gb-model-too-big-healthy.txt"))
    assert findings == []


@pytest.mark.parametrize("paste,line", [("flash-attention-382-build-exhausts-ram.txt", 4),
                                        ("flash-attention-1811-build-exhausts-ram-32gb.txt", 1)])
def test_a_build_that_takes_all_memory_in_words_is_max_jobs_at_info(paste, line):
    (hit,) = fired("host-memory-oom-killed", recorded_paste_facts(paste))
    assert hit.severity == "info" and "a source build takes all of the host's memory" in hit.message
    assert f"(line {line}:" in hit.message and "MAX_JOBS=" in hit.fix


def test_killed_in_words_alone_is_the_oom_killer_to_confirm_at_info():
    (hit,) = fired("host-memory-oom-killed", recorded_paste_facts("ai-composer-9-killed-too-little-memory.txt"))
    assert hit.severity == "info" and "nothing in the paste says by whom" in hit.message
    assert hit.fix.startswith("journalctl -k | grep -iE")


def test_exit_code_137_alone_is_sigkill_whose_sender_the_log_tells_at_info(tmp_path):
    (hit,) = fired("host-memory-oom-killed", recorded_paste_facts("ironfish-570-miner-exit-137-memory.txt"))
    assert hit.severity == "info" and "exit code 137 is SIGKILL" in hit.message and "journalctl -k" in hit.fix
    # the same status beside a line that names the sender (slurmstepd's time-limit line, its format filled in)
    timed = paste_facts(tmp_path, "slurmstepd: error: *** JOB 1234 ON node01 CANCELLED AT 2024-01-01T00:00:00 DUE TO "
                                  "TIME LIMIT ***\nexited with code 137\n")
    assert not fired("host-memory-oom-killed", timed)


@pytest.mark.parametrize("paste", ["canu-1214-pbs-walltime-exceeded.txt",              # PBS names the walltime
                                   "asgs-119-process-killed-on-tacc-login-node.txt"])  # the site names itself
def test_a_kill_whose_sender_is_named_is_not_host_memory(paste):
    facts = recorded_paste_facts(paste)
    findings, _ = run_rule("host-memory-oom-killed", facts)
    assert findings == []


def test_the_sites_login_node_notice_is_quoted_at_warning():
    facts = recorded_paste_facts("asgs-119-process-killed-on-tacc-login-node.txt")
    assert "login_policy:tacc-login-process-killed" in _ids(facts)
    (hit,) = fired("login-node", facts)
    assert hit.severity == "warning" and "(line 5:" in hit.message and "must run on the compute nodes" in hit.message
    assert hit.fix.startswith("salloc --gpus=1")


@pytest.mark.parametrize("paste,said", [
    ("aws-parallelcluster-5085-head-node-has-no-gpu.txt", "a head or login node, has no GPU"),
    ("mxnet-6787-libcuda-stub-only-not-on-gpu-server.txt", "only the CUDA toolkit's link-time stub"),
])
def test_a_node_without_gpus_in_words_is_login_node_at_info(paste, said):
    (hit,) = fired("login-node", recorded_paste_facts(paste))
    assert hit.severity == "info" and said in hit.message and hit.fix.startswith("salloc --gpus=1")


@pytest.mark.parametrize("paste", ["gymnasium-726-mujoco-egl-on-cpu-only-compute-nodes.txt",   # "works on the login nodes"
                                   "tailseeker-3-job-submission-refused-on-compute-node.txt"])  # "standing on a login node"
def test_a_login_node_named_for_another_reason_is_not_read(paste):
    findings, _ = run_rule("login-node", recorded_paste_facts(paste))
    assert findings == []

