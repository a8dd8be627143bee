"""A running container whose device cgroup no longer admits the GPUs it was started with: NVML's
"Unknown Error" at initialisation, and opens of /dev/nvidia* refused with EPERM. The NVIDIA
Container Toolkit's troubleshooting page documents the cause (the hook sets up device access that
the low-level runtime does not know of, so any update of the container undoes it). And a container
that does not start because its image already holds files the toolkit mounts from the host, or
because the toolkit predates the cgroup v2 hierarchy the host mounts."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_catalogued, stated, told_evidence, told_text
from hpcdoctor.rules._where import SLURM_SAID, where

_NVML_UNKNOWN = "nvml:NVML_ERROR_UNKNOWN"
_NOT_PERMITTED = "devices:nvidia-device-open-not-permitted"
_LOST_SAID = "faq_containers:container-lost-gpu-said"
# What says the paste comes from a container (knowledge/messages/container.toml is the NVIDIA
# Container Toolkit's own messages; faq_containers.toml what users say of containers).
_CONTAINER_FAMILIES = ("container:", "faq_containers:")
_CONTAINER_IDS = ("prose:docker-run-without-gpus",)

_FIX = ("# the container cannot regain the GPUs: delete it and start a new one, which gets them again\n"
        "kubectl delete pod POD   # Kubernetes (its controller starts a new pod); docker: docker rm -f CONTAINER, then docker run again\n"
        "sudo systemctl restart docker   # docker hosts, after adding \"exec-opts\": [\"native.cgroupdriver=cgroupfs\"] to "
        "/etc/docker/daemon.json, so that systemctl daemon-reload no longer updates containers\n"
        "# Kubernetes: the NVIDIA device plugin's Helm value compatWithCPUManager=true (explicit device nodes), or inject "
        "the GPUs with CDI (nvidia-ctk cdi generate); a CPU manager with policy static updates containers")


def _nvml_init_unknown(found: list) -> Optional[dict]:
    return next((s for s in found if s.get("id") == _NVML_UNKNOWN
                 and "initialize nvml" in str(s.get("text", "")).lower()), None)


def _in_container(f: FactView, found: list) -> bool:
    if where(f) in ("docker", "kubernetes"):
        return True
    return any(str(s.get("id", "")).startswith(_CONTAINER_FAMILIES) or s.get("id") in _CONTAINER_IDS for s in found)


@rule("GPU025", "container-gpu-device-cgroup-revoked", "error",
      "a running container lost access to its GPUs (device cgroup updated)", impact=8,
      also={"warning": "no EPERM shown: NVML's Unknown Error in a container, NVIDIA's documented cause"})
def container_gpu_device_cgroup_revoked(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, NVML failing to initialise with "Unknown Error" (nvidia-smi's "Failed
        to initialize NVML: Unknown Error") where the paste also shows an open of /dev/nvidiactl or
        /dev/nvidiaN refused with EPERM (strace), or shows the run is in a container (the NVIDIA
        Container Toolkit's messages, a docker run, the user saying the container lost its GPUs,
        or the live environment: docker, podman, Kubernetes). A warning where only the container
        says so; an error where the EPERM shows the device cgroup refusing.

    Why it matters:
        The NVIDIA Container Runtime Hook (docker --gpus, the runtime in legacy mode) gives the
        container access to the GPU device nodes behind the low-level runtime's back, so any
        update of the container's cgroup takes that access away: changing its CPU or memory
        limits (Kubernetes' CPU manager with policy static does so), and on hosts where systemd
        manages the cgroups, a plain systemctl daemon-reload. The GPUs and the driver are
        healthy; nvidia-smi works on the host.

    How to fix:
        Delete the container and start a new one (a new pod, docker rm and run). To keep it from
        recurring: docker's cgroupfs cgroup driver (exec-opts native.cgroupdriver=cgroupfs),
        the device nodes requested explicitly (--device, or the device plugin's
        compatWithCPUManager=true), or CDI injection.

    References:
        - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html (Containers losing access to GPUs with error: "Failed to initialize NVML: Unknown Error")
        - https://github.com/NVIDIA/cloud-native-docs/blob/28cf0979a486dd93fb24752eca28f4461cc475ed/container-toolkit/troubleshooting.md
        - https://github.com/NVIDIA/nvidia-docker/issues/966 (cpu-manager-policy=static and NVML Unknown Error)
    """
    found = f.get("ticket.symptoms") or []
    nvml = _nvml_init_unknown(found)
    refused = next((s for s in found if s.get("id") == _NOT_PERMITTED), None)
    if nvml is None:
        return
    # a Slurm job refused a GPU it did not ask for gets the same EPERM: that is slurm-job-without-gpus
    if refused is not None and not any(s.get("id") in SLURM_SAID for s in found):
        yield Hit(message=f"NVML cannot initialise (line {nvml.get('line')}: \"{told_text(nvml)}\") because the "
                          f"container's device cgroup refuses the GPU's device node (line {refused.get('line')}: "
                          f"\"{told_text(refused)}\"): an update of the container took away the access the NVIDIA "
                          "hook gave it; the GPUs and driver are not at fault",
                  fix=_FIX, evidence={**told_evidence(nvml), "refused.line": refused.get("line")})
        return
    lost = next((s for s in found if s.get("id") == _LOST_SAID and stated(s)), None)
    if lost is not None or _in_container(f, found):
        yield Hit(message=f"NVML cannot initialise in a container (line {nvml.get('line')}: \"{told_text(nvml)}\"): "
                          "NVIDIA documents this as a running container that lost its GPUs when its cgroup was "
                          "updated (systemctl daemon-reload, a changed CPU or memory limit)",
                  fix=_FIX, evidence=told_evidence(nvml), severity="warning")


