"""Limits of the system a job ran into, not faults of its GPU or its program: Slurm ending the job
(its time limit, a preemption, a failed node), a disk quota or a full file system, and the process
and thread limit. Read from the catalogues (slurm_job_end.toml, slurm_reasons.toml, oslimits.toml,
threads.toml, conda.toml) in a paste, and on a live node from checks/limits.py: the free space and
inodes of the file systems a run writes to, and RLIMIT_NPROC against the threads the job will start."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, local_ranks, nccl_shm_cause, parse_threads, ticket_evidence, told_text
from hpcdoctor.rules.memory import torch_shm_message


def _told_all(f: FactView, symbol: str) -> list:
    """Every pasted line whose catalogue entry feeds ``symbol`` (catalogued() keeps one per entry),
    so that a line naming a path is found after an earlier one that names none."""
    return [s for s in f.get("ticket.symptoms") or [] if isinstance(s, dict) and symbol in (s.get("rules") or [])]


def _job_of(told) -> str:
    return next((str(s["job"]).split(".")[0] for s in told if s.get("job")), "")


def _sacct(job: str, fields: str, state: str) -> str:
    """sacct for the job the paste names, else the user's jobs of the last week that ended that way
    (sacct(1): -S accepts now-<count>days)."""
    if job:
        return f"sacct -j {job} -o {fields}"
    return f"sacct -u $USER -S now-7days -s {state} -o {fields}"


# The other batch systems' words for the same end (pbs_job_end.toml, lsf.toml, sge.toml): what each
# shows of the time used against the limit, and where the job asks for more (qsub(1B) -l walltime,
# bsub -W, qsub -l h_rt; the queue's ceiling in qstat -Qf resources_max.walltime, bqueues -l RUNLIMIT,
# qconf -sq h_rt).
_OTHER_SCHEDULERS = {
    "pbs_job_end": ("PBS", "qstat -x -f -u $USER | grep -E 'Job Id|resources_(used|List)\\.walltime'   # the time used against "
                           "the limit (TORQUE: finished jobs stay only for keep_completed; tracejob then)\n"
                           "qstat -Qf | grep -E 'Queue:|resources_(max|default)\\.walltime'   # the most a job may ask for, and "
                           "what it gets without asking\n"
                           "#PBS -l walltime=48:00:00   # in the job script (and in every job a workflow submits), up to resources_max"),
    "lsf": ("LSF", "bjobs -l -d -u $USER | grep -E 'Job <|RUNLIMIT|TERM_'   # the run limit of the jobs that ended lately\n"
                   "bqueues -l | grep -E '^QUEUE|RUNLIMIT' -A1   # each queue's limit\n"
                   "#BSUB -W 48:00   # in the job script, up to the queue's RUNLIMIT"),
    "sge": ("Grid Engine", "qacct -o $USER -d 7 -j | grep -E '^(jobnumber|ru_wallclock|failed|category)'   # the time used and the "
                           "h_rt each job had\n"
                           "qconf -sql | xargs -n1 qconf -sq | grep -E '^(qname|h_rt)'   # each queue's limit\n"
                           "#$ -l h_rt=48:00:00   # in the job script, up to the queue's h_rt"),
}
_CHECKPOINT = "# longer than the queue allows: checkpoint, then resubmit with a dependency on this job"


@rule("ENV021", "slurm-time-limit", "error", "Slurm ended the job at its time limit", impact=7)
def slurm_time_limit(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, slurmstepd's "*** JOB n ON host CANCELLED AT t DUE TO TIME LIMIT ***" (and
        the STEP form, and Slurm 14's "... DUE TO TIME LIMIT on host"), salloc's "Job n has exceeded
        its time limit and its allocation has been revoked", a sacct row in state TIMEOUT, or
        scontrol's Reason=TimeLimit. The same end under the other batch systems: a PBS MOM's
        "=>> PBS: job killed: walltime N exceeded limit M" (TORQUE, OpenPBS, PBS Pro) and their
        mails' "Job exceeded its walltime limit", LSF's "TERM_RUNLIMIT: job killed after reaching
        LSF run time limit", Grid Engine's execd "job n.1 exceeded hard wallclock time".

    Why it matters:
        The program did not fail: the scheduler stopped it when the time the job asked for
        (--time, -l walltime, bsub -W, -l h_rt), or the queue's default when it asked for none,
        ran out. Work since the last checkpoint is lost, and a rerun with the same request ends
        the same way. Jobs that a workflow tool submits (sub-jobs) often carry no time request and
        get the default, however long the parent asked for.

    How to fix:
        The scheduler's accounting shows the time used against the limit; ask for more in the job
        script up to the partition's or queue's maximum; beyond it, checkpoint and resubmit.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/req.c
        - https://slurm.schedmd.com/sbatch.html#OPT_time
        - https://slurm.schedmd.com/sacct.html
        - https://github.com/marbl/canu/issues/1052 (sub-jobs without --time got the one-hour default)
        - https://github.com/openpbs/openpbs/blob/cd7ab5edaf03dcac2f1cb9e2f42d75eb117d468a/src/resmom/mom_main.c (job_over_limit)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/resmom/linux/mom_mach.c
        - https://www.ibm.com/docs/SSWRJV_10.1.0/lsf_admin/termination_reasons_lsf.html (TERM_RUNLIMIT)
        - https://github.com/gridengine/gridengine/blob/f47b0e0a22483847008777ef18a78c29b7001f66/source/daemons/execd/msg_execd.h
    """
    told = catalogued(f, "slurm-time-limit")
    if not told:
        return
    s = told[0]
    other = _OTHER_SCHEDULERS.get(str(s.get("family")))
    if other:
        name, fix = other
        yield Hit(message=f"{name} stopped the job when its time limit ran out (line {s['line']}: \"{told_text(s)}\"): "
                          "not a failure of the program; the limit is the job's own walltime request, or the queue's "
                          "default when the job (or a sub-job a workflow submitted) asked for none",
                  fix=fix + "\n" + _CHECKPOINT, evidence=ticket_evidence(s))
        return
    job = _job_of(told)
    yield Hit(message=f"Slurm stopped the job when its time limit ran out (line {s['line']}: \"{told_text(s)}\"): "
                      "not a failure of the program; the limit is the job's --time, or the partition's DefaultTime "
                      "when the job (or a sub-job a workflow submitted) asked for none",
              fix=(_sacct(job, "JobID,State,Elapsed,Timelimit", "TIMEOUT") + "   # the time used against the limit it had\n"
                   "scontrol show partition   # MaxTime: the most a job may ask for; DefaultTime: what it gets without --time\n"
                   "#SBATCH --time=1-00:00:00   # in the job script (and in every job a workflow submits), up to MaxTime\n"
                   "# longer than MaxTime: checkpoint, then resubmit with sbatch --dependency=afterany:<jobid> job.sh"),
              evidence=ticket_evidence(s))


