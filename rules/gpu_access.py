"""A healthy GPU this process cannot reach: device nodes the user may not open (GPU023), and a
container that sees the GPU's device nodes but not the driver's libraries (GPU024)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, stated, told_evidence, told_text
from hpcdoctor.rules.container_access import container_avc_on_nvidia
from hpcdoctor.rules._where import APPTAINER_VARS, KUBERNETES_VAR

# What says the user may not open an NVIDIA node, by itself (knowledge/messages/devices.toml, nvml.toml):
# the open refused with EACCES, and a node only root may open.
_OPEN_DENIED = "devices:nvidia-device-open-denied"
_NVML_DENIED = "nvml:NVML_ERROR_NO_PERMISSION"
_LISTED = "devices:nvidia-device-not-world-accessible"
_MODE_OPTION = "devices:nvidia-device-file-mode-option"
# What says it only beside a failure of the user's own: a node restricted to a group is the normal
# set-up of many sites (openSUSE's video group) until a user outside it says they cannot use it.
_FAILED_FOR_USER = ("prose:nvidia-devices-inaccessible-said", "prose:gpu-works-only-as-root")
# The same open refused with EPERM: a device cgroup (a Slurm job without that GPU, a container not given it).
_NOT_PERMITTED = "devices:nvidia-device-open-not-permitted"

_GROUP_FIX = ("ls -l /dev/nvidia*   # the nodes' group and mode (the driver's default: crw-rw-rw- root root)\n"
              "id -nG   # this user's groups: the nodes' group must be among them\n"
              "sudo usermod -a -G {group} \"$USER\"   # administrators; then log out and in again (a session keeps its old groups)\n"
              "# administrators, for every user: 'options nvidia NVreg_DeviceFileMode=0666' in /etc/modprobe.d, or "
              "NVreg_DeviceFileGID=<gid> with 0660 and the users in that group; then reload the module or reboot")
_SLURM_LINE = ("\nsrun --gpus=1 ls -l /dev/nvidia*   # inside a job that asked for a GPU: sites that hand the GPUs to "
               "the job's user do it there")
_SELINUX_FIX = ("getenforce   # Enforcing: SELinux labels keep the container from the driver's device nodes\n"
                "docker run --security-opt=label=disable --gpus all IMAGE nvidia-smi   # the NVIDIA Container Toolkit's "
                "troubleshooting page's remedy (or a policy that labels the nodes for containers)")


def _nvml_init(s: dict) -> bool:
    """NVML's Insufficient Permissions from its initialisation (nvidia-smi's "Failed to initialize
    NVML", nvidia-container-cli's "nvml error"): opening the driver's nodes. From any later call
    it is an operation reserved to root (setting clocks, persistence mode), not the nodes."""
    text = str(s.get("text", "")).lower()
    return "initialize nvml" in text or "nvml error" in text


def _denied_told(f: FactView) -> Optional[dict]:
    said = {}
    for s in catalogued(f, "gpu-device-permission-denied"):
        if s.get("id", "").startswith("prose:") and not stated(s):
            continue
        said.setdefault(s.get("id"), s)
    if _OPEN_DENIED in said:
        return said[_OPEN_DENIED]
    if _NVML_DENIED in said and _nvml_init(said[_NVML_DENIED]):
        return said[_NVML_DENIED]
    listed = said.get(_LISTED)
    if listed is not None and listed.get("mode") == "rw-------" and listed.get("owner") == "root":
        return listed
    if any(s.get("id") == _NOT_PERMITTED for s in f.get("ticket.symptoms") or []):
        return None  # the cgroup refused the open: a GPU not allocated, not the node's mode
    told = listed or said.get(_MODE_OPTION)
    if told is not None and any(k in said for k in _FAILED_FOR_USER):
        return told
    return None


@rule("GPU023", "gpu-device-permission-denied", "error", "the GPU's device nodes may not be opened by this user", impact=9,
      also={"warning": "amd-smi listing the AMD GPU's DRM nodes it was refused: it goes on with what needs no node",
            "info": "ROCm 7.0's amd-smi stopping on its group check where rocminfo works for the user"})
def gpu_device_permission_denied(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node: NVIDIA device nodes (/dev/nvidiactl, /dev/nvidia-uvm, /dev/nvidiaN) that this
        process may not read and write (os.access for its user and groups), and their mode and group.
        In a pasted ticket: an open of /dev/nvidia* refused with EACCES ("Permission denied",
        strace's "= -1 EACCES"), nvidia-smi's "Failed to initialize NVML: Insufficient Permissions",
        an ls -l of a node only root may open (crw------- root root), or a node restricted to a group
        (crw-rw----, NVreg_DeviceFileMode=0660) beside the user saying they cannot access the devices
        or that it works only as root. For AMD GPUs, amd-smi's own report (ROCm 7) that the user is
        outside video and render, which own the GPU's DRM nodes (/dev/dri/card*, renderD*): an error
        where ROCm 7.0's CLI stopped on it, a warning where it lists the nodes refused and goes on
        (what needs a node, VRAM use, is not read), and an info where the user says rocminfo works
        for them (the compute nodes open; ROCm 7.0's amd-smi counts only the groups, ROCm/amdsmi#125).
        /dev/kfd is rocm-kfd-permission-denied's. Not an open refused with EPERM ("Operation not permitted"):
        that is a device cgroup (a Slurm job without the GPU, slurm-job-without-gpus), not the node.

    Why it matters:
        CUDA and NVML open these nodes before anything else; without access CUDA reports no device
        and nvidia-smi fails, although the driver and GPU are fine (root can use them). The NVIDIA
        driver creates them 0666 root:root unless NVreg_DeviceFileMode/GID say otherwise; sites and
        distributions that narrow them to a group (video) leave users outside it without a GPU.

    How to fix:
        Put the user in the nodes' group (id -nG, ls -l /dev/nvidia*) and log in again, or have the
        administrators set the driver's NVreg_DeviceFileMode/NVreg_DeviceFileGID; on a cluster, run
        inside a job that asked the scheduler for the GPU. In a container under SELinux, NVML's
        Insufficient Permissions is the labels (--security-opt=label=disable).

    References:
        - https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv-reg.h (DeviceFileUID/GID/Mode)
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html (NVML_ERROR_NO_PERMISSION)
        - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/troubleshooting.html (NVML: Insufficient Permissions and SELinux)
        - https://github.com/openSUSE/nvidia-driver-G06/issues/52 (nodes 0660 for the video group)
        - https://github.com/ROCm/amdsmi/issues/125 (ROCm 7.0's amd-smi group check where udev rules open the nodes)
    """
    denied = f.get("devices.nvidia_denied")
    if denied and f.get("devices.euid") != 0:
        groups = set(f.get("devices.groups") or [])
        first = denied[0]
        group = first.get("group") or f"gid {first.get('gid')}"
        member = first.get("gid") in groups
        shown = ", ".join(f"{n.get('path')} ({n.get('mode')} {n.get('uid')}:{n.get('group') or n.get('gid')})"
                          for n in denied[:4])
        why = ("this user is in that group, so the mode itself shuts the group out" if member else
               f"this user is not in the group {group}")
        fix = _GROUP_FIX.format(group=first.get("group") or "<group>")
        if f.get("scheduler.kind") == "slurm":
            fix += _SLURM_LINE
        yield Hit(message=f"{len(denied)} NVIDIA device node(s) this user may not read and write: {shown}; {why}",
                  fix=fix, evidence={"devices.nvidia_denied": denied[:4], "devices.groups": sorted(groups)})
        return
    s = _denied_told(f)
    if s is None:
        yield from _amd_smi_denied(f)
        return
    text = str(s.get("text", "")).lower()
    if s.get("id") == _NVML_DENIED and ("nvidia-container-cli" in text or "nvml error" in text):
        yield Hit(message=f"NVML may not open the driver's device nodes from the container runtime (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): on an SELinux host, the container's labels",
                  fix=_SELINUX_FIX, evidence=told_evidence(s))
        return
    said = {t.get("id") for t in f.get("ticket.symptoms") or []}
    if container_avc_on_nvidia(f) is not None:
        return  # a container's AVC denial of an nvidia node: the label, selinux-denies-container-access, not the mode
    if s.get("id") == _NVML_DENIED and {"prose:privileged-works-said", "prose:selinux-said"} <= said:
        return  # works with --privileged on an SELinux host: the label, selinux-denies-container-access, not the mode
    group = s.get("group") if s.get("id") == _LISTED else None
    what = {"rw-------": "only root may open the NVIDIA device nodes (mode 0600)"}.get(str(s.get("mode")))
    if s.get("id") == _NVML_DENIED:
        what = ("NVML could not initialise for this user (Insufficient Permissions): it may not open the driver's "
                "device nodes, whose mode and group shut the user out")
    yield Hit(message=f"{what or 'this user may not open the NVIDIA device nodes (their mode and group shut them out)'} "
                      f"(line {s.get('line')}: \"{told_text(s)}\")",
              fix=_GROUP_FIX.format(group=group or "video"), evidence=told_evidence(s))