# ----------------------------------------------------------------------------------------------
# GPU036 nvidia-container-toolkit-outdated
TOOLKIT_OLD = "nvidia-container-toolkit-outdated"
# Jetson's driver libraries live in /usr/lib/aarch64-linux-gnu(/tegra); there the toolkit mounts
# them in CSV mode (host-files-for-container.d/*.csv) and the L4T images of a release already hold them.
_JETSON = re.compile(r"/usr/lib/aarch64-linux-gnu/(?:tegra/)?[^/\s]{1,120}$")
_TOOLKIT_FIX = (
    "nvidia-container-cli --version; dpkg -l | grep -E 'nvidia-container|nvidia-l4t-core'   # the toolkit and, on Jetson, "
    "the host's L4T release\n"
    "sudo apt-get update && sudo apt-get install --only-upgrade nvidia-container-toolkit libnvidia-container-tools   "
    "# administrators: the current toolkit (Jetson: the JetPack repository's)\n"
    "docker run --rm --runtime nvidia IMAGE true   # then an image of the host's L4T release (nvcr.io/nvidia/l4t-*:rXX.Y), "
    "or one built without the driver's files (no nvidia-smi, libnvidia-*, libcuda in the image)")


@rule("GPU036", TOOLKIT_OLD, "warning", "the image already holds a file the NVIDIA container hook mounts from the host",
      impact=5, also={"info": "a driver file in an x86 image: the image carries what the toolkit mounts"})
