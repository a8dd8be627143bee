"""Containers the user may not start or use for reasons of access on the node, not of the image:
the docker CLI refused the daemon's socket (knowledge/messages/docker_client.toml), and SELinux
denying a container the files bind-mounted into it (selinux.toml), and a container runtime the job
calls that is not on PATH (shell.toml)."""

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


SELINUX = "selinux-denies-container-access"
# The SELinux domains container-selinux gives a container's processes (container_t; svirt_lxc_net_t
# and svirt_sandbox_t are its older names, container_init_t systemd-in-container's).
_CONTAINER_DOMAINS = ("container_t", "container_init_t", "svirt_lxc_net_t", "svirt_sandbox_t")
_SELINUX_FIX = ("getenforce   # on the host: Enforcing means SELinux policy applies to the container\n"
                "sudo ausearch -m avc -ts recent   # the denials (or: sudo journalctl -t audit | grep 'avc:  denied')\n"
                "podman run -v \"$PWD:$PWD:Z\" ...   # a directory only this container uses: relabel it private (:Z); "
                ":z shares it between containers (docker run -v takes the same options)\n"
                "# never relabel /home, /usr or /var/run/docker.sock itself; for those run the container with "
                "--security-opt label=disable, which leaves SELinux on for everything else")


def _symptoms(f: FactView, sid: str) -> list:
    return [s for s in f.get("ticket.symptoms") or [] if s.get("id") == sid]


_SELINUX_GPU_FIX = ("getenforce   # on the host: Enforcing\n"
                    "sudo ausearch -m avc -ts recent | grep -i nvidia   # the denials of the container's label on the nvidia "
                    "device nodes\n"
                    "ls -Z /dev/nvidia*   # the nodes' SELinux labels on the host\n"
                    "docker run --security-opt label=disable --gpus all IMAGE nvidia-smi   # that container without label "
                    "confinement, not --privileged; administrators: a policy module that lets containers use the GPU "
                    "nodes (NVIDIA's for its container runtime) keeps confinement")


def container_avc_on_nvidia(f: FactView):
    """A container's AVC denial (selinux.toml avc-denied, a container domain) of an NVIDIA device
    node (a character device whose record names nvidia): the label, not the node's mode, refused it."""
    return next((s for s in _symptoms(f, "selinux:avc-denied") if s.get("stype") in _CONTAINER_DOMAINS
                 and s.get("tclass") == "chr_file" and "nvidia" in str(s.get("text", "")).lower()), None)


@rule("ENV055", SELINUX, "error", "SELinux denies a container the host files mounted into it", impact=5,
      also={"warning": "Permission denied inside a container on a host whose ls -l shows SELinux labels, no AVC pasted"})