# amd-smi's own words (knowledge/messages/amd_smi.toml): ROCm 7.0's CLI stopping on its group check,
# and the nodes a later CLI lists as refused before it goes on with what needs none.
_AMD_SMI_STOPPED = "amd_smi:cli-required-groups-missing-fatal"
_AMD_SMI_LISTED = ("amd_smi:cli-device-node-denied", "amd_smi:cli-render-nodes-denied")
_AMD_GROUP_FIX = ("ls -l /dev/dri/   # the GPU's card* and renderD* nodes: their group (video, render) and mode\n"
                  "id -nG   # this user's groups\n"
                  "sudo usermod -a -G render,video \"$USER\"   # administrators (ROCm's install prerequisites); then log "
                  "out and in again")


# The user's word that rocminfo works: /dev/kfd and the render nodes open for them (prose.toml).
_ROCMINFO_WORKS = "prose:rocminfo-works-said"
_AMD_SMI_OWN_CHECK_FIX = ("ls -l /dev/kfd /dev/dri/   # the nodes' groups and modes: udev rules may open them to every user\n"
                          "sudo usermod -a -G render,video \"$USER\"   # administrators: satisfies ROCm 7.0's amd-smi check "
                          "(then log out and in); or the amd-smi of ROCm 7.1.1 or later, which checks the nodes instead (ROCm/amdsmi#184)")