@rule("ENV022", "slurm-job-preempted", "warning", "Slurm preempted the job for one of higher priority", impact=6)
def slurm_job_preempted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, slurmstepd's "*** JOB n ON host CANCELLED AT t DUE TO PREEMPTION ***", or a
        sacct row in state PREEMPTED.

    Why it matters:
        The job ran in a partition or QOS whose jobs may be cancelled (or requeued) to make room for
        jobs of higher priority (PreemptMode). Nothing is wrong with the job or the node; it will end
        the same way whenever the higher-priority work arrives.

    How to fix:
        Run where jobs are not preempted (another partition or QOS), or accept it: checkpoint and
        submit with --requeue so that Slurm restarts the job.

    References:
        - https://slurm.schedmd.com/preempt.html
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/req.c
        - https://github.com/SystemsGenetics/GEMmaker/pull/242 (a preempted job; retries)
    """
    told = catalogued(f, "slurm-job-preempted")
    if not told:
        return
    s = told[0]
    job = _job_of(told)
    yield Hit(message=f"Slurm preempted the job for one of higher priority (line {s['line']}: \"{told_text(s)}\"): "
                      "neither the program nor the node failed",
              fix=(_sacct(job, "JobID,State,Partition,QOS,Elapsed", "PREEMPTED") + "   # where it ran\n"
                   "scontrol show partition   # PreemptMode and PriorityTier of each partition: choose one whose jobs are not preempted\n"
                   "#SBATCH --requeue   # or stay, checkpoint, and let Slurm restart the job after a preemption"),
              evidence=ticket_evidence(s))


@rule("SYS007", "slurm-node-failure", "error", "Slurm ended the job because a node of its allocation failed", impact=7)
def slurm_node_failure(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, slurmstepd's "*** JOB n ON host CANCELLED AT t DUE TO NODE FAILURE, SEE
        SLURMCTLD LOG FOR DETAILS ***" (Slurm 14: "DUE TO NODE host FAILURE"), a sacct row in state
        NODE_FAIL, or scontrol's Reason=NodeDown.

    Why it matters:
        A node of the allocation stopped answering slurmctld (it rebooted, lost its network, or its
        slurmd died), and Slurm ended the job on every node. The program is not at fault; the same
        node may fail the next job too.

    How to fix:
        sacct names the nodes; scontrol show node gives the reason Slurm recorded. Resubmit without
        that node (--exclude) or with --requeue, and tell the administrators.

    References:
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmd/slurmstepd/req.c
        - https://slurm.schedmd.com/sbatch.html#OPT_requeue
    """
    told = catalogued(f, "slurm-node-failure")
    if not told:
        return
    s = told[0]
    job = _job_of(told)
    node = next((t.get("failed") or t.get("node") for t in told if t.get("failed") or t.get("node")), None)
    if node == "...":
        node = None  # elided by the reporter
    yield Hit(message=f"Slurm ended the job because a node of its allocation failed (line {s['line']}: \"{told_text(s)}\"): "
                      "not the program's fault; the node's reason is in slurmctld's records",
              fix=(_sacct(job, "JobID,State,NodeList,Elapsed", "NODE_FAIL") + "   # the nodes it ran on\n"
                   + (f"scontrol show node {node}   # State and Reason Slurm recorded for the node\n"
                      f"sbatch --exclude={node} job.sh   # resubmit away from it (or #SBATCH --requeue), and tell the administrators"
                      if node else
                      "sinfo -R   # the nodes Slurm holds down or drained, with the reason it recorded\n"
                      "sbatch --exclude=NODE job.sh   # resubmit away from the failed node (or #SBATCH --requeue), and tell the administrators")),
              evidence=ticket_evidence(s))