def selinux_denies_container_access(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the kernel's AVC record denying a container's domain access ("avc:
        denied { read } for ... scontext=system_u:system_r:container_t:... tcontext=...", from
        /var/log/audit/audit.log or ausearch): an error. Without the record, as a warning: a
        "Permission denied" (EACCES) where the paste shows a container (docker/podman run -v
        HOST:CTR, or the user saying it ran inside a container) and ls -l's SELinux mark (the '.'
        after the mode) on the files.

    Why it matters:
        On SELinux hosts (Fedora, RHEL, CentOS and their kin) a container runs as container_t and
        may read only files labelled for containers (container_file_t). A host directory
        bind-mounted without relabelling keeps its label (user_home_t, var_run_t), and every
        access from inside is denied although the mode and owner allow it.

    How to fix:
        Relabel a directory that only containers use with the volume option :Z (private) or :z
        (shared); for system paths that must not be relabelled (home, /usr, the docker socket),
        run that container with --security-opt label=disable. Do not turn SELinux off.

    References:
        - https://github.com/torvalds/linux/blob/master/security/selinux/avc.c (the AVC record)
        - https://docs.docker.com/engine/storage/bind-mounts/#configure-the-selinux-label
        - https://github.com/containers/podman/blob/main/docs/source/markdown/options/volume.md (Labeling Volume Mounts)
        - https://www.gnu.org/software/coreutils/manual/html_node/What-information-is-listed.html (ls -l's '.')
    """
    denials = [s for s in _symptoms(f, "selinux:avc-denied") if s.get("stype") in _CONTAINER_DOMAINS]
    nvidia = container_avc_on_nvidia(f)
    if nvidia is not None:
        s = nvidia
        yield Hit(message=f"SELinux denied the container ({s.get('stype')}) {s.get('perms') or 'access'} on an NVIDIA "
                          f"device node labelled {s.get('ttype')} (line {s.get('line')}: \"{told_text(s)}\"): the container's "
                          "label may not open the driver's nodes with their host labels, so NVML and CUDA fail inside",
                  fix=_SELINUX_GPU_FIX, evidence=told_evidence(s))
        return
    if denials:
        s = denials[0]
        device = s.get("tclass") == "chr_file"
        yield Hit(message=f"SELinux denied the container ({s.get('stype')}) {s.get('perms') or 'access'} on a "
                          f"{s.get('tclass') or 'file'} labelled {s.get('ttype')} (line {s.get('line')}: \"{told_text(s)}\"): "
                          + ("a host device node passed into the container keeps its host label, which the container "
                             "policy does not allow (a newer container-selinux, or the boolean container_use_devices)"
                             if device else
                             "a bind-mounted host path keeps its host label unless the volume is relabelled"),
                  fix=_SELINUX_FIX, evidence=told_evidence(s))
        return
    nvml = _symptoms(f, "nvml:NVML_ERROR_NO_PERMISSION")
    in_container = (_symptoms(f, "prose:docker-run-without-gpus") + _symptoms(f, "docker_client:run-bind-mount")
                    + _symptoms(f, "faq_containers:in-container-said"))
    if nvml and in_container and _symptoms(f, "prose:privileged-works-said") and _symptoms(f, "prose:selinux-said"):
        # NVML refused in a container that runs with --privileged, where the user names SELinux: the
        # container's label (container_t) may not open the host's /dev/nvidia* (nvidia-docker#676's answer).
        s = nvml[0]
        yield Hit(message=f"NVML is refused in the container (line {s.get('line')}: \"{told_text(s)}\") which runs with "
                          "--privileged, on a host the user says runs SELinux: the container's SELinux label is not "
                          "allowed to open the NVIDIA device nodes; the privileged run drops that label",
                  severity="warning", fix=_SELINUX_GPU_FIX, evidence=told_evidence(s))
        return
    denied = _symptoms(f, "errno:EACCES")
    labelled = _symptoms(f, "selinux:ls-selinux-context-mark")
    container = _symptoms(f, "docker_client:run-bind-mount") + _symptoms(f, "faq_containers:in-container-said")
    if not (denied and labelled and container):
        return
    run = next((c for c in container if c.get("id") == "docker_client:run-bind-mount"), None)
    if run is not None and str(run.get("spec") or "").rstrip('"').rsplit(":", 1)[-1].lower() in ("z", "z,ro", "ro,z"):
        return   # already relabelled: the denial is something else
    s = denied[0]
    yield Hit(message=f"Permission denied inside a container (line {s.get('line')}: \"{told_text(s)}\") on a host whose "
                      f"ls -l marks files with an SELinux context (line {labelled[0].get('line')}): the usual cause "
                      "(docker's and podman's bind-mount docs) is SELinux denying container_t the host's labels; "
                      "the AVC record confirms it",
              severity="warning", fix=_SELINUX_FIX, evidence=told_evidence(s))


RUNTIME = "container-runtime-missing"
_RUNTIME_FIX = ("command -v apptainer singularity podman enroot docker   # which runtimes this node has on PATH\n"
                "module avail apptainer singularity podman 2>&1 | head   # a site that installs one as a module (then: module load apptainer)\n"
                "ls -l /usr/bin/apptainer /usr/local/bin/apptainer /etc/apptainer/apptainer.conf 2>&1   # a system-wide install\n"
                "# none: ask the administrators; Apptainer from conda-forge runs only where unprivileged user namespaces are "
                "allowed (no setuid starter), and it must be on PATH where the program runs it (the job's node, not the login node)")


@rule("ENV056", RUNTIME, "error", "a container runtime the job calls is not installed or not on PATH", impact=5)
def container_runtime_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the shell finding no container runtime ("apptainer: command not found",
        dash's "singularity: not found", zsh's "command not found: podman", tcsh's "Command not
        found.") and Python's subprocess failing to start one ("FileNotFoundError: [Errno 2] No
        such file or directory: 'apptainer'"), for apptainer, singularity, podman, docker,
        enroot, Charliecloud's ch-run, sarus, shifter and udocker.

    Why it matters:
        Pipelines (Nextflow, Snakemake, tools that wrap their steps in containers) start the
        runtime by name on the node where the step runs. A runtime installed only on the login
        node, only as a module not loaded in the job, or into a conda environment the step does not
        activate, is not there, and the step fails before any container starts.

    How to fix:
        See which runtimes the node has (command -v, module avail); load the site's module in
        the job script; where none is installed, ask the administrators (Apptainer's setuid
        install needs root; the conda-forge package needs unprivileged user namespaces).

    References:
        - https://www.gnu.org/software/bash/manual/bash.html#Command-Search-and-Execution
        - https://docs.python.org/3/library/subprocess.html#exceptions (FileNotFoundError when the program is not found)
        - https://apptainer.org/docs/admin/latest/installation.html (setuid and unprivileged installs, conda-forge)
        - https://lmod.readthedocs.io/en/latest/010_user.html (module avail, module load)
    """
    told = catalogued(f, RUNTIME)
    if not told:
        return
    s = told[0]
    name = s.get("command") or s.get("zsh") or "the container runtime"
    yield Hit(message=f"{name} is not on PATH where it was called (line {s.get('line')}: \"{told_text(s)}\"): not installed "
                      "on this node, or a module or environment that provides it was not loaded there",
              fix=_RUNTIME_FIX, evidence=told_evidence(s))