def _amd_smi_denied(f: FactView) -> Iterator[Hit]:
    said = {s.get("id"): s for s in catalogued(f, "gpu-device-permission-denied")}
    stopped = said.get(_AMD_SMI_STOPPED)
    works = first_symptom(f, _ROCMINFO_WORKS)
    if stopped is not None and works is not None and stated(works):
        yield Hit(message=f"amd-smi stopped on its own check that this user is in {stopped.get('groups') or 'video and render'} "
                          f"(line {stopped.get('line')}: \"{told_text(stopped)}\"), but rocminfo works for this user (line "
                          f"{works.get('line')}): the compute nodes open, through udev rules (ROCm's alternative to the "
                          "groups) or otherwise; ROCm 7.0's amd-smi counts only the groups (ROCm/amdsmi#125), ROCm 7.1.1's "
                          "checks the nodes themselves",
                  severity="info", fix=_AMD_SMI_OWN_CHECK_FIX, evidence=told_evidence(stopped))
        return
    if stopped is not None:
        yield Hit(message=f"amd-smi stopped: this user is not in {stopped.get('groups') or 'video and render'}, the groups "
                          f"that own the AMD GPU's DRM nodes (line {stopped.get('line')}: \"{told_text(stopped)}\")",
                  fix=_AMD_GROUP_FIX, evidence=told_evidence(stopped))
        return
    s = next((said[k] for k in _AMD_SMI_LISTED if k in said), None)
    if s is None:
        return
    node = (f"{s.get('path')} (owner {s.get('owner')}, group {s.get('group')})" if s.get("path")
            else f"{s.get('count')} render node(s)")
    yield Hit(message=f"amd-smi may not open the AMD GPU's DRM nodes: {node} refused this user (line {s.get('line')}: "
                      f"\"{told_text(s)}\"); it reads what needs no node, not VRAM use",
              severity="warning", fix=_AMD_GROUP_FIX, evidence=told_evidence(s))


