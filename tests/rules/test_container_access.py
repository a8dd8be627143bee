"""Containers refused for access on the node: the docker CLI refused the daemon's socket
(moby client/request.go's wordings), replayed from public pastes (tests/fixtures/pastes, SOURCES.md)."""

from __future__ import annotations

try:
    import tomllib
except ImportError:   # Python < 3.11
    import tomli as tomllib
from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts

ROOT = Path(__file__).resolve().parents[2]


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


@pytest.mark.parametrize("paste, line, marked", [
    ("podman-4306-selinux-bind-mount-denied.txt", 8, 17),
    ("moby-10761-selinux-docker-sock-mount-denied.txt", 8, 10),
])
def test_permission_denied_in_a_container_on_an_selinux_labelled_host_is_the_usual_cause(paste, line, marked):
    (f,) = fired("selinux-denies-container-access", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"line {line}" in f.message and f"(line {marked})" in f.message
    assert ":Z" in f.fix and "ausearch -m avc" in f.fix and "setenforce 0" not in f.fix


def test_without_selinux_labels_shown_a_denied_volume_is_not_called_selinux():
    # podman-11796: the same Permission denied, but nothing in the paste shows that the host runs SELinux
    assert not fired("selinux-denies-container-access", recorded_paste_facts("podman-11796-rootful-volume-permission-denied.txt"))


def test_an_avc_denial_of_a_container_domain_is_an_error(tmp_path):
    # the catalogue's own example: the kernel's avc.c format strings filled in
    entries = tomllib.loads((ROOT / "hpcdoctor/knowledge/messages/selinux.toml").read_text())["entry"]
    example = next(e["example"] for e in entries if e["key"] == "avc-denied")
    (f,) = fired("selinux-denies-container-access", paste_facts(tmp_path, example + "\n"))
    assert f.severity == "error" and "container_t" in f.message and "user_home_t" in f.message
    # the same record for a confined host daemon is not a container's
    assert not fired("selinux-denies-container-access",
                     paste_facts(tmp_path, example.replace("container_t", "httpd_t") + "\n"))


@pytest.mark.parametrize("paste, name, line", [
    ("pmat-23-python-apptainer-not-found.txt", "apptainer", 7),
    ("bash-5.2-apptainer-command-not-found.txt", "apptainer", 1),
    ("python-3.11-subprocess-singularity-not-found.txt", "singularity", None),
])
def test_a_container_runtime_not_on_path_is_named_with_where_to_find_one(paste, name, line):
    (f,) = fired("container-runtime-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and f.message.startswith(f"{name} is not on PATH")
    assert line is None or f"line {line}" in f.message
    assert "command -v apptainer" in f.fix and "module avail" in f.fix


def test_another_program_not_found_is_not_a_container_runtime():
    assert not fired("container-runtime-missing", recorded_paste_facts("bash-5.2-batch-script-conda-command-not-found.txt"))
