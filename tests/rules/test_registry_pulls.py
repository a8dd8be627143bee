"""registry-pull-rate-limited (rules/registry_pulls.py) on public pastes of Docker Hub's 429 as
Apptainer, the kubelet and docker build print it (tests/fixtures/pastes, SOURCES.md there), and the
distribution error code's own words."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, words, fix", [
    ("shpc-registry-327-singularity-pull-docker-rate-limit.txt", "for unauthenticated pulls from this address",
     "apptainer registry login --username YOUR_DOCKERHUB_USER docker://docker.io"),
    ("pangeo-binder-194-k8s-image-pull-docker-rate-limit.txt", "(line 7:", "kubectl create secret docker-registry"),
    ("dandi-archive-3-buildkit-toomanyrequests.txt", "(line 4:", "docker login --username"),
])
def test_docker_hubs_refusal_is_read_and_the_fix_fits_the_puller(paste, words, fix):
    (f,) = fired("registry-pull-rate-limited", recorded_paste_facts(paste))
    assert f.severity == "error"
    assert f.message.startswith("Docker Hub refused the image pull: its pull rate limit was reached") and words in f.message
    assert "ratelimit-remaining" in f.fix and fix in f.fix


def test_another_registrys_429_code_is_read_as_the_same_limit():
    # distribution's errcode as Error() prints it: the code lower-cased, then its message
    text = "Error response from daemon: toomanyrequests: too many requests\n"
    assert [s["id"] for s in find_messages(text)] == ["registry:registry-too-many-requests"]
    (f,) = fired("registry-pull-rate-limited", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.message.startswith("the registry refused the image pull")


def test_silent_on_a_healthy_apptainer_paste_and_on_a_live_node():
    assert not fired("registry-pull-rate-limited", recorded_paste_facts("mspass-995-apptainer-bind-rw-syntax-healthy.txt"))
    assert not fired("registry-pull-rate-limited", facts("h100-kvm-1gpu"))