# ---- file systems ------------------------------------------------------------------------------

_QUOTED_PATH = re.compile(r"""['"`](/[^'"`\s]{1,300})['"`]|(?<![\w.])(/(?:home|scratch|work|project|projects|data|gpfs|lustre|tmp|var|opt|nfs|mnt|u|users)\b[^\s'":]{0,300})""")
# The caches a run fills under $HOME and the variable that moves each (read in their source on
# 2026-11-26: huggingface_hub 2.4.0 constants.py HF_HOME, pip 23.2.1 PIP_CACHE_DIR through
# platformdirs, torch 2.13.0 torch/hub.py TORCH_HOME; all three default under $XDG_CACHE_HOME, as
# programs that follow the XDG base directory spec do).
_CACHES = ((".cache/huggingface", "HF_HOME"), (".cache/pip", "PIP_CACHE_DIR"), (".cache/torch", "TORCH_HOME"),
           (".cache", "XDG_CACHE_HOME"))


def _path_of(s: dict) -> Optional[str]:
    if s.get("path"):
        return str(s["path"])
    m = _QUOTED_PATH.search(str(s.get("text", "")))
    return (m.group(1) or m.group(2)) if m else None


def _quote(s: dict, needle: str) -> str:
    """The pasted line around its message: a progress bar or prompt before it is cut off."""
    text = str(s.get("text", "")).strip()
    at = text.find(needle)
    start = max(0, at - 70) if at > 70 else 0
    return ("…" if start else "") + text[start:start + 120]


