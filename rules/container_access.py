"""Containers the user may not start or use for reasons of access on the node, not of the image:
the docker CLI refused the daemon's socket (knowledge/messages/docker_client.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

DOCKER_SOCKET = "docker-socket-permission-denied"
_SOCKET_FIX = ("id -nG   # the groups of this login: docker must be among them\n"
               "ls -l /var/run/docker.sock   # owner root, group docker, srw-rw----\n"
               "sudo usermod -aG docker \"$USER\"   # where you administer the machine; then log out and in (or: newgrp docker)\n"
               "dockerd-rootless-setuptool.sh install   # or rootless Docker: the daemon runs as you (docs.docker.com/engine/security/rootless/)\n"
               "apptainer exec docker://IMAGE COMMAND   # on a cluster node, where the docker group is root in effect and not "
               "given: Apptainer (or podman) runs the same image unprivileged")


@rule("ENV054", DOCKER_SOCKET, "error", "the docker CLI may not open the Docker daemon's socket", impact=5)
def docker_socket_permission_denied(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the docker CLI's "Got permission denied while trying to connect to the
        Docker daemon socket at unix:///var/run/docker.sock" (moby's client/request.go), its later
        lowercase form, and "permission denied while trying to connect to the Docker API at ...".

    Why it matters:
        The daemon's socket belongs to root and the docker group; a user outside the group cannot
        run any docker command. Membership in the docker group is root on that machine in effect,
        so cluster nodes seldom grant it: there Apptainer or podman run the same images.

    How to fix:
        On a machine you administer: add the user to the docker group and log in again, or set up
        rootless Docker. On a cluster: run the image with Apptainer (apptainer exec docker://...)
        or podman, as the site offers.

    References:
        - https://github.com/moby/moby/blob/04472304f61784403033f6241a520bd41e5d723b/client/request.go
        - https://docs.docker.com/engine/install/linux-postinstall/ (the docker group)
        - https://docs.docker.com/engine/security/#docker-daemon-attack-surface (the group grants root)
        - https://docs.docker.com/engine/security/rootless/
        - https://apptainer.org/docs/user/latest/docker_and_oci.html
    """
    told = catalogued(f, DOCKER_SOCKET)
    if not told:
        return
    s = told[0]
    yield Hit(message=f"the docker CLI may not open the daemon's socket {s.get('host') or ''} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): this user is not in the docker group, or joined it after this login began",
              fix=_SOCKET_FIX, evidence=told_evidence(s))