def nvidia_container_toolkit_outdated(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log: nvidia-container-cli's "mount error: file creation failed: <path>: file
        exists" (the NVIDIA Container Toolkit's prestart hook, as docker wraps it). A warning where
        the path is a Jetson library directory (/usr/lib/aarch64-linux-gnu, its tegra/): the
        toolkit's CSV mode and an L4T image of another release; info elsewhere, where the image
        itself carries driver files (nvidia-smi, libnvidia-ml.so.1).

    Why it matters:
        The hook mounts the host driver's files into the container at start; where the image
        already has a file at one of those paths, the mount point cannot be made and the container
        does not start. On Jetson, toolkit releases before the current ones and L4T images of
        another release disagree on which libraries the image holds.

    How to fix:
        Upgrade the NVIDIA Container Toolkit (on Jetson, from the JetPack repository) and use an
        image of the host's L4T release; elsewhere build the image without the driver's files.

    References:
        - https://github.com/NVIDIA/libnvidia-container (src/utils.c file_create, src/cli/configure.c)
        - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html
        - https://github.com/NVIDIA/nvidia-container-toolkit/issues/295 (solved with the latest toolkit and L4T image)
        - https://github.com/NVIDIA/nvidia-docker/issues/825 (nvidia-smi should not be in the image)
    """
    told = catalogued(f, TOOLKIT_OLD)
    if not told:
        return
    s = told[0]
    path = str(s.get("path") or "")
    if _JETSON.search(path):
        yield Hit(message=f"the container did not start: the image already holds {path.rsplit('/', 1)[-1]}, a Jetson "
                          f"library the NVIDIA hook mounts from the host (line {s.get('line')}: \"{told_text(s)}\"); the "
                          "host's container toolkit and the image's L4T release disagree: upgrade the toolkit and use "
                          "an image of the host's L4T release", fix=_TOOLKIT_FIX, evidence=told_evidence(s))
    else:
        yield Hit(message=f"the image already holds {path.rsplit('/', 1)[-1] or 'a file'} that the NVIDIA hook mounts from "
                          f"the host (line {s.get('line')}: \"{told_text(s)}\"): an image with driver files, or a "
                          "volume or command-line mistake that put a file there", fix=_TOOLKIT_FIX,
                  evidence=told_evidence(s), severity="info")


# ----------------------------------------------------------------------------------------------
# GPU050 nvidia-container-cli-without-cgroup-v2
CGROUP_V2 = "nvidia-container-cli-without-cgroup-v2"


@rule("GPU050", CGROUP_V2, "error", "the NVIDIA container hook predates cgroup v2 and the host has only cgroup v2",
      impact=8)
def nvidia_container_cli_without_cgroup_v2(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, nvidia-container-cli's "container error: cgroup subsystem devices not
        found" (as docker wraps it: "error running hook: exit status 1, ... stderr:
        nvidia-container-cli: container error: cgroup subsystem devices not found: unknown").

    Why it matters:
        libnvidia-container looks for the cgroup v1 devices controller in /proc to give the
        container its GPUs; a host that mounts only the unified cgroup v2 hierarchy (the default
        of current distributions and of NixOS) has none, so no GPU container starts. Support for
        cgroup v2 came with libnvidia-container 1.8.0; the GPUs and the driver are fine.

    How to fix:
        Upgrade the NVIDIA Container Toolkit (libnvidia-container 1.8.0 or later). Where it
        cannot be upgraded, boot the host with the hybrid hierarchy
        (systemd.unified_cgroup_hierarchy=0), or set no-cgroups = true in the toolkit's
        config.toml and give the container the GPU device nodes with --device.

    References:
        - https://github.com/NVIDIA/libnvidia-container/blob/02c1d95f0777a758356126b60a9c7e0954028e0d/src/cgroup_legacy.c
        - https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/CHANGELOG.md (v1.8.0-rc.1: Add support for cgroupv2)
        - https://github.com/NVIDIA/nvidia-docker/issues/1447
        - https://github.com/NixOS/nixpkgs/issues/127146
    """
    s = first_catalogued(f, CGROUP_V2)
    if s is None:
        return
    yield Hit(message=f"the NVIDIA container hook found no cgroup v1 devices controller (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): the host mounts only cgroup v2 and its libnvidia-container is older than "
                      "1.8.0, the first with cgroup v2 support, so no GPU container starts; the GPUs and driver are fine",
              fix=("stat -fc %T /sys/fs/cgroup; nvidia-container-cli --version   # cgroup2fs and a version below 1.8.0: "
                   "the cause\n"
                   "sudo apt-get install --only-upgrade nvidia-container-toolkit libnvidia-container1 "
                   "libnvidia-container-tools   # administrators (dnf upgrade on RHEL): 1.8.0 or later; then restart docker\n"
                   "# where it cannot be upgraded: boot with systemd.unified_cgroup_hierarchy=0 (the hybrid hierarchy), or "
                   "set no-cgroups = true in /etc/nvidia-container-runtime/config.toml and pass --device /dev/nvidiactl "
                   "--device /dev/nvidia-uvm --device /dev/nvidia0 to docker run"),
              evidence=told_evidence(s))