# --- container-nvidia-libs-not-bound ---------------------------------------------------------------

# What says the driver's libraries are missing where a program ran (nvidia-smi, NVML, the loader, and
# Apptainer's --nv finding none in the linker cache).
_NO_LIBRARY = ("nvidia_smi:nvml-library-not-found", "nvml:NVML_ERROR_LIBRARY_NOT_FOUND", "libraries:libcuda",
               "libraries:libnvidia-ml", "container:apptainer-no-nv-libraries")
# Printed inside an Apptainer/Singularity container (its prompt).
_PROMPT = ("container:apptainer-prompt", "container:singularity-prompt")
# A container started without asking for the GPU (faq_containers.toml, prose.toml).
_NOT_ASKED = ("faq_containers:apptainer-run-without-nv-said", "faq_containers:singularity-run-without-nv-said",
              "prose:docker-run-without-gpus", "prose:docker-run-devices-only")
# Device nodes passed by hand: CUDA's static runtime then finds no libcuda and answers error 35, "driver
# version is insufficient", although the host's driver is fine (NVIDIA/nvidia-docker#24).
_DEVICES_ONLY = "prose:docker-run-devices-only"
# The user's sentence that the program runs in docker (prose.toml docker-said), read only beside the
# messages that name the driver's own libraries: nvidia-smi's and NVML's "library not found", and the
# loader's refusal of libcuda.so.1 (which only the driver installs, never an image).
_DOCKER_SAID = "prose:docker-said"
_NO_LIBRARY_TOLD = ("nvidia_smi:nvml-library-not-found", "nvml:NVML_ERROR_LIBRARY_NOT_FOUND", "libraries:libnvidia-ml",
                    "libraries:libcuda")
_NO_DRIVER_SEEN = ("cuda:cudaErrorInsufficientDriver", "cuda_driver:CUDA_ERROR_NO_DEVICE")
# A pyxis/enroot task (srun --container-image): enroot's NVIDIA hook (conf/hooks/98-nvidia.sh) injects the
# driver only where NVIDIA_VISIBLE_DEVICES is set, and libcuda only where NVIDIA_DRIVER_CAPABILITIES names
# compute; an image not built on NVIDIA's sets neither, so torch there finds no driver at all.
_PYXIS = "enroot:pyxis-container-option"
_NO_DRIVER_IN_ENROOT = ("torch:no-nvidia-driver", "cuda:cudaErrorInsufficientDriver") + _NO_LIBRARY_TOLD
_ENROOT_FIX = ("export NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility   # before srun: "
               "pyxis passes them to enroot, whose NVIDIA hook then injects the driver (all: as NVIDIA's images "
               "set it; Slurm's device cgroup, where the site constrains devices, keeps the job to its own GPUs)\n"
               "# or in the image's Dockerfile, as NVIDIA's CUDA images do: ENV NVIDIA_VISIBLE_DEVICES=all and "
               "ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility")

_APPTAINER_FIX = ("apptainer exec --nv IMAGE nvidia-smi   # --nv binds the host's driver libraries (nvliblist.conf) "
                  "and the /dev/nvidia* nodes into the container")
