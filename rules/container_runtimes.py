"""HPC container runtimes refusing to run for reasons of the node's set-up, not of the image:
Apptainer's --fakeroot without any way to fake root, enroot's own directories not writable (pyxis's
srun --container-image), Apptainer's --nv leaving out a driver library its nvliblist.conf does not
list, and the NVIDIA runtime made the default on a node without a GPU. Read from the runtimes' own
messages (knowledge/messages/apptainer.toml, enroot.toml, container.toml) and, live, from what the
node shows (checks/containers.py)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import NO_GPU_ON_MACHINE, catalogued, first_symptom, said_no_gpu, told_evidence, told_text, version_of

_NVLIST = knowledge.load("containers")["nvliblist"]


def _ids(f: FactView) -> set:
    return {str(s.get("id", "")) for s in f.get("ticket.symptoms") or []}


# ----------------------------------------------------------------------------------------------
# ENV035 apptainer-fakeroot-unavailable
_FAKEROOT_WHY = {
    "apptainer:fakeroot-requires-subuid-userns-or-command": "none of Apptainer's three ways to fake root works for this "
                                                            "user: no /etc/subuid entry, no unprivileged user namespaces, "
                                                            "no fakeroot command",
    "apptainer:subuid-mapping-no-user-namespace": "the user's /etc/subuid mapping needs a user namespace, and the kernel gives none",
    "apptainer:deffile-build-unprivileged-needs-suid-or-userns": "an unprivileged build needs a setuid installation or "
                                                                  "unprivileged user namespaces, and this node has neither",
    "apptainer:encrypted-build-unprivileged-needs-userns": "an unprivileged encrypted build needs unprivileged user namespaces, "
                                                           "and none could be started",
    "apptainer:deffile-build-needs-fake-root": "no fake root could be started (no usable /etc/subuid mapping or root-mapped "
                                               "namespace, and no fakeroot command)",
    "apptainer:cannot-start-any-fake-root": "no fake root could be started (no usable /etc/subuid mapping or root-mapped "
                                            "namespace, and no fakeroot command)",
    "apptainer:could-not-use-fakeroot": "the fakeroot engine could not map the user's IDs",
    "apptainer:fakeroot-mapping-disabled": "the administrator disabled this user's /etc/subuid mapping",
    "apptainer:fakeroot-requires-allow-setuid": "--fakeroot through the setuid starter needs 'allow setuid = yes' in apptainer.conf",
    "apptainer:fakeroot-without-user-namespaces": "--fakeroot needs user namespaces, and there are none",
    "apptainer:id-map-helper-not-setuid": "newuidmap/newgidmap could not write the /etc/subuid mapping (not setuid root, "
                                          "or a mapping they refuse: their own line above says which)",
    "apptainer:id-map-write-failed": "the starter could not write the fake root's ID map (no /etc/subuid entry usable, or "
                                     "an unprivileged installation without setuid newuidmap/newgidmap)",
    "apptainer:singularity-build-must-be-root": "building from a recipe needs root or --fakeroot",
}
_FAKEROOT_FIX = (
    "grep -E \"^($(id -un)|$(id -u)):\" /etc/subuid; cat /proc/sys/user/max_user_namespaces; command -v fakeroot   "
    "# which of the three ways this node gives you (a line with a count of at least 65536; a number above 0; a path)\n"
    "sudo apptainer config fakeroot --add USER   # administrators: give the user an /etc/subuid and /etc/subgid range "
    "(or install the fakeroot package: dnf install fakeroot / apt install fakeroot)\n"
    "sudo sysctl -w user.max_user_namespaces=15000   # administrators, where user namespaces are off (Debian/Ubuntu "
    "also kernel.unprivileged_userns_clone=1)\n"
    "apptainer build --remote IMAGE.sif RECIPE.def   # or build where you are root (your own machine) and copy the .sif here")
# A build failure that a fake root would have avoided: creating device nodes or changing ownership
_REFUSED = re.compile(r"(?i)operation not permitted|permission denied|cannot change owner|chown")


def _fakeroot_told(f: FactView) -> Iterator[Hit]:
    told = catalogued(f, "apptainer-fakeroot-unavailable")
    if told:
        s = told[0]
        why = _FAKEROOT_WHY.get(str(s.get("id")), "Apptainer could not fake root for this user")
        detail = s.get("detail") or s.get("reason") or s.get("error")
        yield Hit(message=f"Apptainer refused the fake root it needs: {why}"
                          f"{f' ({detail})' if detail and detail not in why else ''} "
                          f"(line {s.get('line')}: \"{told_text(s)}\")",
                  fix=_FAKEROOT_FIX, evidence=told_evidence(s))
        return
    ids = _ids(f)
    no_cmd = first_symptom(f, "apptainer:fakeroot-command-not-found")
    failed = first_symptom(f, "apptainer:build-failed")
    if (no_cmd is None or failed is None or "apptainer:build-complete" in ids
            or not ({"apptainer:user-not-in-subuid", "apptainer:root-mapped-namespace-failed"} & ids)):
        return   # a build that went on after the fallback, or failed for another reason shown nowhere: not this rule's
    refused = bool(_REFUSED.search(str(failed.get("detail") or failed.get("text") or "")))
    yield Hit(message=f"the build ran without a fake root: no /etc/subuid entry and no fakeroot command "
                      f"(line {no_cmd.get('line')}: \"{told_text(no_cmd)}\"), so Apptainer used a root-mapped namespace "
                      f"alone, where creating device nodes or changing ownership is refused; the build then failed "
                      f"(line {failed.get('line')}: \"{told_text(failed)}\")",
              fix=_FAKEROOT_FIX, evidence={**told_evidence(failed), "fallback.line": no_cmd.get("line")},
              severity="error" if refused else "warning")


@rule("ENV035", "apptainer-fakeroot-unavailable", "error",
      "Apptainer cannot fake root for this user (--fakeroot, unprivileged builds)", impact=6,
      also={"warning": "a build failed after Apptainer fell back to a root-mapped namespace without the fakeroot command",
            "info": "live: no /etc/subuid entry and no fakeroot command"})
def apptainer_fakeroot_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Apptainer's (or Singularity's) refusal to fake root: "--fakeroot requires
        either being in /etc/subuid, unprivileged user namespaces, or the fakeroot command",
        "/etc/subuid mapping found but no user namespace available for fakeroot", "could not use
        fakeroot: ...", "'newgidmap' execution failed",
        Singularity's "You must be the root user, however you can use --remote or --fakeroot"
        and the rest of apptainer.toml's fakeroot entries; or a build that failed after Apptainer
        said "User not listed in /etc/subuid" and "fakeroot command not found" (an error where the
        failure is a refused device node or ownership change). Live, where apptainer is
        installed and user namespaces are on: no /etc/subuid range and no fakeroot command. The
        kernel's refusal of a user namespace ("Failed to create user namespace: ...", the sysctls
        that turn them off) is user-namespaces-disabled's, with or without --fakeroot.

    Why it matters:
        An unprivileged build and --fakeroot need one of: a range of at least 65536 IDs in
        /etc/subuid (with user namespaces and setuid newuidmap/newgidmap), a root-mapped
        unprivileged user namespace (which cannot create device nodes or change ownership, so
        package installs may fail) or the fakeroot command. Where none works the build cannot run;
        where only the root-mapped namespace works, package installs fail in %post.

    How to fix:
        Administrators: give the user a subordinate ID range (apptainer config fakeroot --add
        USER), install the fakeroot package, or enable unprivileged user namespaces. Users: build
        remotely or where they are root, and run the .sif here.

    References:
        - https://apptainer.org/docs/user/main/fakeroot.html
        - https://apptainer.org/docs/admin/main/user_namespace.html
        - https://github.com/apptainer/apptainer/blob/v1.5.3/internal/pkg/runtime/launch/launcher_linux.go
        - https://github.com/apptainer/apptainer/blob/v1.5.3/cmd/internal/cli/build_linux.go
        - https://github.com/apptainer/apptainer/issues/2190
    """
    told = list(_fakeroot_told(f))
    if told:
        yield told[0]
        return
    fr = f.get("containers.fakeroot") or {}
    if not fr.get("apptainer"):
        return
    userns = fr.get("max_user_namespaces")
    clone = fr.get("unprivileged_userns_clone")
    sub = fr.get("subuid") if isinstance(fr.get("subuid"), dict) else None
    off = (isinstance(userns, int) and userns == 0) or clone == 0
    evidence = {"containers.fakeroot.max_user_namespaces": userns, "containers.fakeroot.unprivileged_userns_clone": clone,
                "containers.fakeroot.fakeroot_command": fr.get("fakeroot_command"),
                "containers.fakeroot.subuid": sub}
    if off:
        return   # user-namespaces-disabled reports the sysctls: one finding for one fact
    if sub is not None and not sub.get("usable") and not fr.get("fakeroot_command"):
        yield Hit(message="this user has no usable /etc/subuid range and the node has no fakeroot command: Apptainer "
                          "builds here run in a root-mapped namespace alone, where package installs that create device "
                          "nodes or change ownership fail",
                  fix=_FAKEROOT_FIX, evidence=evidence, severity="info")