def _where_written(path: Optional[str]) -> str:
    if not path:
        return "the file system the program wrote to (the paste names no path)"
    top = "/" + path.strip("/").split("/")[0] if path.strip("/") else "/"
    for part, var in _CACHES:
        if f"/{part}/" in path + "/":
            moves = (f"{var} moves it" if var != "XDG_CACHE_HOME"
                     else "XDG_CACHE_HOME moves it for programs that follow the XDG base directory spec")
            return f"{path}: a cache under {top} ({moves})"
    return f"{path}, on the file system that holds {top}"


def _move_caches() -> str:
    return ("export HF_HOME=/scratch/$USER/hf PIP_CACHE_DIR=/scratch/$USER/pip TORCH_HOME=/scratch/$USER/torch "
            "XDG_CACHE_HOME=/scratch/$USER/cache   # caches off $HOME, "
            "onto the site's project or scratch file system")


def _shm_only(f: FactView, s: dict) -> bool:
    """A full /dev/shm is shm-too-small's: the line names it, or the paste's shared-memory lines
    (torch's, NCCL's) say it and this line names no other path."""
    text = str(s.get("text", ""))
    if "/dev/shm" in text or "/torch_" in text:
        return True
    if _path_of(s):
        return False
    # NCCL's shared-memory WARN (include/shm.h, shmutils.cc) on this line or, in a paste a mail
    # client wrapped, on the line or two above where the errno's words landed.
    line = s.get("line")
    if isinstance(line, int) and any(
            isinstance(t.get("line"), int) and line - 2 <= t["line"] <= line
            and re.search(r"shm|NCCL WARN", str(t.get("text", "")), re.IGNORECASE)
            for t in f.get("ticket.symptoms") or [] if isinstance(t, dict)):
        return True
    cause = nccl_shm_cause(f)
    return bool(torch_shm_message(f) or (cause and cause["kind"] == "size"))


