"""The job's environment: launch settings, communication library variables, where it runs."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import (catalogued, nccl_named_cause, nccl_shm_cause, stated, ticket_all, ticket_evidence,
                                     ticket_symptoms, told_evidence, told_text, version_of)
from hpcdoctor.rules._where import SHM_BIGGER, shm_fix, where
from hpcdoctor.triage.exports import EXPORT_SOURCE


def _torch_at_least(f, version: str) -> bool:
    v = version_of(str(f.get("torch.version")).split("+")[0]) if f.get("torch.version") is not None else None
    return v is not None and v >= version_of(version)


@rule("ENV001", "nccl-async-error-handling", "advice", "the deprecated NCCL_ASYNC_ERROR_HANDLING name", impact=2)
def nccl_async_error_handling(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        NCCL_ASYNC_ERROR_HANDLING set while TORCH_NCCL_ASYNC_ERROR_HANDLING is not, with a torch
        (2.2 or newer) that named TORCH_NCCL_ASYNC_ERROR_HANDLING the variable and the old name
        deprecated.

    Why it matters:
        The old name still works: torch reads the names of one setting newest first and falls
        back to the old one, warning once that it is deprecated (c10d Utils.hpp getCvarInt over
        ProcessGroupNCCL.hpp's {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"},
        in torch 2.13.0's shipped headers). So nothing is lost today; the warning is noise in every
        rank's log, and a release that drops the old name would silently turn a hung collective
        back into a hang until the job's time limit.

    How to fix:
        export TORCH_NCCL_ASYNC_ERROR_HANDLING with the same value (and drop the old name).

    References:
        - https://pytorch.org/docs/stable/torch_nccl_environment_variables.html
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp (the names; read in the torch 2.13.0 wheel's include/)
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/csrc/distributed/c10d/Utils.hpp (getCvarInt: the old name read last, with WARN_ENV_VAR_ONCE)
    """
    env = f["env.vars"]
    if env.get("NCCL_ASYNC_ERROR_HANDLING") is not None and env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING") is None \
            and _torch_at_least(f, "2.2"):
        value = env["NCCL_ASYNC_ERROR_HANDLING"]
        yield Hit(message=f"NCCL_ASYNC_ERROR_HANDLING={value} is the deprecated name: torch {f.get('torch.version')} still "
                          "reads it, after TORCH_NCCL_ASYNC_ERROR_HANDLING, and warns once on every rank",
                  fix=f"export TORCH_NCCL_ASYNC_ERROR_HANDLING={shlex.quote(str(value))}",
                  evidence={"env.NCCL_ASYNC_ERROR_HANDLING": value}, env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": value})


@rule("ENV002", "nccl-debug-left-on", "advice", "NCCL debug logging left on", impact=2)
def nccl_debug_left_on(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        NCCL_DEBUG set to INFO or TRACE outside a debugging session.

    Why it matters:
        Every rank prints its topology, channels and every communicator init; on hundreds of ranks
        the logs grow by megabytes per step of initialisation and hide the lines that matter, and
        TRACE slows the collectives themselves.

    How to fix:
        export NCCL_DEBUG=WARN (or unset it); turn INFO on only to debug a hang or a slow ring.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug
    """
    if (f.get("env.listed") or {}).get("source") == EXPORT_SOURCE:
        return  # set in a ticket's own lines: the user is debugging, which is when INFO belongs
    level = (f["env.vars"].get("NCCL_DEBUG") or "").upper()
    if level in ("INFO", "TRACE"):
        yield Hit(message=f"NCCL_DEBUG={level}: every rank logs topology and communicator setup",
                  fix="export NCCL_DEBUG=WARN", evidence={"env.NCCL_DEBUG": level})


@rule("ENV003", "python-env-on-parallel-fs", "advice", "the Python environment lives on a parallel filesystem", impact=5,
      also={"info": "read from the user's words: Python or an import starts slowly from a parallel file system"})
def python_env_on_parallel_fs(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        torch imported from a network or parallel filesystem (Lustre, GPFS, NFS, BeeGFS, CephFS)
        outside a container. At info, in a paste: the user's words that Python, ipython, jupyter or
        an import starts slowly from a Lustre, GPFS or BeeGFS file system.

    Why it matters:
        Importing torch opens thousands of small files; on a parallel filesystem every rank of every
        node does that against the metadata servers at the same moment. Start-up takes minutes at
        scale and slows the filesystem for everyone.

    How to fix:
        Pack the environment into a container image (Apptainer/Singularity) or a squashfs, or copy
        it to node-local storage ($TMPDIR) at job start.

    References:
        - 003_ff12095d05d26000.txt (containers for Python environments on EuroHPC systems)
    """
    said = catalogued(f, "python-env-on-parallel-fs")
    if said:
        s = said[0]
        yield Hit(message="the usual cause of Python starting slowly from a parallel file system: every start stats and opens "
                          "thousands of small files of the environment, each a request to the metadata servers (the user: "
                          f"\"{str(s.get('matched') or s.get('text', '')).strip()[:120]}\")",
                  fix="strace -c -f -e trace=%file python -c 'import torch'   # how many stat/open calls one start makes\n"
                      "# pack the environment into one image (apptainer build env.sif env.def), or copy it to $TMPDIR at job start",
                  evidence=told_evidence(s), severity="info")
        return
    t = f["torch"]
    fs = t.get("site_fs") or {}
    if fs.get("network") and not f.get("scheduler.in_container"):
        yield Hit(message=f"torch loads from {fs.get('fstype')} ({fs.get('mount_point')}): every rank's import hits the "
                          "filesystem's metadata servers",
                  fix="# pack the environment into one image (apptainer build env.sif env.def), or copy it to $TMPDIR at job start",
                  evidence={"torch.site_fs": fs})


@rule("ENV004", "login-node", "advice", "running on a login node", impact=5,
      also={"warning": "a site's notice says it killed a process run on a login node",
            "info": "read from the user's words: a head or login node said to have no GPU, or only the CUDA "
                    "toolkit's stub of libcuda.so where the driver's libcuda.so.1 should be"})
def login_node(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        No batch job and no GPU: hpcdoctor (and presumably the user's work) runs on a login or
        front-end node. In a pasted ticket, a site's notice that a process run on a login node was
        killed and must run on the compute nodes (TACC's: "Your current running process below has
        been killed and must be submitted to the compute queues"; knowledge/messages/
        login_policy.toml), quoted at severity warning; and, at severity info, a user who says the
        head or login node has no GPU, or who found only the CUDA toolkit's stubs/libcuda.so and no
        libcuda.so.1 (the driver installs libcuda.so.1: a machine without it has no NVIDIA driver,
        as a login node without GPUs has none).

    Why it matters:
        Login nodes are shared, have no GPUs and often a different CPU; what is checked here says
        little about the compute nodes, and heavy work there disturbs every user.

    How to fix:
        Run the check where the job runs: srun --pty -p <partition> --gpus=1 hpcdoctor check, or as
        a step of the batch script.

    References:
        - 000_6e25303b50457a54.txt (run work on compute nodes through the scheduler)
        - https://docs.tacc.utexas.edu/basics/conduct/ (TACC: do not run jobs on the login nodes)
        - https://gitlab.kitware.com/cmake/cmake/-/merge_requests/9050 (the toolkit's stubs are for linkers only)
    """
    pasted = list(_login_node_in_ticket(f))
    if pasted:  # a pasted ticket has no scheduler environment to read beside it
        yield from pasted
        return
    in_job = f["scheduler.in_job"]
    gpus = f["gpus"]
    if not in_job and not gpus and f.get("scheduler.launcher_local_rank") is None:
        yield Hit(message="no batch job and no GPU here: this looks like a login or front-end node",
                  fix="srun --pty --gpus=1 hpcdoctor check   # add -p with your site's GPU partition",
                  evidence={"scheduler.in_job": False, "gpus": 0})


_ONTO_COMPUTE = ("salloc --gpus=1 --time=30   # an interactive allocation on a compute node (add -p with the site's GPU "
                 "partition; TACC: idev)\n"
                 "srun --pty --gpus=1 bash   # or run the command itself there: srun --gpus=1 python ...; "
                 "sbatch for anything long")
# The user's words for a place without GPUs (knowledge/messages/prose.toml).
_NO_GPU_HERE_SAID = {"prose:login-node-no-gpu-said":
                     "the user says the node it ran on, a head or login node, has no GPU",
                     "prose:libcuda-stub-only-said":
                     "only the CUDA toolkit's link-time stub (stubs/libcuda.so) was found, no libcuda.so.1: the NVIDIA "
                     "driver, which installs libcuda.so.1, is not on this machine, as on a login node without GPUs"}


def _login_node_in_ticket(f: FactView) -> Iterator[Hit]:
    told = catalogued(f, "login-node")
    site = next((s for s in told if str(s.get("id", "")).startswith("login_policy:")), None)
    if site is not None:
        yield Hit(message=f"the site killed a process run on a login node and says it must run on the compute nodes "
                          f"(line {site.get('line')}: \"{told_text(site)}\")",
                  fix=_ONTO_COMPUTE, evidence=told_evidence(site), severity="warning")
        return
    s = next((s for s in told if s.get("id") in _NO_GPU_HERE_SAID), None)
    if s is not None:
        yield Hit(message=f"{_NO_GPU_HERE_SAID[s['id']]} (line {s.get('line')}: \"{told_text(s)}\"): GPU work there finds "
                          "no GPU; it runs on a GPU compute node, through the scheduler",
                  fix=_ONTO_COMPUTE, evidence=told_evidence(s), severity="info")


@rule("ENV005", "nccl-shm-unusable", "error", "NCCL may not use /dev/shm", impact=8,
      also={"warning": "no NCCL shm line pasted: NCCL's unhandled system error inside a docker container, whose "
                       "/dev/shm is 64 MB unless docker run sets --shm-size or --ipc=host"})
def nccl_shm_unusable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, NCCL's shared-memory transport failing on /dev/shm with an errno other
        than "No space left on device": "NCCL WARN Call to shm_open failed : Permission denied"
        (NCCL 2.4-2.11, src/include/shm.h), "Error: failed to create shared memory file
        /dev/shm/nccl-..., error Permission denied (13)" (2.22+), or the same errno after
        "Error: failed to extend" or "Error while creating shared memory segment". A full /dev/shm
        is shm-too-small's; one cause gives one finding. On the peer's side, "Error while attaching
        to shared memory segment /dev/shm/nccl-... (size N), error: No such file or directory (2)"
        (src/misc/shmutils.cc; the errno on that line from NCCL 2.22, on the "Call to open failed"
        line above it before): the peer opens the file another rank created, without creating it.

    Why it matters:
        NCCL passes data between ranks on one node through files in /dev/shm whenever GPUs cannot
        reach each other directly; when it may not create them, communicator initialisation fails
        and the job dies with "unhandled system error". A larger /dev/shm does not help: /dev/shm
        is mounted without write access for the user (a tmpfs not of mode 1777, or read-only in a
        container or sandbox). Attaching is not creating: No such file or directory there means the
        creator's file is not in this process's /dev/shm. NCCL itself removes the file only once
        every peer has mapped it, or when the creating rank fails or aborts first, so the ranks do
        not share one /dev/shm (separate containers or pods without --ipc=host or a shared /dev/shm
        mount), the creator died first, or NCCL has a bug: a size of 0 with a truncated path is
        NCCL's own, a rank reading a peer's cuMem host-buffer descriptor as a /dev/shm path
        (NVIDIA/nccl PR 2059, issue 2190). Permission denied there: NCCL makes the file mode 0600,
        so the ranks run as different users.
        A warning where no NCCL line names the call that failed, but NCCL's "unhandled system
        error" comes from inside a docker container (the user says so, or the live node is one):
        docker gives a container a private /dev/shm of 64 MB unless docker run sets --shm-size or
        --ipc=host, and NCCL's transport between GPUs without peer-to-peer access needs more, so
        that is the usual cause there; NCCL_DEBUG=INFO shows the failing call.

    How to fix:
        Give the job a writable /dev/shm: docker run --ipc=host (or a private one with
        --shm-size=1g); on Kubernetes an emptyDir volume with medium: Memory mounted at /dev/shm;
        on a bare node an administrator restores mode 1777 (chmod 1777 /dev/shm, the mode systemd
        mounts it with). NCCL_SHM_DISABLE=1 only as a stopgap: traffic between GPUs without
        peer-to-peer access then goes through the network transport (IB or sockets), slower.
        Attach failing with No such file or directory: every rank of a node in one /dev/shm
        (docker run --ipc=host for every rank's container, or one container; in Kubernetes one pod);
        stat -c %d /dev/shm in each rank's environment shows whether it is one; NCCL_SHM_DISABLE=1 as
        the stopgap; if they do share it, try another NCCL release. Size 0: NCCL_CUMEM_HOST_ENABLE=0
        on every rank.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/runtime_and_mpi_issues.html
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-shm-disable
        - https://github.com/NVIDIA/nccl/blob/v2.7.8-1/src/include/shm.h
        - https://github.com/NVIDIA/nccl/issues/328
        - https://github.com/NVIDIA/nccl/blob/v2.22.3-1/src/misc/shmutils.cc (create, attach, refcount and unlink)
        - https://github.com/NVIDIA/nccl/issues/1589 (attach: No such file or directory)
        - https://github.com/NVIDIA/nccl/pull/2059 and https://github.com/NVIDIA/nccl/issues/2190 (attach, size 0)
        - https://kubernetes.io/docs/concepts/storage/volumes/#emptydir
        - https://github.com/systemd/systemd/blob/main/src/shared/mount-setup.c (/dev/shm mode=1777)
        - https://docs.docker.com/reference/cli/docker/container/run/ (--shm-size: 64MB when omitted; --ipc=host)
        - https://github.com/moby/moby/issues/29492 (the 64 MB default too small for multi-process programs)
        - https://github.com/xorbitsai/inference/issues/2836 (unhandled system error in docker: --shm-size fixed it)
    """
    cause = nccl_shm_cause(f)
    if not cause:
        yield from _system_error_in_docker(f)
        return
    if cause["kind"] == "attach":
        yield from _shm_attach_failed(f, cause)
        return
    if cause["kind"] != "access":
        return
    s = cause["symptom"]
    if cause["error"].lower() == _ENOENT:
        # mkstemp or open(O_CREAT) of /dev/shm/nccl-XXXXXX: ENOENT there is the directory itself.
        yield Hit(message=f"NCCL could not create its shared-memory file: /dev/shm does not exist here (No such file or "
                          f"directory while creating, line {s['line']}); a larger /dev/shm would not help. Stopgap only: "
                          "NCCL_SHM_DISABLE=1 sends traffic between GPUs without P2P over IB or sockets, slower",
                  fix="ls -ld /dev/shm   # missing: the container or sandbox has no /dev/shm\n" + shm_fix(f, SHM_WRITABLE),
                  evidence=ticket_evidence(s))
        return
    yield Hit(message=f"NCCL may not create its shared-memory files in /dev/shm: {cause['error']} (line {s['line']}); "
                      "a larger /dev/shm would not help. Stopgap only: NCCL_SHM_DISABLE=1 sends traffic between GPUs "
                      "without P2P over IB or sockets, slower",
              fix=shm_fix(f, SHM_WRITABLE), evidence=ticket_evidence(s))


_ENOENT = "no such file or directory"
_SHM_STOPGAP = ("NCCL_SHM_DISABLE=1 python train.py   # stopgap only: traffic between GPUs without P2P then goes over "
                "IB or sockets, slower")
# The ranks of one node in one /dev/shm: docker's --ipc=host gives every container the host's; in
# Kubernetes the node's ranks in one pod (containers of a pod share its IPC namespace, and one emptyDir
# mounted at /dev/shm in each).
SHM_SHARED = {
    "kubernetes": "kubectl edit deployment NAME   # one pod for the node's ranks; every container mounts the same emptyDir "
                  "(medium: Memory) at /dev/shm",
    "docker": "docker run --ipc=host IMAGE   # every rank's container: they then share the host's /dev/shm (or run all "
              "of a node's ranks in one container)",
    "site": "stat -c %d /dev/shm   # in every rank's environment on one node: a different number is a different /dev/shm",
}


def _shm_attach_failed(f: FactView, cause: dict) -> Iterator[Hit]:
    """NCCL's "Error while attaching to shared memory segment": the peer side, opening (open O_RDWR,
    no O_CREAT) and mapping a file another rank created (src/misc/shmutils.cc @ v2.22.3-1)."""
    s, err = cause["symptom"], cause["error"]
    seg = cause.get("segment") or "the segment"
    if cause.get("size") == 0:
        # A size of 0 with a path that is no file: a rank read a peer's cuMem host-buffer descriptor as
        # a /dev/shm path (transport/shm.cc ncclShmImportShareableBuffer; NVIDIA/nccl PR 2059, issue 2190).
        yield Hit(message=f"NCCL tried to attach to a shared-memory segment of size 0 ({seg}, line {s['line']}): no file "
                          "NCCL made has size 0, so the path came from NCCL's own descriptor mix-up, a rank reading a "
                          "peer's cuMem host buffer as a /dev/shm file (the ranks disagree on cuMem host memory, as with "
                          "NUMA nodes without CPUs or memory); an NCCL bug, not /dev/shm",
                  fix="NCCL_CUMEM_HOST_ENABLE=0 python train.py   # every rank: all of them use /dev/shm files again "
                      "(the setting NCCL's proposed fix, PR 2059, prints)\n" + _SHM_STOPGAP,
                  evidence=ticket_evidence(s))
        return
    if err and err.lower() == _ENOENT:
        yield Hit(message=f"NCCL could not attach to the shared-memory segment another rank created ({seg}): it is not in "
                          f"this process's /dev/shm (No such file or directory, line {s['line']}). Attaching is not "
                          "creating, a larger /dev/shm would not help: the ranks do not share one /dev/shm (separate "
                          "containers or pods without --ipc=host or a shared /dev/shm), the creating rank failed or "
                          "aborted first (NCCL then removes its file), or an NCCL release bug (try another NCCL)",
                  fix=shm_fix(f, SHM_SHARED) + "\n" + _SHM_STOPGAP, evidence=ticket_evidence(s))
        return
    if err and err.lower() == "permission denied":
        yield Hit(message=f"NCCL may not open the shared-memory segment another rank created ({seg}, Permission denied, "
                          f"line {s['line']}): NCCL creates it readable by its owner only (mode 0600), so the ranks run "
                          "as different users",
                  fix="ls -l /dev/shm/nccl-*   # the owner: every rank of the job runs as that one user\n" + _SHM_STOPGAP,
                  evidence=ticket_evidence(s))
        return
    what = f"{err}, " if err else ""
    yield Hit(message=f"NCCL could not attach to the shared-memory segment another rank created ({seg}, {what}line "
                      f"{s['line']}); attaching is not creating, a larger /dev/shm would not help: the ranks must share "
                      "one /dev/shm",
              fix=shm_fix(f, SHM_SHARED) + "\n" + _SHM_STOPGAP, evidence=ticket_evidence(s))


_SHM_GIVEN = ("prose:docker-shm-size-set", "prose:docker-ipc-host-set")


def _system_error_in_docker(f: FactView) -> Iterator[Hit]:
    """NCCL's bare "unhandled system error" where the paste (or the node) says docker and no NCCL line
    names another cause: docker's 64 MB /dev/shm is the usual one there, not a proven one."""
    s = ticket_symptoms(f).get("nccl:ncclSystemError")
    if not s or nccl_named_cause(f):
        return
    said = next((d for d in f.get("ticket.symptoms") or [] if d.get("id") == "prose:docker-said" and stated(d)), None)
    if said is None and where(f) != "docker":
        return
    if any(d.get("id") in _SHM_GIVEN for d in f.get("ticket.symptoms") or []):
        return  # the container already has a larger /dev/shm or the host's: docker's default is not the cause
    how = f"line {said.get('line')}: \"{told_text(said)}\"" if said else "this node is a docker or podman container"
    yield Hit(message=f"NCCL returned 'unhandled system error' (line {s['line']}) inside a docker container ({how}), and no "
                      "NCCL line names the call that failed: docker gives a container a 64 MB /dev/shm unless run with "
                      "--shm-size or --ipc=host, too small for NCCL's shared-memory transport between GPUs, the usual "
                      "cause there",
              fix=SHM_BIGGER["docker"] + "\n"
                  "docker exec CONTAINER df -h /dev/shm   # 64M: docker's default\n"
                  "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,SHM python train.py 2>&1 | grep -m1 -B5 'NCCL WARN'   "
                  "# confirms: the first NCCL WARN names the call and its errno",
              evidence=ticket_evidence(s), severity="warning")


# A writable /dev/shm, by place: an emptyDir volume is a fresh tmpfs the pod may write; docker's
# --ipc=host shares the host's (mode 1777); on a node an administrator restores the mode systemd
# mounts it with (src/shared/mount-setup.c, mode=1777).
SHM_WRITABLE = {
    "kubernetes": SHM_BIGGER["kubernetes"],
    "docker": "docker run --ipc=host IMAGE   # or --shm-size=1g: a private /dev/shm the job may write",
    "site": "sudo chmod 1777 /dev/shm   # an administrator, on the node: drwxrwxrwt is the mode systemd mounts it with",
}


@rule("ENV006", "nccl-system-error", "error", "NCCL failed with a system or internal error whose cause is not pasted",
      impact=6)
def nccl_system_error(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, NCCL's "unhandled system error" (ncclGetErrorString, src/init.cc; torch
        adds "ncclSystemError: System call (e.g. socket, malloc) or external library call failed"),
        or its "internal error" (ncclInternalError), where no line this catalogue knows names the cause. When NCCL's cause is pasted (a
        shared-memory failure, no socket interface, two ranks on one GPU, an InfiniBand
        registration or queue-pair failure) that cause's rule answers instead.

    Why it matters:
        The error code only says that a system call or an external library (sockets, /dev/shm,
        InfiniBand verbs, NVML) failed; every cause has another fix. NCCL prints which call failed
        and with which errno in a "NCCL WARN" line before returning, but only when NCCL_DEBUG is
        WARN or INFO, and most pastes stop at the framework's traceback.

    How to fix:
        Rerun the failing command with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,SHM and read the
        first "NCCL WARN" line (and the INFO lines just above it); paste that line.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/runtime_and_mpi_issues.html
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug-subsys
        - https://github.com/NVIDIA/nccl/blob/master/src/init.cc
    """
    found = ticket_symptoms(f)
    s = found.get("nccl:ncclSystemError") or next(iter(catalogued(f, "nccl-system-error")), None)
    if not s or nccl_shm_cause(f) or nccl_named_cause(f):
        return
    error = "internal error" if s.get("key") == "ncclInternalError" else "unhandled system error"
    # Warnings NCCL prints on its way to a working setup name no cause: without libibverbs the IB
    # transport's init fails and NCCL falls back to sockets (src/misc/ibvwrap.cc, net_ib.cc
    # ncclIbInit at v2.7.8-1); IB async events are only logged and acknowledged (net_ib.cc
    # ncclIbAsyncThreadMain at v2.12.12-1).
    warns = [w for w in ticket_all(f, "nccl:nccl-warn")
             if not w["message"].startswith(("Failed to open libibverbs", "NET/IB : Got async event"))]
    if warns:
        first = warns[0]
        # A warning the catalogue knows but no rule answers (a port error, a plugin that failed...): say
        # what it establishes, so that the rerun is read against it.
        known = next((k for k in f.get("ticket.symptoms") or [] if k.get("line") == first["line"] and k.get("means")
                      and str(k.get("id", "")).startswith("nccl:") and not k.get("listing")), None)
        said = (f"NCCL's first warning in the paste, line {first['line']}: \"{first['message'][:160]}\", "
                + (f"says: {known['means']}" if known else "is not a cause hpcdoctor knows"))
    else:
        said = "the paste holds no NCCL WARN line naming the call that failed"
    version = f" (NCCL {s['nccl']})" if s.get("nccl") else ""
    yield Hit(message=f"NCCL returned '{error}'{version} at line {s['line']}: {said}",
              fix="NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,SHM python train.py 2>&1 | grep -m1 -B5 'NCCL WARN'"
                  "   # the same command that failed; the first NCCL WARN names the call and its errno",
              evidence=ticket_evidence(s))


@rule("ENV013", "amd-hsmp-driver-missing", "error", "amd-smi cannot start: no HSMP driver (amd_hsmp) for the AMD CPUs",
      impact=5)
def amd_hsmp_driver_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, AMD SMI failing to initialise because its CPU side (E-SMI) finds no
        HSMP driver: the library's "ESMI Not initialized, drivers not found", the status codes
        AMDSMI_STATUS_NO_HSMP_DRV ("HSMP driver not found") and AMDSMI_STATUS_NO_DRV, or the CLI's
        "Driver not loaded (amd_hsmp not found in modules)".

    Why it matters:
        On AMD EPYC nodes amd-smi reads the CPUs through the Host System Management Port, which
        the amd_hsmp kernel driver provides; without it the library's initialisation for CPUs
        fails and amd-smi reports nothing (GPU monitoring built on it stops too). The GPUs
        themselves are not at fault.

    How to fix:
        Load the amd_hsmp module (administrators); where it does not load, HSMP support is off in
        the BIOS and must be enabled there, as AMD's maintainers advise.

    References:
        - https://github.com/ROCm/amdsmi/issues/84 (AMD: enable HSMP in the BIOS, load amd_hsmp)
        - https://docs.kernel.org/arch/x86/amd_hsmp.html (/dev/hsmp; amd_hsmp and hsmp_acpi)
        - https://github.com/ROCm/amdsmi/blob/amd-staging/src/amd_smi/amd_smi_system.cc
    """
    for s in catalogued(f, "amd-hsmp-driver-missing"):
        yield Hit(message=f"amd-smi's CPU side found no HSMP driver (amd_hsmp) (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): AMD SMI cannot initialise for the CPUs",
                  fix="ls -l /dev/hsmp   # the device every HSMP driver creates: missing when none is loaded\n"
                      "sudo modprobe amd_hsmp || sudo modprobe hsmp_acpi   # administrators (hsmp_acpi: a BIOS that "
                      "describes HSMP in ACPI, newer kernels); if neither loads, enable HSMP support in the BIOS",
                  evidence=told_evidence(s))
        return
