"""host-memory-oom-killed read from what container runtimes and Kubernetes say of a container killed
for its memory limit (knowledge/messages/container_oom.toml), and from a user naming the OOM killer
(prose.toml), on real public pastes (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, quoted", [
    ("trainer-1661-runc-init-oom-killed.txt", "runc-init-oom-killed"),
    ("ecs-agent-3021-runc-init-oom-killed.txt", "runc-init-oom-killed"),
    ("kubeflow-chart-45-pod-oomkilled.txt", "training-operator-8569f97489-zkxbt"),
    ("hmcts-flux-28772-kubectl-pod-oomkilled.txt", "tax-tribunals-application-base-74464f6b98-2kj6g"),
    ("operator-sdk-samples-156-describe-oomkilled.txt", "Reason:       OOMKilled"),
])
def test_a_container_killed_for_its_limit_is_a_warning_with_the_limit_to_raise(paste, quoted):
    (f,) = fired("host-memory-oom-killed", recorded_paste_facts(paste))
    assert f.severity == "warning" and quoted in f.message and "memory limit" in f.message
    assert "resources.limits.memory" in f.fix and "kubectl get pods -A" in f.fix


@pytest.mark.parametrize("paste, quoted", [
    ("cusignal-341-oom-killer-said.txt", "Linux OOM killer reaps cuSignal process"),
    ("systemd-6966-which-process-oom-killer.txt", "was killed by Linux OOM killer"),
])
def test_the_user_naming_the_oom_killer_is_quoted_back_at_info(paste, quoted):
    (f,) = fired("host-memory-oom-killed", recorded_paste_facts(paste))
    assert f.severity == "info" and quoted in f.message and "journalctl -k" in f.fix


def test_the_word_oomkilled_outside_a_pod_row_or_a_reason_is_not_read():
    # a feature's description: no READY column before it, no "Reason:" field
    text = (PASTES / "kubectl-oomd-1-oomkilled-feature-healthy.txt").read_text()
    assert "OOMKilled" in text
    assert [s["id"] for s in find_messages(text) if s["id"].startswith("container_oom:")] == []


def test_silent_on_advice_that_names_the_oom_killer():
    # "If processes are killed by the oom killer, dmesg ... should contain": advice, not a report
    findings, _ = run_rule("host-memory-oom-killed", recorded_paste_facts("netdata-17013-if-killed-by-oom-killer-healthy.txt"))
    assert findings == []


def test_the_kernels_own_line_still_wins_over_the_users_words():
    # shoc#38 (tests/fixtures/tickets_blind_n): the kernel's old wording is quoted, at warning
    (f,) = fired("host-memory-oom-killed", recorded_paste_facts("../tickets_blind_n/shoc-38-jetson-tk1-oom-killer.txt"))
    assert f.severity == "warning" and "Kill process 2700 (DeviceMemory)" in f.message