# ----------------------------------------------------------------------------------------------
# ENV036 enroot-runtime-path-not-writable
_ENROOT_FIX = (
    "grep -E '^ENROOT_(RUNTIME|CACHE|DATA)_PATH' /etc/enroot/enroot.conf; echo \"XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-unset, "
    "so enroot uses /run}\"   # on the compute node, in the job: the paths enroot resolves\n"
    "echo 'ENROOT_RUNTIME_PATH /tmp/enroot-runtime/user-$(id -u)' | sudo tee -a /etc/enroot/enroot.conf   # administrators: "
    "a per-user path every user can create (enroot evaluates $(id -u) for each user); the same for ENROOT_CACHE_PATH and "
    "ENROOT_DATA_PATH where they failed\n"
    "export ENROOT_RUNTIME_PATH=/tmp/enroot-runtime/user-$(id -u)   # enroot run by hand only: pyxis does not pass "
    "ENROOT_*_PATH from the job's environment")


def _why_path(path: str) -> str:
    if path == "/run/enroot":
        return "XDG_RUNTIME_DIR is unset in the job, so enroot's default ${XDG_RUNTIME_DIR}/enroot is /run/enroot, which only root may create"
    if re.fullmatch(r"/run/user/[0-9]{1,10}(?:/enroot)?", path):
        return "XDG_RUNTIME_DIR names /run/user/<uid>, which only a login session (systemd-logind) creates, and the job has none on this node"
    return "the path enroot resolved from enroot.conf or the environment is not writable for the job's user"


