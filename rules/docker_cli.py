"""The docker CLI refusing the GPU option itself (knowledge/messages/docker_client.toml): a CLI older
than Docker 19.03 has no --gpus, whatever the daemon's release; a second, older docker binary first on
PATH (a distribution's docker.io, a snap) is the usual way a node gets one beside a new daemon."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_symptom, told_evidence, told_text

SYMBOL = "docker-client-too-old-for-gpus"

_FIX = ("docker version --format '{{.Client.Version}} (client), {{.Server.Version}} (daemon)'   # a client older than "
        "19.03 has no --gpus, whatever the daemon's release\n"
        "which -a docker   # a second, older docker earlier on PATH (a distribution's docker.io, a snap) is the one "
        "that runs\n"
        "sudo apt-get install docker-ce-cli   # Docker's own CLI, from the repository the daemon came from "
        "(dnf install docker-ce-cli on RHEL); then remove the older one which -a listed first")


@rule("ENV143", SYMBOL, "error", "the docker CLI is older than Docker 19.03 and has no --gpus option", impact=6)
def docker_client_too_old_for_gpus(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the docker CLI refusing the GPU option as a flag it does not have:
        "unknown flag: --gpus" followed by its "See 'docker run --help'." (or after "docker: ").
        Where the paste shows `docker version`, the client's release is named.

    Why it matters:
        --gpus came with Docker 19.03 (API 1.40): a CLI built before has no such option and stops
        before the daemon is asked anything, so installing the NVIDIA Container Toolkit or
        upgrading the daemon changes nothing while the old CLI is the one that runs. A CLI that
        has the flag and a daemon older than 19.03 give another message ("requires API version
        1.40"), read as a line only.

    How to fix:
        Check the client's release beside the daemon's; find which docker binary runs (an older
        one earlier on PATH); install Docker's own CLI (docker-ce-cli) from the repository the
        daemon came from, and remove the older one.

    References:
        - https://github.com/docker/cli/blob/master/cli/command/container/opts.go (the gpus flag, version annotation 1.40)
        - https://docs.docker.com/reference/api/engine/ (API 1.40: Docker Engine 19.03)
        - https://github.com/NVIDIA/nvidia-docker/issues/1199 (client 17.12 beside daemon 19.03.6: update the client)
    """
    s = first_symptom(f, "docker_client:unknown-flag-gpus")
    if s is None:
        return
    client = first_symptom(f, "docker_client:version-client")
    version = client.get("version") if client else None
    shown = f"; docker version shows the client at {version} (line {client.get('line')})" if version else ""
    yield Hit(message=f"the docker CLI does not know --gpus (line {s.get('line')}: \"{told_text(s)}\"){shown}: the "
                      "option came with Docker 19.03, so this client is older, whatever the daemon's release",
              fix=_FIX, evidence={**told_evidence(s), "docker.client_version": version})
