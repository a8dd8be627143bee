"""Containers refused for access on the node: the docker CLI refused the daemon's socket
(moby client/request.go's wordings), replayed from public pastes (tests/fixtures/pastes, SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste, line", [
    ("roboticsacademy-2317-docker-socket-permission-denied.txt", 5),   # later CLIs: lowercase
    ("zhufeng-ls-study-docker-got-permission-denied.txt", 1),         # moby client/request.go: "Got permission denied"
])
def test_the_docker_clis_socket_refusal_is_the_docker_group(paste, line):
    (f,) = fired("docker-socket-permission-denied", recorded_paste_facts(paste))
    assert f.severity == "error" and f"line {line}" in f.message and "unix:///var/run/docker.sock" in f.message
    assert "sudo usermod -aG docker" in f.fix and "apptainer exec docker://" in f.fix
    assert "chmod 666" not in f.fix


@pytest.mark.parametrize("paste", ["docker-library-250-dockerd-level-error.txt", "dandi-archive-3-buildkit-toomanyrequests.txt"])
def test_other_docker_failures_are_not_the_socket(paste):
    assert not fired("docker-socket-permission-denied", recorded_paste_facts(paste))