@rule("SYS004", "home-quota-exceeded", "error", "a disk quota is used up", impact=7)
def home_quota_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, EDQUOT as programs print it: Python's "[Errno 122] Disk quota exceeded:
        '<path>'", and "<what>: Disk quota exceeded" from git, bash, tar, cp and any C program.

    Why it matters:
        The user's (or group's) quota on that file system is used up: every write and every new file
        fails there, whatever the free space of the disk. On clusters the home directory's quota is
        small and the caches of pip, conda, Hugging Face, torch and matplotlib fill it.

    How to fix:
        The site's quota tool (quota, lfs quota on Lustre, mmlsquota on GPFS) shows usage and limit;
        du finds what fills it; move the caches to a project or scratch file system.

    References:
        - https://www.man7.org/linux/man-pages/man3/errno.3.html (EDQUOT)
        - https://github.com/BSC-ES/autosubmit/issues/596 (matplotlib's cache under /home)
        - https://github.com/mikeizbicki/cmc-csci143/issues/459 (git clone and here-documents)
    """
    told = _told_all(f, "home-quota-exceeded")
    if not told:
        return
    s = next((t for t in told if _path_of(t)), told[0])
    path = _path_of(s)
    yield Hit(message=f"a disk quota is used up (line {s['line']}: \"{_quote(s, 'Disk quota exceeded')}\"): writes fail on "
                      f"{_where_written(path)}, however much the disk itself has free",
              fix=("quota -s   # usage and limit; on Lustre: lfs quota -h -u $USER <mount>; GPFS: mmlsquota; or the site's own tool\n"
                   "du -xsh ~/.[!.]* ~/* 2>/dev/null | sort -h | tail   # what fills the home directory\n"
                   "pip cache purge; conda clean --all   # the package caches\n" + _move_caches()),
              evidence=ticket_evidence(s))


def _disk_limits() -> tuple:
    t = knowledge.load("thresholds")["disk"]
    return int(t["min_free_bytes"]), int(t["min_free_inodes"])


@rule("SYS005", "disk-full", "error", "a file system the run writes to is full", impact=7,
      also={"warning": "on a live node: less free space or inodes than one install of torch takes"})
def disk_full(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, ENOSPC as programs print it: Python's "[Errno 28] No space left on device"
        (pip's "Could not install packages due to an OSError"), "<what>: No space left on device"
        from tar, cp, bash and C programs, conda's NoSpaceLeftError. On a live node, a file system
        holding $HOME, the working directory, the temporary directory or a cache (HF_HOME, TORCH_HOME,
        TRITON_CACHE_DIR, pip's, conda's) with less free space, or fewer free inodes, than one
        install of torch takes (knowledge/thresholds.toml [disk]). /dev/shm is shm-too-small's.

    Why it matters:
        Writes fail: a checkpoint is cut short, pip leaves an environment half installed, a
        compile cache cannot be written. A file system out of inodes says "No space left on device"
        with free blocks left.

    How to fix:
        df shows blocks and inodes; free space or point the temporary directory and the caches
        at a file system with room.

    References:
        - https://www.man7.org/linux/man-pages/man3/errno.3.html (ENOSPC)
        - https://github.com/pypa/pip/issues/7751 (pip's temporary and cache directories)
    """
    told = [s for s in _told_all(f, "disk-full") if not _shm_only(f, s)]
    if told:
        s = next((t for t in told if _path_of(t)), told[0])
        path = _path_of(s)
        where = path or '"${TMPDIR:-/tmp}" "$HOME" .'
        yield Hit(message=f"a file system was full (line {s['line']}: \"{_quote(s, 'No space left on device')}\"): writes failed on "
                          f"{_where_written(path)}; a file system out of inodes says the same",
                  fix=(f"df -h {where}; df -i {where}   # free blocks, free inodes\n"
                       "export TMPDIR=/scratch/$USER/tmp   # pip, compilers and torch write temporary files there\n"
                       + _move_caches()),
                  evidence=ticket_evidence(s))
        return
    systems = f["limits.filesystems"]
    min_bytes, min_inodes = _disk_limits()
    unread, found = [], False
    for fs in systems if isinstance(systems, list) else []:
        free, inodes = fs.get("free_bytes"), fs.get("free_inodes")
        if not isinstance(free, int):
            unread.append(f"{', '.join(fs.get('roles') or [])} ({fs.get('error') or 'no free space recorded'})")
            continue
        low_bytes = free < min_bytes
        low_inodes = isinstance(inodes, int) and inodes < min_inodes
        if not (low_bytes or low_inodes):
            continue
        roles = ", ".join(fs.get("roles") or [])
        path = (fs.get("paths") or ["/"])[0]
        said = []
        if low_bytes:
            said.append(f"{free / 2**20:.0f} MiB free")
        if low_inodes:
            said.append(f"{inodes} inodes free")
        full = free == 0 or inodes == 0
        found = True
        yield Hit(message=f"the file system of {roles} ({path}) has {' and '.join(said)}: "
                          f"{'full' if full else 'less than one install of torch takes'}",
                  fix=f"df -h {path}; df -i {path}   # then free space, or point TMPDIR and the caches elsewhere\n" + _move_caches(),
                  severity="error" if full else "warning",
                  evidence={"limits.filesystems": fs, "threshold_bytes": min_bytes, "threshold_inodes": min_inodes})
    if unread and not found:
        # a file system that could not be read is not one with room
        raise MissingFact("limits.filesystems", "statvfs failed for " + "; ".join(unread[:4]))


# ---- processes and threads ---------------------------------------------------------------------

_EAGAIN = "resource temporarily unavailable"


def _told_nproc(f: FactView):
    out = []
    for s in catalogued(f, "nproc-limit-too-low"):
        err, errno = s.get("error"), s.get("errno")
        if (err is not None and str(err).strip().lower() != _EAGAIN) or (errno is not None and str(errno) != "11"):
            continue  # ENOMEM and the like: memory for stacks, not the process limit
        out.append(s)
    return out


def _nproc_fix(soft: Optional[int], hard: Optional[int]) -> str:
    threads = ("export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1   # fewer threads per process: "
               "each one counts against the limit")
    count = "ps -L -u $USER --no-headers | wc -l   # the threads this user runs now on the node, against ulimit -u"
    if soft is None:
        return (f"ulimit -Su; ulimit -Hu   # the soft and hard limits this shell gives the job\n"
                f"ulimit -u $(ulimit -Hu)   # in the job script, before the program starts: the soft limit up to the hard one\n"
                f"{threads}\n{count}")
    if hard is None or soft < hard:
        raise_to = "unlimited" if hard is None else str(hard)
        return f"ulimit -u {raise_to}   # in the job script, before the program starts: the soft limit up to the hard one\n{threads}\n{count}"
    return f"{threads}\n{count}\n# the hard limit itself is the site's (limits.conf, or the job's cgroup pids.max): ask the administrators"