@rule("ENV036", "enroot-runtime-path-not-writable", "error",
      "enroot's runtime, cache or data directory cannot be created by the user", impact=7)
def enroot_runtime_path_not_writable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, enroot's own first step failing: "mkdir: cannot create directory
        '<path>': Permission denied" (or Read-only file system) in enroot's log, as pyxis prints it
        after "failed to import docker image" (srun --container-image) or after enroot's [INFO]
        lines. Live, where enroot is installed: ENROOT_RUNTIME_PATH, ENROOT_CACHE_PATH or
        ENROOT_DATA_PATH, resolved as enroot resolves them (environment, then enroot.conf, then
        ${XDG_RUNTIME_DIR}/enroot, ${XDG_CACHE_HOME}/enroot, ${XDG_DATA_HOME}/enroot with
        XDG_RUNTIME_DIR defaulting to /run), neither existing writable nor creatable by the user.

    Why it matters:
        enroot creates these three directories before anything else; where one cannot be
        created, every import, create and start fails, and with it every srun
        --container-image. Slurm jobs usually have no XDG_RUNTIME_DIR (no login session), so
        enroot's default runtime path becomes /run/enroot, which users cannot create; a
        /run/user/<uid> passed from the login node does not exist on the compute node.

    How to fix:
        The administrators set per-user paths in enroot.conf that every user can create (for
        example ENROOT_RUNTIME_PATH /tmp/enroot-runtime/user-$(id -u); enroot evaluates it per
        user). pyxis does not pass ENROOT_*_PATH from the job's environment, so users cannot
        change them for srun --container-image.

    References:
        - https://github.com/NVIDIA/enroot/blob/v4.1.2/doc/configuration.md
        - https://github.com/NVIDIA/enroot/blob/v4.1.2/enroot.in
        - https://github.com/NVIDIA/pyxis/blob/v0.24.0/pyxis_slurmstepd.c (enroot_deny_env)
        - https://github.com/NVIDIA/pyxis/issues/12
    """
    told = catalogued(f, "enroot-runtime-path-not-writable")
    if told:
        s = told[0]
        path = str(s.get("path") or "")
        yield Hit(message=f"enroot could not create its directory {path} ({s.get('error')}): {_why_path(path)}; "
                          f"every enroot command, and srun --container-image, fails there "
                          f"(line {s.get('line')}: \"{told_text(s)}\")",
                  fix=_ENROOT_FIX, evidence=told_evidence(s))
        return
    en = f.get("containers.enroot") or {}
    paths = en.get("paths") if isinstance(en.get("paths"), dict) else {}
    for var, p in paths.items():
        if not isinstance(p, dict) or p.get("writable") is not False:
            continue   # writable, or not known: only a refusal seen is a finding
        yield Hit(message=f"{var} resolves to {p.get('path')} ({p.get('origin')}: {p.get('value')}), and this user can "
                          f"neither write it nor create it in {p.get('nearest')}: {_why_path(str(p.get('path')))}",
                  fix=_ENROOT_FIX, evidence={f"containers.enroot.paths.{var}": p,
                                             "containers.enroot.conf_files": en.get("conf_files")})
        return


# ----------------------------------------------------------------------------------------------
# ENV037 apptainer-nvliblist-missing-lib
# What shows a driver library missing in the container, and the library it is.
_MISSING_LIB = {
    "libraries:cuda-gdb-no-debugger-backend": "libcudadebugger.so",
    "libraries:libcudadebugger": "libcudadebugger.so",
    "libraries:libnvidia-nvvm": "libnvidia-nvvm.so",
    "libraries:libnvidia-gpucomp": "libnvidia-gpucomp.so",
}
_APPTAINER_NV = ("apptainer:nv-command", "apptainer:nv-libs-dir")


def _release(name: str) -> Optional[str]:
    return next((a["release"] for a in _NVLIST["added"] if a["name"] == name), None)


def _nvlib_fix(lib: str, release: Optional[str]) -> str:
    soname = lib + ".1"
    return (f"ldconfig -p | grep {lib}   # on the host: the driver's library and its path\n"
            f"grep -n '^{lib}' /etc/apptainer/nvliblist.conf || echo '{lib}' | sudo tee -a /etc/apptainer/nvliblist.conf   "
            f"# administrators (source installs: /usr/local/etc/apptainer){f'; Apptainer {release} and later list it' if release else ''}\n"
            f"apptainer exec --nv --bind \"$(ldconfig -p | awk '/{soname} /{{print $NF; exit}}')\":/opt/hostlib/{soname} "
            f"--env LD_LIBRARY_PATH=/opt/hostlib:/.singularity.d/libs IMAGE COMMAND   # users, until then: bind it yourself")


@rule("ENV037", "apptainer-nvliblist-missing-lib", "error",
      "Apptainer's --nv does not bind a driver library its nvliblist.conf does not list", impact=5,
      also={"warning": "the installation's release is not shown, or lists the library: the site's nvliblist.conf may lack it"})
def apptainer_nvliblist_missing_lib(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, an Apptainer/Singularity run with --nv where a driver library that
        nvliblist.conf listed only from a later release is missing in the container: cuda-gdb's
        "Could not find CUDA Debugger back-end" (libcudadebugger.so.1, listed from 1.3.3), or the
        loader's "cannot open shared object file" for libnvidia-nvvm (1.2.5), libnvidia-gpucomp
        (1.2.4) or libcudadebugger; an error where the pasted version predates the release that
        lists it, a warning otherwise (the site's nvliblist.conf may be an old or edited copy that
        a package upgrade kept). Live, where apptainer is installed: a library of that list in
        the host's linker cache (ldconfig -p) that the installation's nvliblist.conf does not list.

    Why it matters:
        --nv binds into the container only the files nvliblist.conf names, found by name in the
        host's linker cache. A library a newer driver ships and the list lacks is not in the
        container however new the driver: cuda-gdb cannot debug, NVVM or Vulkan users fail, while
        everything on the host works.

    How to fix:
        Administrators add the library's name to nvliblist.conf (or upgrade Apptainer and merge
        the .rpmnew/.dpkg-dist copy). Users bind the host's library into the container and add
        its directory to LD_LIBRARY_PATH.

    References:
        - https://github.com/apptainer/apptainer/blob/v1.5.3/etc/nvliblist.conf
        - https://apptainer.org/docs/user/main/gpu.html
        - https://github.com/apptainer/apptainer/issues/2261
    """
    found = f.get("ticket.symptoms") or []
    nv = next((s for s in found if s.get("id") in _APPTAINER_NV), None)
    missing = next((s for s in found if s.get("id") in _MISSING_LIB), None)
    if nv is not None and missing is not None:
        lib = _MISSING_LIB[str(missing.get("id"))]
        release = _release(lib)
        ver = first_symptom(f, "apptainer:version")
        have = version_of(ver.get("version")) if ver is not None and str(ver.get("program", "")) == "apptainer" else None
        older = bool(have is not None and release and have < version_of(release))
        said = (f"Apptainer {ver.get('version')} (line {ver.get('line')}) predates {release}, the first release whose "
                f"nvliblist.conf lists {lib}" if older else
                f"Apptainer lists {lib} in nvliblist.conf only from {release}; an older installation, or an nvliblist.conf "
                f"kept from one, lacks it")
        yield Hit(message=f"{lib} is missing in the container run with --nv (line {missing.get('line')}: "
                          f"\"{told_text(missing)}\"; --nv at line {nv.get('line')}): --nv binds only the files "
                          f"nvliblist.conf lists, and {said}",
                  fix=_nvlib_fix(lib, release), evidence={**told_evidence(missing), "nv.line": nv.get("line")},
                  severity="error" if older else "warning")
        return
    nvl = f.get("containers.nvliblist") or {}
    unlisted: List[dict] = [u for u in nvl.get("unlisted") or [] if isinstance(u, dict)] if isinstance(nvl.get("unlisted"), list) else []
    if unlisted:
        u = unlisted[0]
        yield Hit(message=f"the host's driver has {', '.join(u.get('host') or [])} but {nvl.get('file')} does not list "
                          f"{u.get('name')} (Apptainer {u.get('release')} and later do): apptainer --nv will not bind it "
                          "into containers",
                  fix=_nvlib_fix(str(u.get("name")), u.get("release")),
                  evidence={"containers.nvliblist.file": nvl.get("file"), "containers.nvliblist.unlisted": unlisted},
                  severity="warning")