_NESTED_FIX = ("echo \"$LD_LIBRARY_PATH\"; ls /.singularity.d/libs   # the outer container's driver libraries: here, "
               "not in the linker cache (ldconfig -p) that --nv reads\n"
               "apptainer exec --nv IMAGE nvidia-smi   # start the inner container from the host, or bind that "
               "directory into it (--bind /.singularity.d/libs:/.singularity.d/libs)")
_DOCKER_FIX = ("docker run --gpus all IMAGE nvidia-smi   # the NVIDIA Container Toolkit mounts libcuda and NVML only "
               "for a run that asks (--gpus, --runtime=nvidia, or CDI --device nvidia.com/gpu=all)")
# Files mounted but their SONAME links missing (an image whose ld.so.cache is stale): ldconfig makes
# the .so.1 links from the files' SONAMEs and refreshes the cache.
_DOCKER_LINKS_FIX = ("ls -l /usr/lib/x86_64-linux-gnu/libnvidia-ml.so* /usr/lib/x86_64-linux-gnu/libcuda.so*   # inside the "
                     "container: the driver's files the toolkit mounted, and their .so.1 links\n"
                     "ldconfig && ldconfig -p | grep -E 'libnvidia-ml|libcuda'   # as root in the container: makes the "
                     "missing .so.1 links and refreshes the cache, where the files are there")
# The Toolkit's two ways in (its docs): CDI devices, which podman reads, generated by
# nvidia-ctk; docker's --gpus through the NVIDIA runtime nvidia-ctk registers with the daemon.
_OCI_FIX = ("nvidia-ctk cdi list   # the CDI devices generated on this host; none: sudo nvidia-ctk cdi generate "
            "--output=/etc/cdi/nvidia.yaml\n"
            "podman run --rm --device nvidia.com/gpu=all ubuntu nvidia-smi -L   # podman: ask for the GPUs as CDI devices\n"
            "docker run --rm --gpus all ubuntu nvidia-smi -L   # docker: --gpus works once the NVIDIA runtime is "
            "registered (sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker)")
_K8S_FIX = ("kubectl get pod POD -o jsonpath='{.spec.containers[*].resources.limits}'   # no nvidia.com/gpu: the pod "
            "asked for no GPU\n# resources: {limits: {nvidia.com/gpu: 1}} in the pod spec (and the nvidia "
            "runtimeClassName where the node's default runtime is not NVIDIA's)")


def _in_container(f: FactView) -> Optional[str]:
    env = f.get("env.vars") or {}
    if any(env.get(v) for v in APPTAINER_VARS):
        return "apptainer"
    if env.get(KUBERNETES_VAR):
        return "kubernetes"
    if f.get("scheduler.in_container") is True:
        return "docker"
    return None


def _libs_not_bound_live(f: FactView) -> Iterator[Hit]:
    place = _in_container(f)
    libs = f.get("devices.driver_libraries")
    nodes = f.get("devices.nvidia_gpu_nodes") or 0
    if place is None or not isinstance(libs, dict) or not libs or any(libs.values()):
        return
    gpus = f.get("scheduler.gpus_on_node") or 0
    if nodes <= 0 and gpus <= 0:
        return
    seen = f"{nodes} NVIDIA GPU device node(s)" if nodes else f"a GPU allocation ({gpus} GPU(s))"
    fix = {"apptainer": _APPTAINER_FIX, "kubernetes": _K8S_FIX}.get(place, _DOCKER_FIX)
    yield Hit(message=f"this container sees {seen} but the dynamic loader finds none of the driver's libraries "
                      f"({', '.join(sorted(libs))}): the container was started without the GPU option that binds them",
              fix=fix, evidence={"devices.nvidia_gpu_nodes": nodes, "devices.driver_libraries": libs,
                                 "scheduler.gpus_on_node": gpus or None})


@rule("GPU024", "container-nvidia-libs-not-bound", "error",
      "a container sees the GPU but not the NVIDIA driver's libraries: started without --nv / --gpus", impact=9,
      also={"warning": "NVML's library not found where the paste only says it ran in docker, not how it was started"})
