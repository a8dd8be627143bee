"""Memory: huge pages, NUMA page placement, /dev/shm, host DRAM errors and out-of-memory kills."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._build_jobs import build_fix
from hpcdoctor.rules._jupyter_kernel import is_kernel_line, kernel_died_hint
from hpcdoctor.rules._memory_monitors import MONITOR_KILLED, monitor_killed
from hpcdoctor.rules._common import catalogued, nccl_shm_cause, stated, ticket_evidence, told_evidence, told_text
from hpcdoctor.rules._ray_store import RAY_SHM, ray_said
from hpcdoctor.rules._where import shm_fix


@rule("MEM001", "thp-disabled", "advice", "transparent huge pages disabled", impact=3)
def thp_disabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Transparent huge pages set to "never" in /sys/kernel/mm/transparent_hugepage/enabled.

    Why it matters:
        With 4 KiB pages, large tensors and arrays need hundreds of times more TLB entries than
        with 2 MiB pages; memory-bound kernels then spend time on page walks. PyTorch's CPU
        allocator asks for huge pages with madvise, which does nothing when THP is "never".

    How to fix:
        This is a node setting for the administrators: set it to "madvise" (or "always"), for
        example echo madvise > /sys/kernel/mm/transparent_hugepage/enabled at boot. Ask your
        site if this is deliberate for the partition.

    References:
        - 000_6e25303b50457a54.txt (section 3.3: THP reduces TLB lookup overhead)
        - https://docs.kernel.org/admin-guide/mm/transhuge.html
    """
    mode = f["memory.thp_enabled"]
    if mode != "never":
        return
    yield Hit(
        message="transparent huge pages are disabled (never); large allocations use 4 KiB pages",
        fix="echo madvise | sudo tee /sys/kernel/mm/transparent_hugepage/enabled   # administrators",
        evidence={"memory.thp_enabled": mode},
    )


