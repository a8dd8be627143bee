"""The batch-scheduler rules read through Flux's words (knowledge/messages/flux.toml): the job-exec
timeout exception for slurm-time-limit, the schedulers' "unsatisfiable" alloc refusals and the
limit-job-size plugin for slurm-request-exceeds-node, each answered with Flux's own commands."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste", [
    "flux-sched-805-job-eventlog-timeout-exception.txt",        # the eventlog's JSON event
    "flux-core-6713-eventlog-timeout-after-duration-update.txt",  # flux job eventlog -HF
])
def test_fluxs_timeout_exception_is_the_time_limit_with_fluxs_fix(paste):
    (f,) = fired("slurm-time-limit", recorded_paste_facts(paste))
    assert f.message.startswith("Flux stopped the job") and "timeout" in f.message
    assert "flux jobs --filter=timeout" in f.fix and "sacct" not in f.fix and "#SBATCH" not in f.fix


@pytest.mark.parametrize("paste, said", [
    ("flux-core-6437-unsatisfiable-request-two-nodes.txt", "unsatisfiable request"),   # flux-core's schedulers
    ("flux-sched-602-alloc-denied-unsatisfiable.txt", 'type="unsatisfiable"'),         # Fluxion
    ("flux-core-7201-nnodes-exceeds-policy-limit.txt", "requested nnodes exceeds policy limit of 4"),  # limit-job-size
])
def test_fluxs_refusals_of_a_request_too_large_fire_with_fluxs_fix(paste, said):
    (f,) = fired("slurm-request-exceeds-node", recorded_paste_facts(paste))
    assert f.message.startswith("Flux refuses the job") and said in f.message
    assert "flux resource list" in f.fix and "sinfo" not in f.fix


def test_fluxions_match_error_is_read_but_is_not_a_request_too_large():
    text = (PASTES / "flux-sched-1372-alloc-denied-match-error.txt").read_text(encoding="utf-8")
    assert "flux:fluxion-alloc-denied-match-error" in {s["id"] for s in find_messages(text)}
    facts = recorded_paste_facts("flux-sched-1372-alloc-denied-match-error.txt")
    assert not fired("slurm-request-exceeds-node", facts)
    assert not fired("slurm-time-limit", facts)


@pytest.mark.parametrize("paste", [
    "flux-core-6437-unsatisfiable-request-two-nodes.txt",   # a refusal, not a job that ran out of time
    "flux-sched-1372-alloc-denied-match-error.txt",
])
def test_silent_on_flux_pastes_without_a_timeout(paste):
    assert not fired("slurm-time-limit", recorded_paste_facts(paste))


@pytest.mark.parametrize("text, symbol, key", [
    # limit-duration.c and limit-job-size.c's format strings (flux-core 4a5e79f), values filled in
    ("requested duration (2d) exceeds policy limit of 1d for queue pdebug\n", "slurm-time-request-exceeds-limit",
     "flux:limit-duration"),
    ("requested duration exceeds policy limit of 1h\n", "slurm-time-request-exceeds-limit", "flux:limit-duration"),
    ("requested ngpus (8) exceeds policy limit of 4 for queue pbatch\n", "slurm-gpu-request-rejected",
     "flux:limit-job-size-ngpus-over"),
    ("requested ncores (512) exceeds policy limit of 256\n", "slurm-request-exceeds-node", "flux:limit-job-size-over"),
])
def test_fluxs_policy_limits_fire_their_rule_with_fluxs_words(text, symbol, key):
    assert key in {s["id"] for s in find_messages(text)}
    (f,) = fired(symbol, told_facts(text))
    assert f.message.startswith("Flux refuse") and "flux queue list" in f.fix


@pytest.mark.parametrize("text", [
    # the same words in other programs (a resource manager of an application; conda's solver)
    "this.logger.info('Resource allocation expired', {\n",
    "UnsatisfiableError: unsatisfiable request for package foo\n",
    # a job below a queue's minimum size is refused for another reason
    "requested nnodes (1) is under policy limit of 2 for queue pbatch\n",
])
def test_the_same_words_elsewhere_stay_silent(text):
    facts = told_facts(text)
    for symbol in ("slurm-time-limit", "slurm-request-exceeds-node", "slurm-time-request-exceeds-limit"):
        assert not fired(symbol, facts)
