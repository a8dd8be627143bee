"""A container image pull refused by the registry's rate limit (Docker Hub's 429 toomanyrequests),
read from the registry's own words as docker, dockerd, the kubelet and Apptainer/Singularity print
them (knowledge/messages/registry.toml). Nothing on the node shows the limit without spending a
pull, so the rule answers pastes only and gives the command that reads what is left."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "registry-pull-rate-limited"
# The docs' own way to read the limit and what is left, with a HEAD request that spends no pull.
_CHECK = ('TOKEN=$(curl -s "https://auth.docker.io/token?service=registry.docker.io&scope=repository:ratelimitpreview/test:pull" '
          '| jq -r .token) && curl -s --head -H "Authorization: Bearer $TOKEN" '
          'https://registry-1.docker.io/v2/ratelimitpreview/test/manifests/latest | grep -i ratelimit   '
          '# ratelimit-limit and ratelimit-remaining for this address, per 21600 s')
_FIX = {
    "apptainer": ("apptainer registry login --username YOUR_DOCKERHUB_USER docker://docker.io   # a Docker Hub access token as "
                  "password: pulls then count against your account, not the address the cluster shares\n"
                  "apptainer pull image.sif docker://IMAGE:TAG   # once, on a login node; the jobs then run image.sif "
                  "and pull nothing"),
    "kubernetes": ("kubectl create secret docker-registry dockerhub --docker-server=https://index.docker.io/v1/ "
                   "--docker-username=YOUR_DOCKERHUB_USER --docker-password=YOUR_ACCESS_TOKEN\n"
                   "# then name it in the pod spec: imagePullSecrets: [{name: dockerhub}] (or a registry mirror "
                   "the nodes pull through)"),
    "docker": ("docker login --username YOUR_DOCKERHUB_USER   # a Docker Hub access token as password: pulls then count "
               "against your account, not the address the node shares\n"
               "# pull once and reuse the image (docker save / a local registry mirror) instead of pulling in every job"),
}


def _puller(f: FactView, s: dict) -> str:
    """Who pulled, from the rest of the paste: Apptainer/Singularity's own lines, the kubelet's events."""
    ids = {str(t.get("id", "")) for t in f.get("ticket.symptoms") or []}
    text = str(s.get("text", "")).lower()
    if ids & {"container:apptainer-command", "container:singularity-command", "container:apptainer-prompt",
              "container:singularity-prompt"} or "singularity pull" in text or "apptainer pull" in text:
        return "apptainer"
    if "kubelet" in text or "imagepullbackoff" in text or "errimagepull" in text:
        return "kubernetes"
    return "docker"


@rule("ENV046", SYMBOL, "error", "the container registry refused the image pull: its pull rate limit was reached",
      impact=5)
def registry_pull_rate_limited(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Docker Hub's answer to a pull over its limit, "You have reached your pull
        rate limit. You may increase the limit by authenticating and upgrading:
        https://www.docker.com/increase-rate-limit" (and its "unauthenticated pull rate limit"
        form), or any registry's 429 with the distribution error code, "toomanyrequests: ...", as
        docker, dockerd's log, the kubelet's "Failed to pull image" events and Apptainer's or
        Singularity's docker:// pulls print them.

    Why it matters:
        Docker Hub counts unauthenticated pulls per IPv4 address (or IPv6 /64) over 6 hours. A
        cluster's nodes usually reach the internet through one NAT address, so every user's and
        every job's pulls share that one budget: jobs that pull an image at start fail for hours,
        whatever the image.

    How to fix:
        Authenticate the pulls (docker login; apptainer registry login --username USER
        docker://docker.io; a Kubernetes imagePullSecret) so they count against an account; pull
        once and reuse the image (a SIF built on a login node, a registry mirror) instead of pulling
        in every job; read the remaining budget with the HEAD request the Docker docs give.

    References:
        - https://docs.docker.com/docker-hub/usage/pulls/ (View pull rate and limit)
        - https://github.com/distribution/distribution/blob/main/registry/api/errcode/register.go (TOOMANYREQUESTS)
        - https://apptainer.org/docs/user/latest/docker_and_oci.html (registry login)
        - https://kubernetes.io/docs/tasks/configure-pod-container/pull-image-private-registry/
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    who = "Docker Hub" if any(t.get("id") == "registry:dockerhub-pull-rate-limit" for t in told) else "the registry"
    unauth = any(t.get("who") for t in told)
    yield Hit(message=f"{who} refused the image pull: its pull rate limit was reached"
                      f"{' for unauthenticated pulls from this address' if unauth else ''} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"); nodes behind one address share that limit",
              fix=f"{_CHECK}\n{_FIX[_puller(f, s)]}", evidence=told_evidence(s))