@rule("MEM010", "hugepages-not-reserved", "error", "a program asked for huge pages the node has not reserved", impact=6)
def hugepages_not_reserved(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program refused the explicit huge pages it asked the kernel for
        (mmap with MAP_HUGETLB): sdsl-lite's "hugepage_allocator could not allocate hugepages:
        Cannot allocate memory" (knowledge/messages/hugepages.toml). Where the node's own
        /proc/meminfo was read, its huge-page pool (HugePages_Total) is named.

    Why it matters:
        The kernel gives explicit huge pages only from its huge-page pool, which is empty unless an
        administrator reserved pages: the allocation fails with ENOMEM however much ordinary memory
        is free, and the program stops. Transparent huge pages (thp-disabled) need no pool.

    How to fix:
        Reserve enough huge pages for the program (sysctl vm.nr_hugepages, or hugepages= at boot for
        1 GiB pages; on a cluster, the site's job option for huge pages), or run the program with its
        ordinary allocator.

    References:
        - https://docs.kernel.org/admin-guide/mm/hugetlbpage.html
        - https://github.com/simongog/sdsl-lite/blob/b83298155f43365c34e0e58ee45ea76ef82434a0/include/sdsl/memory_management.hpp
        - https://github.com/simongog/sdsl-lite/issues/131
    """
    told = catalogued(f, "hugepages-not-reserved")
    if not told:
        return
    s = told[0]
    total = f.get("memory.hugepages_total")
    pool = (f"; this node reserves {total} huge page(s) (HugePages_Total)" if isinstance(total, int) else "")
    yield Hit(message=f"the program asked the kernel for explicit huge pages and was refused (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): the node's huge-page pool has fewer free pages than it asked for{pool}",
              fix="grep -i huge /proc/meminfo   # HugePages_Total and HugePages_Free: the pool; Hugepagesize: one page\n"
                  "sudo sysctl -w vm.nr_hugepages=512   # administrators: reserve enough pages for the program (each of "
                  "Hugepagesize: 512 x 2 MiB = 1 GiB on x86-64); persist it in /etc/sysctl.d/",
              evidence={**told_evidence(s), "memory.hugepages_total": total})


@rule("MEM002", "numa-balancing-on", "advice", "automatic NUMA balancing on a multi-node host", impact=4)
def numa_balancing_on(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Automatic NUMA balancing enabled (/proc/sys/kernel/numa_balancing) on a host with two or
        more NUMA nodes.

    Why it matters:
        The kernel samples memory accesses by unmapping pages and migrates pages and threads
        towards the node it guesses they belong to. For ranks that are already bound, that is
        overhead and jitter; for unbound ones it moves memory behind the application's back.
        Cross-socket traffic costs 10-30% in common cases.

    How to fix:
        Bind each rank to the cores and memory of its own NUMA node:
        srun --cpu-bind=cores --mem-bind=local. Administrators can disable balancing on compute
        nodes with sysctl kernel.numa_balancing=0.

    References:
        - 004_3c12714629749d50.txt (NUMA and sockets: "10-30% regressions are common", srun --cpu-bind=cores --mem-bind=local)
        - https://docs.kernel.org/admin-guide/sysctl/kernel.html#numa-balancing
    """
    count = f["numa.count"]
    if count < 2 or not f["numa.balancing"]:
        return
    yield Hit(
        message=f"automatic NUMA balancing is on across {count} NUMA nodes; pages and threads migrate at run time",
        fix="srun --cpu-bind=cores --mem-bind=local python train.py   # admins: sysctl kernel.numa_balancing=0",
        evidence={"numa.count": count, "numa.balancing": True},
    )


@rule("MEM003", "shm-too-small", "warning", "/dev/shm too small for DataLoader workers or Ray's object store", impact=6,
      also={"info": "a shell's bare Bus error: the usual cause, not a shown one"})
def shm_too_small(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        /dev/shm smaller than hpcdoctor's threshold (1 GiB) where torch is installed; in a pasted
        ticket, NCCL's "Error while creating shared memory segment" or "Error: failed to extend
        /dev/shm/nccl-... to N bytes" with "No space left on device" or no other errno named
        (another errno, such as Permission denied, is nccl-shm-unusable); torch's "DataLoader
        worker (pid N) is killed by signal: Bus error", "Unexpected bus error encountered in
        worker ... insufficient shared memory (shm)", "unable to allocate shared memory(shm)
        for file <...>: No space left on device" or "unable to write to file </torch_...>" with
        that errno or, as torch 0.3-1.x printed it, none (a line wrapped by a mail client read too);
        Ray's object store: the raylet's "System memory request exceeds memory available in /dev/shm.
        The request is for N bytes, and the amount available is M bytes.", ray.init's "The object
        store is using /tmp instead of /dev/shm because /dev/shm has only N bytes available" and its
        ValueError "The configured object store size (X GB) exceeds /dev/shm size (Y GB)", each with
        its numbers decoded (knowledge/messages/ray_object_store.toml); UCX's posix shared-memory
        transport, "Not enough memory to write total of N bytes. Please check that /dev/shm or the
        directory you specified has more available memory." (ENOSPC writing its backing file,
        knowledge/messages/ucx.toml shm-no-space; UCX_POSIX_DIR where set); Python's multiprocessing
        semaphores, which glibc keeps in /dev/shm: "_multiprocessing.SemLock(" followed by "OSError:
        [Errno 28] No space left on device", and joblib's "[Errno 28] No space left on device.  joblib
        will operate in serial mode" (knowledge/messages/multiprocessing_shm.toml), read as /dev/shm
        and not as a full disk.

    Why it matters:
        PyTorch DataLoader workers pass every batch to the main process through shared memory; a
        small /dev/shm (64 MiB is the container default) ends in "bus error" or "DataLoader worker
        killed ... insufficient shared memory" as soon as batches grow. Ray keeps its object store
        there: a smaller /dev/shm shrinks the store, moves it to disk, or stops the raylet.

    How to fix:
        Where the job runs decides how: in a Kubernetes pod, a memory-backed emptyDir volume
        mounted at /dev/shm; under docker or podman, --shm-size=16g (or --ipc=host); on a Slurm
        node or in Apptainer (which shares the node's /dev/shm), /dev/shm is the node's tmpfs and
        its size the site's setting. DataLoader(num_workers=0) is a stopgap.

    References:
        - https://github.com/pytorch/pytorch#docker-image
        - 001_dd2fe1913b91ca0a.txt (DataLoader workers)
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/runtime_and_mpi_issues.html
        - https://github.com/pytorch/pytorch/blob/main/torch/csrc/DataLoader.cpp
        - https://kubernetes.io/docs/concepts/storage/volumes/#emptydir
        - https://github.com/ray-project/ray/blob/564a5d1a657d247c07cb99c132dfd709b53fa323/src/ray/object_manager/plasma/store_runner.cc
        - https://github.com/ray-project/ray/blob/003280cbe0d09f1c4cd6a482363fbefff4f613c5/python/ray/_private/services.py (determine_plasma_store_config)
    """
    from hpcdoctor import knowledge

    limit = knowledge.load("thresholds")["shm"]["min_bytes"]
    cause = nccl_shm_cause(f)
    if cause and cause["kind"] == "size":
        # NCCL's own failure pasted: /dev/shm filled up under its segment (docker's 64 MB
        # default). A refused shm_open or any other errno is nccl-shm-unusable's, not a size.
        s = cause["symptom"]
        said = "/dev/shm is full" if cause["error"] else "/dev/shm is most likely too small"
        what = f"its {cause['size'] / 2**20:.1f} MiB shared-memory segment" if cause["size"] else "its shared-memory segment"
        yield Hit(message=f"NCCL could not create {what}: {said} (line {s['line']})",
                  fix=shm_fix(f), evidence=ticket_evidence(s))
        return
    ray = next((t for t in catalogued(f, "shm-too-small") if str(t.get("id", "")).startswith(RAY_SHM)), None)
    if ray is not None:
        # Ray's object store lives in /dev/shm and says by how much it does not fit there.
        yield Hit(message=f"{ray_said(ray)} (line {ray['line']})", fix=shm_fix(f), evidence=ticket_evidence(ray))
        return
    ucx = next((t for t in catalogued(f, "shm-too-small") if t.get("id") == _UCX_SHM_FULL), None)
    if ucx is not None:
        # UCX's posix transport could not write its backing file: ENOSPC, which it words as memory.
        yield Hit(message=f"UCX's shared-memory transport could not write its backing file (line {ucx['line']}: "
                          f"\"{told_text(ucx)}\"): /dev/shm (or the directory UCX_POSIX_DIR names) is full",
                  fix="df -h /dev/shm \"${UCX_POSIX_DIR:-/dev/shm}\"   # 100% used: full; ls -la /dev/shm shows what holds it "
                      "(files of runs that ended can be removed by their owner)\n" + shm_fix(f),
                  evidence=ticket_evidence(ucx))
        return
    s = torch_shm_message(f)
    if s:
        # torch's own words: a DataLoader worker killed by SIGBUS, or a /torch_* file in /dev/shm
        # that could not be sized. A live node's /dev/shm size is the other way in, below.
        said = ("/dev/shm is full" if s.get("full")
                else "a /torch_* shared-memory file in /dev/shm could not be written, as when /dev/shm is full"
                if s.get("unsized") else "a DataLoader worker died of a bus error passing its batch through /dev/shm")
        yield Hit(message=f"{said} (line {s['line']}); a stopgap in the script: DataLoader(num_workers=0)",
                  fix=shm_fix(f), evidence=ticket_evidence(s))
        return
    bare = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "shell:bus-error"), None)
    if bare is not None and not isinstance(f.get("memory.shm_size_bytes"), int):
        # The shell's word for the crash, nothing that says what was mapped: the kernel raises SIGBUS on
        # a touch of a shared or file mapping whose page cannot be backed, a full /dev/shm (tmpfs) or a
        # full file system under a mapped file alike, so both are named and df tells them apart. One
        # finding: disk-full does not answer the same line again.
        yield Hit(message=f"a process died of SIGBUS (line {bare['line']}: \"{str(bare.get('text', '')).strip()[:100]}\"): "
                          "the two usual causes are a full /dev/shm under what the job maps there (docker's 64 MiB "
                          "default, PyTorch's docker notes) and a full file system under a file it maps (a model, "
                          "a NumPy memmap, a database); df shows which",
                  severity="info", fix=_BUS_DF + shm_fix(f),
                  evidence=ticket_evidence(bare))
        return
    size = f["memory.shm_size_bytes"]
    if f.get("torch.installed") is True and size < limit:
        yield Hit(message=f"/dev/shm is {size / 2**20:.0f} MiB: DataLoader workers will fail with bus errors; "
                          "a stopgap in the script: DataLoader(num_workers=0)",
                  fix=shm_fix(f), evidence={"memory.shm_size_bytes": size, "threshold_bytes": limit})


_NO_SPACE = "no space left on device"
_UCX_SHM_FULL = "ucx:shm-no-space"
# Lines that say /dev/shm is full whatever their errno's words: torch's own, and Python's multiprocessing
# semaphores (a named semaphore is a file in /dev/shm; knowledge/messages/multiprocessing_shm.toml).
_SHM_FULL = frozenset({"torch:torch-shm-no-space", "multiprocessing_shm:semlock-no-space",
                       "multiprocessing_shm:joblib-serial-mode-no-space"})
# A bare Bus error names neither file system: the two checks that tell a full /dev/shm from a full disk
# under a mapped file (mmap(2): SIGBUS for a page beyond what the file or tmpfs can back).
_BUS_DF = ("df -h /dev/shm   # 100% used: /dev/shm is full (the fix below)\n"
           "df -h . \"${TMPDIR:-/tmp}\" \"$HOME\"; df -i .   # 100% used: the disk under the files the program maps is full: "
           "free space there or move the files (disk-full's fix)\n")


def torch_shm_message(f: FactView):
    """torch's message that /dev/shm ran out, from a pasted ticket: the first of an errno that
    says it is full, a /torch_* file that could not be written with no errno (torch 0.3-1.x
    printed none), a DataLoader worker killed by SIGBUS. Marked "full" or "unsized"; None
    when no such line was pasted. Read from the torch catalogue
    (knowledge/messages/torch.toml), whose needles also catch a line wrapped by a mail client."""
    found = f.get("ticket.symptoms") or []
    full, unsized, bus = [], [], []
    for s in found:
        sid = s["id"]
        error = (s.get("error") or "").strip().lower()
        if sid in _SHM_FULL or (sid in ("torch:shm-write-failed", "torch:shm-allocate-failed")
                                and error == _NO_SPACE):
            full.append(s)
        elif sid == "torch:shm-write-failed" and not error:
            unsized.append(s)
        elif sid == "torch:dataloader-worker-bus-error" or (
                sid == "torch:dataloader-killed-by-signal" and s.get("signal") == "Bus error"):
            bus.append(s)
    if full:
        return dict(full[0], full=True)
    if unsized:
        return dict(unsized[0], unsized=True)
    return bus[0] if bus else None


@rule("MEM005", "host-dram-ecc-errors", "warning", "errors in the host's DRAM counted by the kernel", impact=8,
      also={"error": "uncorrectable (UE) errors: data in host memory was lost"})
def host_dram_ecc_errors(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Host (CPU) memory errors that the kernel's EDAC drivers counted: a non-zero ce_count or
        ue_count under /sys/devices/system/edac/mc/mc*/ on the node, or, in the node's kernel log
        since boot or a pasted one, EDAC's own report "EDAC MC0: 4 CE error on CPU#0Channel#2_DIMM#0 (channel:2 slot:0 ...)"
        (drivers/edac/edac_mc.c). Correctable errors (CE) are a warning, uncorrectable ones (UE)
        an error. Where no EDAC driver is loaded the counts are unknown, not zero: nothing is said.

    Why it matters:
        The kernel's EDAC documentation calls correctable errors early indications that a DIMM is
        beginning to fail; uncorrectable ones mean data in memory was lost, and the process that
        owned it crashes or computes garbage (or the kernel panics, with panic_on_ue). Jobs on the
        node fail in ways that look like software bugs.

    How to fix:
        Tell the administrators the controller, channel and DIMM the log names; they drain the
        node, check the DIMM (edac-util -v, ras-mc-ctl --errors, the BMC's event log) and replace
        it. Recurring correctable errors on one DIMM are the reason to replace it before it fails.

    References:
        - https://www.kernel.org/doc/html/latest/admin-guide/ras.html
        - https://github.com/torvalds/linux/blob/master/Documentation/ABI/testing/sysfs-devices-edac
        - https://github.com/openstreetmap/operations/issues/300 (EDAC CE errors: faulty RAM replaced)
    """
    fix = ("edac-util -v 2>/dev/null || grep -H . /sys/devices/system/edac/mc/mc*/{ce,ue}_count   # errors per controller and DIMM\n"
           "journalctl -k -b | grep -E 'EDAC|Hardware Error'   # which channel and DIMM, and how often\n"
           "scontrol update nodename=$(hostname -s) state=drain reason=\"host DRAM errors\"   # Slurm; or your scheduler's drain")
    edac = f.get("memory.edac")
    if isinstance(edac, dict):
        ce = sum(c["ce_count"] for c in edac.get("controllers", []) if isinstance(c.get("ce_count"), int))
        ue = sum(c["ue_count"] for c in edac.get("controllers", []) if isinstance(c.get("ue_count"), int))
        if ue or ce:
            yield Hit(message=f"the kernel's EDAC counters show {ue} uncorrectable and {ce} correctable host memory "
                              "error(s) since the driver loaded" + (": data in host memory was lost" if ue else
                                                                     ": a DIMM may be beginning to fail"),
                      severity="error" if ue else "warning", fix=fix, evidence={"memory.edac": edac})
            return
    told = catalogued(f, "host-dram-ecc-errors")
    if not told:
        return
    ue = [s for s in told if s.get("key") == "UE"]
    s = (ue or told)[0]
    kind = "uncorrectable (UE)" if ue else "correctable (CE)"
    yield Hit(message=f"the kernel log shows {kind} host memory errors (EDAC MC{s.get('mc')}, line {s.get('line')}: "
                      f"\"{str(s.get('text', '')).strip()[:140]}\")"
                      + (": data in host memory was lost" if ue else ": a DIMM may be beginning to fail"),
              severity="error" if ue else "warning", fix=fix, evidence=told_evidence(s))


# The user's words: killed while loading a model (knowledge/messages/faq_huggingface.toml).
_KILLED_LOADING_SAID = frozenset({"faq_huggingface:killed-while-loading-model", "faq_huggingface:killed-while-loading-model-zh",
                                  "faq_huggingface:shell-killed-after-loading-line"})
# The user naming the OOM killer as what ended the process (knowledge/messages/prose.toml).
_OOM_KILLER_SAID = "prose:oom-killer-killed-said"
# Slurm's accounting record of the job's end: JobState/State OUT_OF_MEMORY (slurm_job_state.toml),
# scontrol's Reason=OutOfMemory (slurm_reasons.toml).
_SLURM_RECORDS = frozenset({"slurm_job_state", "slurm_reasons"})


# The user's words for a build that takes all of the host's memory (knowledge/messages/prose.toml).
_BUILD_MEMORY_SAID = frozenset({"prose:build-exhausts-memory-said", "prose:build-exhausts-ram-said"})
# The user's words for a process killed with no message naming who (prose.toml process-killed-said):
# answered only where the paste holds nothing but the user's words. Any program's line (a scheduler's
# time limit, a site's notice, an MPI launcher's report) names its own cause, which rules read.
_KILLED_SAID = "prose:process-killed-said"
# The families of the user's own words (prose.toml, prose_os.toml, the faq_*.toml documents): a paste of
# nothing else holds no program's line that would name who killed the process.
_USERS_WORDS = ("prose:", "prose_", "faq_")
_SIGKILL_STATUS = ("exitstatus:SIGKILL", "signals:SIGKILL")
_DOCKER_SAID = frozenset({"prose:docker-said"})


def _killed_said(f: FactView) -> Iterator[Hit]:
    symptoms = f.get("ticket.symptoms") or []
    s = next((t for t in symptoms if t.get("id") == _KILLED_SAID and stated(t)), None)
    # An exit status of 137 (128 + SIGKILL) says as much as the user's "killed": the signal, not its sender
    # (or the shell's own job status, "Killed", signals.toml), with nothing else a program printed
    status = next((t for t in symptoms if t.get("id") in _SIGKILL_STATUS), None)
    if status is not None and all(str(t.get("id", "")).startswith(_USERS_WORDS) or t is status for t in symptoms):
        docker = any(t.get("id") in _DOCKER_SAID for t in symptoms)
        what = "exit code 137 is SIGKILL" if status["id"] == "exitstatus:SIGKILL" else "the process was killed by SIGKILL"
        # conda's own spinner on the killed line (knowledge/line_prefixes.toml): the kill came while conda
        # solved or fetched, which reads every channel's package index into memory at once
        solving = "solving environment" in str(status.get("text", "")).lower()
        yield Hit(message=f"line {status.get('line')}: \"{told_text(status)}\": {what}"
                          + (" while conda solved the environment (it reads every channel's package index into memory)"
                             if solving else "")
                          + ", and nothing in the paste says who sent it: the kernel's out-of-memory killer (the host's, or "
                          "a container's or job's memory limit, or a login node's per-user one) kills that way, as do a batch "
                          "system's limits and kill -9; the kernel's log, "
                          + ("docker inspect" if docker else "the scheduler's record") + " say which",
                  fix=(("docker inspect --format '{{.State.OOMKilled}} {{.State.ExitCode}}' CONTAINER   # true: the "
                        "container's memory limit (or the host's memory) killed it\n" if docker else "")
                       + "journalctl -k | grep -iE 'out of memory|oom-kill|killed process'   # or dmesg -T: the kill, the "
                         "process and its memory (anon-rss)\n"
                       + ("srun --mem=16G --pty bash   # on a cluster: solve inside a job with memory, not on a login node "
                          "whose limits kill large processes; then the same conda command\n" if solving else "")
                       + "free -g   # what the host has; if it was the OOM killer: more memory (docker run --memory, "
                         "sbatch --mem) or less held at once"),
                  evidence=told_evidence(status), severity="info")
        return
    if s is None or any(not str(t.get("id", "")).startswith(_USERS_WORDS) for t in symptoms):
        return
    yield Hit(message=f"the user says the process was killed, and nothing in the paste says by whom (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): the kernel's out-of-memory killer ends a process with SIGKILL and no message "
                      "of the process's own, the shell printing only \"Killed\"; its log says whether it was that",
              fix=("journalctl -k | grep -iE 'out of memory|oom-kill|killed process'   # or dmesg -T: the kill, the process "
                   "and its memory (anon-rss)\n"
                   "free -g   # what the host has; if it was the OOM killer: run on a host with more memory, or hold less at once"),
              evidence=told_evidence(s), severity="info")


def _killed_loading_said(s: dict) -> Hit:
    return Hit(message=f"the user says the process was killed while it loaded a model (line {s.get('line')}: "
                       f"\"{told_text(s)}\"): the usual cause (accelerate's big-model guide) is host memory: loading "
                       "holds the model about twice in RAM, and the kernel's out-of-memory killer ends the process",
               fix=("journalctl -k | grep -iE 'out of memory|oom-kill|killed process'   # or dmesg -T: the kill, the "
                    "process and its memory\n"
                    "# then load on a host with more free memory (free -g), or let the weights go straight to the GPU: "
                    "from_pretrained(..., device_map=\"auto\", low_cpu_mem_usage=True)"),
               evidence=told_evidence(s), severity="info")


# The compiler drivers' words for a job killed by SIGKILL (knowledge/messages/build.toml): the rest of
# that family (other signals, ninja's and torch's generic lines) feeds no rule.
_BUILD_KILLED = "build:"
# The compilers those drivers run, as the kernel names a process (comm): GCC's compilers proper, nvcc's
# tools, clang's frontend (build.toml's sources).
_COMPILERS = frozenset({"cc1", "cc1plus", "lto1", "cicc", "ptxas", "cudafe++", "clang", "clang++"})
# The kernel's lines naming the process its OOM killer killed, in each kernel's wording (oom.toml).
_KERNEL_KILL_LINES = frozenset({"oom:kernel-oom-killed-process", "oom:kernel-oom-kill-process-old",
                                "oom:kernel-oom-killed-process-old", "oom:oom-reaper-reaped"})

# A container's own memory limit, as the runtime or Kubernetes reports the kill (knowledge/messages/
# container_oom.toml); the kubelet's SystemOOM event is the node's memory, read as the kernel's line.
_CONTAINER_KILLED = "container_oom:"
_CONTAINER_FIX = ("kubectl get pods -A | grep -E 'OOMKilled|CreateContainerError|CrashLoopBackOff'   # the pod and its namespace\n"
                  "kubectl get pods -A -o custom-columns='NAMESPACE:.metadata.namespace,POD:.metadata.name,"
                  "LIMIT:.spec.containers[*].resources.limits.memory'   # each pod's containers' memory limit\n"
                  "# then raise that container's resources.limits.memory (its Deployment, or the chart's values) "
                  "above what it uses; docker run: --memory")


def _container_killed(s: dict) -> Hit:
    if s.get("key") == "kubelet-system-oom":
        what = "the kubelet saw the kernel kill a process outside any pod's limit: the node itself ran out of memory"
        fix = ("kubectl describe nodes | grep -E 'SystemOOM|MemoryPressure'   # which nodes, how often\n"
               "kubectl top nodes   # what each node's memory holds now (metrics-server)\n"
               "# then set pods' resources.requests.memory to what they use, so the scheduler does not overfill the node")
    elif s.get("key") == "kubelet-evicted-node-low-on-memory":
        what = ("the kubelet evicted the pod because the node ran low on memory (its eviction threshold): pods using more "
                "memory than they requested go first")
        fix = ("kubectl get pods -A | grep Evicted   # the pods evicted and their namespaces\n"
               "kubectl describe nodes | grep -E 'MemoryPressure|memory.available'   # which nodes, how often\n"
               "# then set the pod's resources.requests.memory to what it uses (and a limit), so the scheduler "
               "does not overfill the node")
    elif s.get("key") == "docker-inspect-oomkilled-true":
        what = ("docker recorded the container as killed by the kernel's OOM killer for its memory limit: the limit it "
                "was given (docker run -m, compose mem_limit) is below what the program needs")
        fix = ("docker inspect -f '{{.Name}} OOMKilled={{.State.OOMKilled}} limit={{.HostConfig.Memory}}' "
               "$(docker ps -aq --filter exited=137)   # the containers killed, and each one's limit in bytes (0: none)\n"
               "# then run it with a higher limit (docker run -m 16g, compose mem_limit) or let it use less")
    else:
        what = (f"the container was killed for its memory limit ({s.get('key')}): the limit the pod or container was "
                "given is below what the program (or, at start, the runtime's init) needs; the host may have memory to spare")
        fix = _CONTAINER_FIX
    return Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=ticket_evidence(s))


# torch's strsignal() text for SIGKILL in "DataLoader worker (pid N) is killed by signal: Killed".
_SIGKILL_TEXT = "Killed"


@rule("MEM006", "host-memory-oom-killed", "warning", "a process killed because host memory ran out", impact=8,
      also={"info": "read from the user's words (killed while loading a model): the documented usual cause; or an "
                    "exit status of 137 or the shell's \"Killed\" alone, SIGKILL whose sender the node's log tells"})
def host_memory_oom_killed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a kill for memory: the kernel's OOM killer ("Out of memory: Killed process
        N (python)", "Memory cgroup out of memory: Killed process ...", "python invoked
        oom-killer", "oom-kill:constraint=...", "oom_reaper: reaped process N (python)", and the
        older kernels' wording: "Out of memory: Kill process N (python)
        score S or sacrifice child", "Killed process N (python) total-vm:..."; mm/oom_kill.c), Slurm's count of them ("Detected 1
        oom_kill event in StepId=123.batch. Some of the step tasks have been OOM Killed.", and
        22.05's "oom-kill event(s)"; srun's "task 0: Out Of Memory"; the job's own accounting record
        in state OUT_OF_MEMORY: scontrol's JobState=OUT_OF_MEMORY or Reason=OutOfMemory, a sacct row,
        seff's "State: OUT_OF_MEMORY (exit code 0)", slurmctld's mail "Run time T, OUT_OF_MEMORY";
        knowledge/messages/slurm_job_state.toml), or torch's "DataLoader
        worker (pid N) is killed by signal: Killed." (SIGKILL, which is what the OOM killer sends;
        a Bus error there is shm-too-small's), or the shell's "Killed" (SIGKILL) printed right
        after transformers' "Loading checkpoint shards" progress bar. A user who says the process
        was killed while it loaded a model or checkpoint is answered at severity info with the
        cause accelerate's big-model guide gives: loading holds the model twice in host RAM.
        In a source build, a compiler killed by SIGKILL as its driver reports it: GCC's "c++: fatal
        error: Killed signal terminated program cc1plus", nvcc's "nvcc error   : 'cicc' died due to
        signal 9 (Kill signal)" (or ptxas, cudafe++), clang's "clang: error: unable to execute
        command: Killed" (knowledge/messages/build.toml), or the kernel's OOM line naming a compiler as
        its victim ("Killed process N (cc1plus)"). Other signals (Terminated, Segmentation fault,
        signal 11) are not memory and say nothing here.
        A container killed for its own memory limit, as its runtime or Kubernetes says it: runc's
        "container init was OOM-killed (memory limit too low?)", crun's "OOM: the memory limit could be
        too low", the reason OOMKilled that containerd and CRI-O give (a kubectl get pods row's
        STATUS, kubectl describe's "Reason: OOMKilled"), and the kubelet's node event "System OOM
        encountered, victim process: ..." (knowledge/messages/container_oom.toml). A kill by a
        user-space memory monitor, which the kernel log does not show: Ray's "ray.exceptions.
        OutOfMemoryError: Task was killed due to the node running low on memory." and the raylet's
        "N Workers (tasks / actors) killed due to memory pressure (OOM)", Dask's nanny "Worker ...
        exceeded 95% memory budget. Restarting", systemd-oomd's "Killed <cgroup> due to memory
        pressure for ..." (or "Marked ... for killing", "due to swap used"), earlyoom's "sending
        SIGTERM to process N uid U "python": ..." (knowledge/messages/memory_monitors.toml); the
        kubelet's eviction for the node's memory ("The node was low on resource: memory. Container X
        was using ...") and docker inspect's "OOMKilled": true (container_oom.toml). A user who names
        the OOM killer as what ended the process ("the Linux OOM killer reaps my process") is quoted
        back at severity info, with the command that shows the kernel's own line; so is one who says
        a source build takes all of the host's memory or RAM (with the build's MAX_JOBS line), and
        one who says only that the process was killed, where nothing else in the paste (no program's
        line: a scheduler's time limit, a site's notice) says by whom, and an exit status of 137
        (128 + SIGKILL: "exited with code 137") or the shell's own job status "Killed" (a signal's
        strsignal text alone on its line, signals.toml) with nothing else read. A notebook kernel that died, in
        Jupyter's words ("The kernel appears to have died. It will restart automatically.", "The
        kernel for <path> appears to have died.", "The kernel has died, and the automatic restart has
        failed.", the server's "KernelRestarter: restarting kernel (1/5)";
        knowledge/messages/jupyter_kernel.toml) or in the user's with memory named ("after using up 1
        GB of memory on JupyterHub, the kernel fails"), is answered at severity info: Jupyter sees the
        process gone, not why, and a crash in native code ends it too.

    Why it matters:
        The process did not crash: the kernel killed it because the host, or the job's memory
        cgroup (a Slurm allocation, a container's limit), had no memory left. Each DataLoader
        worker is a copy of the main process and holds its own batches, so memory grows with
        num_workers and prefetch_factor; the same script runs with fewer workers or more memory.
        A source build (pip install flash-attn, apex, xformers, a torch C++/CUDA extension) runs
        ninja with as many compiler jobs as CPUs, each taking several GB: the kernel kills one.

    How to fix:
        Confirm the kill in the kernel log (journalctl -k or dmesg: "Killed process"), or under
        Slurm with sacct (State OUT_OF_MEMORY, MaxRSS against ReqMem). Then ask for more memory
        (sbatch --mem / --mem-per-cpu), or lower the DataLoader's num_workers (0 loads in the main
        process) and prefetch_factor, or the batch size. For a build: rerun it with fewer parallel
        jobs, MAX_JOBS=N (torch's cpp_extension passes it to ninja as -j), N computed from the
        node's memory and CPUs where they are known; for flash-attn, a prebuilt wheel from its releases.
        For a container: raise its resources.limits.memory (docker run --memory) above what it uses.

    References:
        - https://github.com/torvalds/linux/blob/master/mm/oom_kill.c
        - https://github.com/SchedMD/slurm/blob/master/src/plugins/task/cgroup/task_cgroup_memory.c
        - https://github.com/opencontainers/runc/blob/00b3a7fd96e87d6ed754d70b89b821f9ce2733cd/libcontainer/process_linux.go (container init was OOM-killed)
        - https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html (Ray's memory monitor)
        - https://github.com/dask/distributed/blob/40fcd99a8cd41c39071a16a546e93a9298f1b64d/distributed/worker_memory.py (the nanny's terminate fraction)
        - https://github.com/systemd/systemd/blob/0377c44b22dd2479fa68e328f42b25aa69723c8d/src/oom/oomd-manager.c (systemd-oomd's kills)
        - https://kubernetes.io/docs/tasks/configure-pod-container/assign-memory-resource/ (a container past its memory limit: OOMKilled)
        - https://pytorch.org/docs/stable/data.html#multi-process-data-loading
        - https://github.com/hezhangsprinter/DCPDN/issues/12 (workers killed on a 16 GB host; num_workers=0 ran)
        - https://github.com/huggingface/accelerate/blob/5ec6c8e0539e6e30c98a10116ef454cdf757ea99/docs/source/usage_guides/big_modeling.md
        - https://github.com/gcc-mirror/gcc/blob/0084cade1f833d7a34ebdfbf43b53b002e6ce37d/gcc/gcc.cc (execute: SIGKILL "the user or OOM killer nuked it")
        - https://github.com/Dao-AILab/flash-attention/blob/014c349eb1c523f9a97d51ea1880486aeeee4a2e/README.md (MAX_JOBS below 96 GB of RAM)
        - https://github.com/pytorch/pytorch/blob/main/torch/utils/cpp_extension.py (_get_num_workers reads MAX_JOBS)
        - https://github.com/Dao-AILab/flash-attention/blob/00291362dbd8c9ab3594e80c2f8faab8a478b9e1/setup.py (prebuilt wheels from its releases)
    """
    told = catalogued(f, "host-memory-oom-killed")
    build = next((s for s in told if str(s.get("id", "")).startswith(_BUILD_KILLED)), None)
    # The kernel's own line names its victim: a compiler it killed is the same build, told by the kernel.
    build = build or next((s for s in told if s.get("id") in _KERNEL_KILL_LINES
                           and s.get("comm") in _COMPILERS), None)
    if build is not None:
        # The compiler's driver names the kill; the kernel's line, where pasted too, is the same event.
        yield Hit(message=f"a compiler job of a source build was killed by SIGKILL ({build.get('prog') or build.get('comm') or 'the compiler'}, "
                          f"line {build.get('line')}: \"{told_text(build)}\"), the signal the kernel's out-of-memory "
                          "killer sends: the build ran more parallel compiler jobs than host memory holds",
                  fix=build_fix(f), evidence=told_evidence(build))
        return
    # What a program printed (the kernel, Slurm, torch, the shell) says more than the user's words.
    said = next((s for s in told if s.get("id") in _KILLED_LOADING_SAID), None)
    killer_said = next((s for s in told if s.get("id") == _OOM_KILLER_SAID and stated(s)), None)
    build_said = next((s for s in told if s.get("id") in _BUILD_MEMORY_SAID and stated(s)), None)
    kernel = kernel_died_hint([s for s in told if is_kernel_line(s)])
    told = [s for s in told if s.get("id") not in _KILLED_LOADING_SAID and s.get("id") != _OOM_KILLER_SAID
            and s.get("id") not in _BUILD_MEMORY_SAID and not is_kernel_line(s)]
    worker = next((s for s in f.get("ticket.symptoms") or []
                   if s.get("id") == "torch:dataloader-killed-by-signal" and s.get("signal") == _SIGKILL_TEXT), None)
    s = told[0] if told else worker
    if s is None:
        if said is not None:
            yield _killed_loading_said(said)
        elif killer_said is not None:
            yield Hit(message=f"the user says the kernel's out-of-memory killer ended the process (line {killer_said.get('line')}: "
                              f"\"{told_text(killer_said)}\"): the host, or the job's or container's memory limit, ran out",
                      fix=("journalctl -k | grep -iE 'out of memory|oom-kill|killed process'   # or dmesg -T: the kill, the "
                           "process and its memory (anon-rss)\n"
                           "free -g   # what the host has; then run with less data in memory at once, or on a host with more"),
                      evidence=told_evidence(killer_said), severity="info")
        elif build_said is not None:
            yield Hit(message=f"the user says a source build takes all of the host's memory (line {build_said.get('line')}: "
                              f"\"{told_text(build_said)}\"): ninja runs as many compiler jobs as there are CPUs, each "
                              "taking several GB, until the kernel's out-of-memory killer ends one or the host stalls",
                      fix=build_fix(f), evidence=told_evidence(build_said), severity="info")
        elif kernel is not None:
            yield kernel
        else:
            yield from _killed_said(f)
        return
    # job_quoted: the id of a slurmstepd line quoted from "in StepId=" on (oom.toml)
    jobid = next((t.get("jobid") or t.get("job_quoted") for t in told if t.get("jobid") or t.get("job_quoted")), None)
    # Slurm's own accounting record (scontrol's JobState=, sacct's State, seff's State:, its mail):
    # the scheduler says the job ended OUT_OF_MEMORY, whatever the paste's host.
    recorded = s.get("family") in _SLURM_RECORDS
    if jobid or recorded or f.get("scheduler.kind") == "slurm":
        # A record read after the job ended names no $SLURM_JOB_ID: the user's jobs that ended so lately.
        job = f"-j {jobid}" if jobid else ("-u $USER -S now-7days -s OUT_OF_MEMORY" if recorded else "-j $SLURM_JOB_ID")
        fix = (f"sacct {job} -o JobID,State,ReqMem,MaxRSS   # OUT_OF_MEMORY, and what each step used against what "
               "it asked for\n# then resubmit with more memory (sbatch --mem=... or --mem-per-cpu=...), or fewer "
               "DataLoader workers (num_workers)")
    else:
        fix = ("journalctl -k | grep -iE 'out of memory|oom-kill|killed process'   # or dmesg -T: the kill, the "
               "process and its memory\n# then give the job more memory, or fewer DataLoader workers (num_workers=0 "
               "loads in the main process) and a smaller prefetch_factor or batch")
    if s.get("key") == "shell-killed-loading-checkpoint-shards" and not (jobid or f.get("scheduler.kind") == "slurm"):
        fix = ("journalctl -k | grep -iE 'out of memory|oom-kill|killed process'   # or dmesg -T: the kill, the "
               "process and its memory\n# then load on a host with more free memory (free -g), or let the weights go "
               "straight to the GPU: from_pretrained(..., device_map=\"auto\")")
    if str(s.get("id", "")).startswith(_CONTAINER_KILLED):
        yield _container_killed(s)
        return
    if str(s.get("id", "")).startswith(MONITOR_KILLED):
        yield monitor_killed(s)
        return
    if s is worker:
        what = "a DataLoader worker was killed by SIGKILL, the signal the kernel's out-of-memory killer sends"
    elif s.get("key") == "shell-killed-loading-checkpoint-shards":
        what = ("the process was killed by SIGKILL (the shell's \"Killed\") while it read checkpoint shards into "
                "memory, the signal the kernel's out-of-memory killer sends")
    elif recorded:
        what = ("Slurm recorded the job as OUT_OF_MEMORY: the kernel's out-of-memory killer ended a process "
                "inside the job's memory cgroup")
    else:
        what = f"the kernel killed a process because memory ran out ({s.get('key')})"
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"): the host or "
                      "the job's memory limit was exhausted",
              fix=fix, evidence=ticket_evidence(s))