# ----------------------------------------------------------------------------------------------
# ENV038 nvidia-runtime-on-node-without-gpu
_HOOK_FAILED = ("container:nvc-cuda-init-error", "container:nvc-nvml-library-not-loaded", "container:nvc-initialization-error")
_DEFAULT_SAID = ("container:docker-default-runtime-nvidia", "container:containerd-default-runtime-nvidia")
_NVIDIA_RUNTIMES = ("nvidia", "nvidia-container-runtime")
_RUNTIME_FIX = (
    "nvidia-smi -L; ls /dev/nvidia*   # on the node: no GPU and no driver means the NVIDIA runtime must not be its default\n"
    "sudo python3 -c 'import json; p=\"/etc/docker/daemon.json\"; d=json.load(open(p)); d.pop(\"default-runtime\", None); "
    "json.dump(d, open(p, \"w\"), indent=4)' && sudo systemctl restart docker   # docker nodes without GPUs (the nvidia "
    "runtime stays registered, no longer the default)\n"
    "sudo nvidia-ctk runtime configure --runtime=containerd && sudo systemctl restart containerd   # containerd nodes "
    "without GPUs: configuring without --set-as-default removes nvidia as the default\n"
    "# Kubernetes: schedule GPU daemonsets (the device plugin) only onto GPU nodes (a nodeSelector or the GPU Operator's "
    "node labels), and give pods that need GPUs runtimeClassName: nvidia")