@rule("SYS006", "nproc-limit-too-low", "error", "the process and thread limit (ulimit -u) stops new threads", impact=7,
      also={"warning": "on a live node: the soft limit is below the threads the job will start"})
def nproc_limit_too_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a thread or process that could not be created with EAGAIN: OpenBLAS's
        "blas_thread_init: pthread_create: Resource temporarily unavailable" (0.2.x) or "pthread_create
        failed for thread X of Y: ..." with its "RLIMIT_NPROC n current, m max", libgomp's "Thread
        creation failed: Resource temporarily unavailable", the LLVM/Intel OpenMP runtime's "OMP:
        System error #11", CPython's "can't start new thread", the Go runtime's "failed to create new
        OS thread (... errno=11)", bash's "fork: retry: Resource temporarily unavailable". On a live node (not as root, which
        the limit does not bind), a soft RLIMIT_NPROC below the ranks on the node times the threads
        each starts (OMP_NUM_THREADS, or one per allowed CPU when unset).

    Why it matters:
        RLIMIT_NPROC counts every process and thread of the user on the node, not per job: a
        thread pool of one thread per CPU in every rank and DataLoader worker reaches a limit of a
        few hundred quickly, and the program aborts (OpenBLAS calls exit) or hangs.

    How to fix:
        Raise the soft limit to the hard one (ulimit -u), or start fewer threads
        (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS); a hard limit too low is the site's to raise.

    References:
        - https://www.man7.org/linux/man-pages/man2/getrlimit.2.html (RLIMIT_NPROC)
        - https://github.com/OpenMathLib/OpenBLAS/blob/v0.3.10/driver/others/blas_server.c
        - https://github.com/willsheffler/worms/issues/2 (RLIMIT_NPROC 512 current)
        - https://github.com/muschellij2/fslr/issues/14 (OMP_NUM_THREADS=1)
    """
    told = _told_nproc(f)
    if told:
        s = told[0]
        limit = next((t for t in told if t.get("current")), None)
        soft = int(limit["current"]) if limit else None
        hard = int(limit["max"]) if limit and limit.get("max") else None
        said = f" under RLIMIT_NPROC {soft} (hard {hard})" if limit else ""
        yield Hit(message=f"a thread or process could not be created{said} (line {s['line']}: \"{told_text(s)}\"): "
                          "EAGAIN is the user's process and thread limit (ulimit -u) or the job's cgroup pids.max; "
                          "every thread of every process of the user counts",
                  fix=_nproc_fix(soft, hard),
                  evidence=ticket_evidence(s))
        return
    nproc = f["limits.nproc"]
    if not isinstance(nproc, dict) or nproc.get("uid") == 0 or nproc.get("soft") is None:
        return  # root is not bound by it; an unlimited soft limit binds nothing
    soft, hard = int(nproc["soft"]), nproc.get("hard")
    allowed = f.get("affinity.allowed_count")
    env = f.get("env.vars") or {}
    threads = parse_threads(env.get("OMP_NUM_THREADS")) if isinstance(env, dict) else None
    per_rank = threads or (allowed if isinstance(allowed, int) and allowed > 0 else None)
    if per_rank is None:
        return
    ranks = local_ranks(f)
    need = ranks * per_rank
    if soft < need:
        how = f"OMP_NUM_THREADS={threads}" if threads else f"one thread per allowed CPU ({allowed})"
        yield Hit(message=f"ulimit -u is {soft}: {ranks} rank(s) × {how} = {need} threads on this node, before "
                          "DataLoader workers and the user's other processes",
                  fix=_nproc_fix(soft, hard), severity="warning",
                  evidence={"limits.nproc": nproc, "local_ranks": ranks, "threads_per_rank": per_rank})