def container_nvidia_libs_not_bound(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node: inside Apptainer/Singularity, docker/podman or a Kubernetes pod, a GPU's
        device node (/dev/nvidiaN; nvidiactl alone is no GPU) or a GPU allocation, while the
        dynamic loader finds neither libcuda.so.1 nor libnvidia-ml.so.1 (LD_LIBRARY_PATH,
        /etc/ld.so.cache, the system directories). In a pasted
        ticket: nvidia-smi's "couldn't find libnvidia-ml.so library", NVML's "NVML Shared Library
        Not Found", the loader's "libcuda.so.1: cannot open shared object file" or Apptainer's
        "Could not find any nv libraries on this host!", printed at an Apptainer/Singularity prompt
        or after a container started without --nv (or docker run without --gpus); the OCI runtime's
        "executable file `nvidia-smi` not found in $PATH" (crun; runc's 'exec: "nvidia-smi": ...'),
        which only a container given nothing of the driver says. As a warning,
        nvidia-smi's or NVML's library-not-found where the user only says it ran in docker (how
        the container was started is not shown): an image carries no driver libraries. torch's
        "Found no NVIDIA driver" (or CUDA's insufficient driver) in a job that asked Slurm for
        GPUs and started its tasks through pyxis (srun --container-image): enroot injects the
        driver only where NVIDIA_VISIBLE_DEVICES is set.

    Why it matters:
        The driver's user-space libraries belong to the host and must match its kernel module; an
        image does not carry them. Apptainer mounts the host's /dev by default, so the GPU's nodes
        are there, but it binds the libraries only with --nv; docker mounts both only for --gpus.
        CUDA then reports no driver although the host's GPU is fine. From inside a container, a
        nested apptainer --nv finds no libraries either: the outer container's are on
        LD_LIBRARY_PATH (/.singularity.d/libs), not in the linker cache --nv reads.

    How to fix:
        Start the container with the GPU option: apptainer exec --nv, docker run --gpus all (the
        NVIDIA Container Toolkit must be set up: nvidia-container-toolkit-missing), a pod's
        nvidia.com/gpu limit. Start nested containers from the host.

    References:
        - https://github.com/apptainer/apptainer-userdocs/blob/94391c5b60ebfa8f0567fc5fd62cbe5ded9cc5ef/gpu.rst
        - https://github.com/apptainer/apptainer/blob/917d66577963ca297352a22e13c86f1748ddc645/internal/pkg/runtime/launch/launcher_linux.go (addGPUBinds)
        - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
        - https://github.com/apptainer/apptainer/issues/1205 (nvidia-smi in a nested container)
        - https://github.com/NVIDIA/enroot/blob/8ea147d337da60cb1c557140f3a85cdf0d620968/conf/hooks/98-nvidia.sh
    """
    found = False
    for hit in _libs_not_bound_live(f):
        found = True
        yield hit
    if found:
        return
    told = f.get("ticket.symptoms") or []
    missing = next((s for s in told if s.get("id") in _NO_LIBRARY), None)
    if missing is None and any(s.get("id") == _DEVICES_ONLY for s in told):
        missing = next((s for s in told if s.get("id") in _NO_DRIVER_SEEN), None)
    if missing is None:
        oci = first_symptom(f, "container:oci-runtime-nvidia-smi-not-found")
        if oci is not None:
            yield Hit(message=f"the container runtime found no nvidia-smi in the container (line {oci.get('line')}: "
                              f"\"{told_text(oci)[:140]}\"): no image carries it, the NVIDIA Container Toolkit injects it "
                              "with the driver's libraries, so nothing of the driver was injected: the GPU request did not "
                              "reach the toolkit",
                      fix=_OCI_FIX, evidence=told_evidence(oci))
            return
        yield from _enroot_without_driver(f)
        return
    prompt = next((s for s in told if s.get("id") in _PROMPT), None)
    asked_not = next((s for s in told if s.get("id") in _NOT_ASKED), None)
    if prompt is not None:
        nested = any(s.get("id") == "container:apptainer-no-nv-libraries" for s in told)
        said = ("nested inside another container, where the outer one's driver libraries are not in the linker "
                "cache that --nv reads" if nested else "started without --nv (or nested inside another container)")
        yield Hit(message=f"inside an Apptainer/Singularity container (line {prompt.get('line')}) the NVIDIA driver's "
                          f"libraries are missing (line {missing.get('line')}: \"{told_text(missing)}\"): the container "
                          f"was {said}",
                  fix=_APPTAINER_FIX + "\n" + _NESTED_FIX.splitlines()[0], evidence=told_evidence(missing))
        return
    if missing.get("id") == "container:apptainer-no-nv-libraries":
        return  # Apptainer's own warning prints only under --nv: on a host whose linker cache has no driver
    if asked_not is None:
        # only the user's word that it ran in docker (prose:docker-said): the library is missing inside a
        # container, which carries no driver of its own; how it was started is not shown, so a warning
        said = next((s for s in told if s.get("id") == _DOCKER_SAID and stated(s)), None)
        if said is not None and missing.get("id") in _NO_LIBRARY_TOLD:
            library = "libcuda.so.1" if missing.get("id") == "libraries:libcuda" else "NVML library"
            yield Hit(message=f"the NVIDIA driver's {library} is missing where the command ran (line {missing.get('line')}: "
                              f"\"{told_text(missing)}\"), and the paste says it ran in a docker container (line "
                              f"{said.get('line')}: \"{told_text(said)[:100]}\"): an image carries no driver libraries; the NVIDIA "
                              "Container Toolkit binds the host's when the container is started with --gpus (the usual "
                              "cause), or its links (libnvidia-ml.so.1, libcuda.so.1) are missing in the image",
                      fix=_DOCKER_FIX + "\n" + _DOCKER_LINKS_FIX, evidence=told_evidence(missing), severity="warning")
        return
    docker = asked_not.get("id") in ("prose:docker-run-without-gpus", _DEVICES_ONLY)
    yield Hit(message=f"the container was started without asking for the GPU (line {asked_not.get('line')}: "
                      f"\"{told_text(asked_not)[:100]}\"), and the NVIDIA driver's libraries are missing in it "
                      f"(line {missing.get('line')}: \"{told_text(missing)}\")",
              fix=_DOCKER_FIX if docker else _APPTAINER_FIX, evidence=told_evidence(missing))


def _enroot_without_driver(f: FactView) -> Iterator[Hit]:
    """torch's "Found no NVIDIA driver" (or CUDA's insufficient driver) in a task pyxis started in an
    enroot container, in a job that asked Slurm for GPUs: the host has the driver, the container was
    not given it."""
    pyxis = first_symptom(f, _PYXIS)
    none = first_symptom(f, *_NO_DRIVER_IN_ENROOT)
    asked = first_symptom(f, "prose:slurm-gpus-requested")
    if pyxis is None or none is None or asked is None:
        return
    yield Hit(message=f"the job asked Slurm for GPUs (line {asked.get('line')}) and started its tasks in an enroot "
                      f"container through pyxis (line {pyxis.get('line')}: --container-{pyxis.get('option')}), where "
                      f"no NVIDIA driver was found (line {none.get('line')}: \"{told_text(none)[:120]}\"): enroot's "
                      "NVIDIA hook injects the driver only when NVIDIA_VISIBLE_DEVICES is set (and libcuda only when "
                      "NVIDIA_DRIVER_CAPABILITIES names compute), which an image not built on NVIDIA's does not set",
              fix=_ENROOT_FIX, evidence=told_evidence(none))


def libs_not_bound_in_container(f: FactView) -> bool:
    """Whether container-nvidia-libs-not-bound answers the missing driver libraries (the container's
    run, not the host's driver): gpu-driver-unusable leaves them to it."""
    return any(True for _ in container_nvidia_libs_not_bound(f))