@rule("ENV038", "nvidia-runtime-on-node-without-gpu", "error",
      "the NVIDIA container runtime runs on a node without an NVIDIA GPU or driver", impact=6,
      also={"warning": "live: the NVIDIA runtime is the node's default runtime and the node has no NVIDIA GPU"})
def nvidia_runtime_on_node_without_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, nvidia-container-cli's initialisation failing ("initialization error:
        cuda error: unknown error", "load library failed: libnvidia-ml.so.1") on a node the user
        says has no GPU (a CPU node), with docker's "default-runtime": "nvidia" or containerd's
        default_runtime_name = "nvidia" named when shown. Live: docker's or containerd's default
        runtime is the NVIDIA runtime and no NVIDIA GPU is on the node's PCI bus.

    Why it matters:
        With the NVIDIA runtime as the default, every container whose image sets
        NVIDIA_VISIBLE_DEVICES (CUDA images, the NVIDIA device plugin itself) runs the NVIDIA
        hook, which needs the driver and a GPU: on a CPU node it fails and the container never
        starts. The driver is not broken; the node should not have that default.

    How to fix:
        Keep the NVIDIA runtime as the default only on GPU nodes (remove it from daemon.json or
        containerd's config on CPU nodes), schedule GPU daemonsets and pods only onto GPU nodes,
        and on mixed clusters select the runtime per pod (runtimeClassName: nvidia).

    References:
        - https://github.com/NVIDIA/k8s-device-plugin/blob/1b826acc6af3079d8923bac395c3124b8861a9a6/README.md (Prerequisites, Preparing your GPU Nodes)
        - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html
        - https://github.com/NVIDIA/k8s-device-plugin/issues/52
    """
    found = f.get("ticket.symptoms") or []
    hook = next((s for s in found if s.get("id") in _HOOK_FAILED), None)
    no_gpu = said_no_gpu(f, NO_GPU_ON_MACHINE)   # the node itself, not only the program, without a GPU
    if hook is not None and no_gpu is not None and not f.get("ticket.gpus_named"):
        default = next((s for s in found if s.get("id") in _DEFAULT_SAID), None)
        made = (f" and the NVIDIA runtime is the default runtime (line {default.get('line')}: \"{told_text(default)}\")"
                if default else "")
        yield Hit(message=f"the NVIDIA container hook failed to initialise (line {hook.get('line')}: \"{told_text(hook)}\") "
                          f"on a node without a GPU (line {no_gpu.get('line')}: \"{told_text(no_gpu)}\"){made}: the hook "
                          "needs a GPU and its driver, so containers asking for GPUs cannot start there",
                  fix=_RUNTIME_FIX, evidence={**told_evidence(hook), "no_gpu.line": no_gpu.get("line"),
                                              "default_runtime.line": default.get("line") if default else None})
        return
    rt = f.get("containers.default_runtime") or {}
    engines = [e for e in ("docker", "containerd") if rt.get(e) in _NVIDIA_RUNTIMES]
    on_bus = f.get("nvidia.pci_devices")
    if engines and isinstance(on_bus, int) and on_bus == 0:
        yield Hit(message=f"the NVIDIA runtime is {' and '.join(engines)}'s default runtime, and this node has no NVIDIA "
                          "GPU on its PCI bus: containers whose image asks for GPUs (NVIDIA_VISIBLE_DEVICES) fail to start here",
                  fix=_RUNTIME_FIX, evidence={"containers.default_runtime": rt, "nvidia.pci_devices": on_bus},
                  severity="warning")
