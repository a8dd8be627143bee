"""Limits of the system a job ran into, not faults of its GPU or its program: a disk quota or a full
file system, and the process and thread limit (a batch system ending the job is job_end.py's). Read
from the catalogues (oslimits.toml, disk_quota.toml, threads.toml, conda.toml) in a paste, and on a live node from checks/limits.py: the free space and
inodes of the file systems a run writes to, and RLIMIT_NPROC against the threads the job will start."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import (catalogued, local_ranks, nccl_shm_cause, parse_threads, stated, ticket_evidence,
                                     told_evidence, told_text)
from hpcdoctor.rules.memory import torch_shm_message
from hpcdoctor.rules.shm_segments import SHMGET_FAILED
from hpcdoctor.rules._df_tables import blocks_free, describe, df_rows
from hpcdoctor.rules._quota_tables import describe as describe_quota, quota_rows


def _told_all(f: FactView, symbol: str) -> list:
    """Every pasted line whose catalogue entry feeds ``symbol`` (catalogued() keeps one per entry),
    so that a line naming a path is found after an earlier one that names none."""
    return [s for s in f.get("ticket.symptoms") or [] if isinstance(s, dict) and symbol in (s.get("rules") or [])]


# ---- file systems ------------------------------------------------------------------------------

# A user's sentence that a disk is full (knowledge/messages/prose.toml): quoted back at info, never
# taken for ENOSPC printed by a program.
_DISK_FULL_SAID = "prose:disk-full-said"

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
    """The pasted line around its message: a progress bar or prompt before it is cut off. Go
    programs print the errno's words in lower case (Apptainer's "...: no space left on device")."""
    text = str(s.get("text", "")).strip()
    at = text.lower().find(needle.lower())
    if at < 0 and needle.lower() in str(s.get("matched", "")).lower():
        text = str(s["matched"]).strip()   # a long line kept only in part: the match itself holds the words
        at = text.lower().find(needle.lower())
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


def _apptainer_said(f: FactView) -> bool:
    """The paste shows Apptainer or Singularity at work: it unpacks a SIF's sandbox and OCI layers
    under its own temporary directory, which TMPDIR alone does not move once APPTAINER_TMPDIR is set."""
    for t in f.get("ticket.symptoms") or []:
        if not isinstance(t, dict):
            continue
        sid = str(t.get("id", ""))
        if sid.startswith("apptainer:") or sid in ("container:singularity-command", "faq_containers:singularity-container-said",
                                                   "faq_containers:apptainer-container-said"):
            return True
    return False


# apptainer/apptainer @ 917d6657 cmd/internal/cli/apptainer.go (--tmpdir, EnvKeys "TMPDIR" under the
# APPTAINER_ and legacy SINGULARITY_ prefixes, internal/pkg/util/env/env.go ApptainerPrefixes) and
# internal/pkg/cache/cache.go (DirEnv = "APPTAINER_CACHEDIR").
_APPTAINER_DIRS = ("mkdir -p /scratch/$USER/apptainer/tmp /scratch/$USER/apptainer/cache && "
                   "export APPTAINER_TMPDIR=/scratch/$USER/apptainer/tmp APPTAINER_CACHEDIR=/scratch/$USER/apptainer/cache   "
                   "# where Apptainer unpacks SIF sandboxes and OCI layers (SINGULARITY_TMPDIR, SINGULARITY_CACHEDIR for "
                   "Singularity; or --tmpdir DIR on the command line); in a Slurm job a node-local $TMPDIR with room will do\n")


def _move_caches() -> str:
    return ("export HF_HOME=/scratch/$USER/hf PIP_CACHE_DIR=/scratch/$USER/pip TORCH_HOME=/scratch/$USER/torch "
            "XDG_CACHE_HOME=/scratch/$USER/cache   # caches off $HOME, "
            "onto the site's project or scratch file system")


def _shm_only(f: FactView, s: dict) -> bool:
    """A full /dev/shm is shm-too-small's: the line names it, or the paste's shared-memory lines
    (torch's, NCCL's) say it and this line names no other path."""
    text = str(s.get("text", ""))
    if "/dev/shm" in text or "/torch_" in text or "shmget" in text:
        return True   # shmget's ENOSPC is System V's limits (stale-shm-segments), not a file system
    if _path_of(s):
        return False
    if any(t.get("id") in SHMGET_FAILED and "No space left" in str(t.get("text", ""))
           for t in f.get("ticket.symptoms") or [] if isinstance(t, dict)):
        return True   # a title retelling the shmget failure the log holds: no file system named
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


@rule("SYS004", "home-quota-exceeded", "error", "a disk quota is used up", impact=7,
      also={"warning": "a quota tool marks a figure over its quota (\"*\"): the soft limit may still be in its grace time",
            "info": "the user says a limit on the number of files is reached"})
def home_quota_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, EDQUOT as programs print it: Python's "[Errno 122] Disk quota exceeded:
        '<path>'" (pip's and conda's too), and "<what>: Disk quota exceeded" from git, bash, tar, cp
        and any C program; the kernel's "<dev>: write failed, user file limit reached." (and the
        block, group, project and "exceeded too long" forms); quota's or lfs quota's table with a
        figure marked "*" over its quota (a warning: past the soft limit writes work for the grace
        time); a user saying a limit on the number of files is reached (info). Every row of a pasted
        quota or lfs quota table, and GPFS mmlsquota's rows, are judged against their own soft quota,
        hard limit and grace: at the hard limit, or with the grace spent ("none" in quota's grace
        column, "expired" in mmlsquota's), writes fail (error); over the soft quota within the grace,
        a warning.

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
        - https://github.com/torvalds/linux/blob/v6.1/fs/quota/dquot.c (print_warning; read in Debian's linux-source-6.1 6.1.192)
        - https://sourceforge.net/p/linuxquota/code/ci/master/tree/quota.c (heading, the '*' of a figure over its quota)
        - https://github.com/lustre/lustre-release/blob/master/lustre/utils/lfs.c (print_quota_title, print_quota)
        - https://github.com/NorESMhub/noresm-land-sites-platform/issues/17 (a conda environment past a 100,000-file quota)
        - https://www.ibm.com/docs/en/storage-scale/6.0.1?topic=reference-mmlsquota-command (mmlsquota's columns)
    """
    told = _told_all(f, "home-quota-exceeded")
    rows = quota_rows(f)   # quota's, lfs quota's and mmlsquota's rows, judged against their limits
    if not told and not rows:
        return
    # what a program printed first, then a quota tool's table, then the user's words
    said = [t for t in told if t.get("family") not in ("prose",) and not str(t.get("id", "")).startswith("disk_quota:quota-")]
    marked = [t for t in told if str(t.get("id", "")).startswith("disk_quota:quota-")]
    s = next((t for t in said if _path_of(t)), said[0]) if said else (marked or told or [{}])[0]
    files = any("file" in str(t.get("id", "")) for t in told) or bool(rows and rows[0]["what"] == "files")
    what = "the quota on the number of files (inodes)" if files else "a disk quota"
    fix = _QUOTA_FIX + (_CONDA_FIX if files else "") + (_APPTAINER_DIRS if _apptainer_said(f) else "") + _move_caches()
    if said:
        path = _path_of(s)
        table = f"; {describe_quota(rows[0])}" if rows else ""
        yield Hit(message=f"{what} is used up (line {s['line']}: \"{_quote(s, 'Disk quota exceeded')}\"): writes fail on "
                          f"{_where_written(path)}, however much the disk itself has free{table}",
                  fix=fix, evidence=ticket_evidence(s))
    elif rows:
        r = rows[0]
        yield Hit(message=f"{describe_quota(r)}: " + ("writes fail there (for the files count: every new file), however much the "
                                                      "disk itself has free" if r["blocked"] else
                                                      "writes still work until the grace time runs out or the hard limit is reached"),
                  severity="error" if r["blocked"] else "warning", fix=fix,
                  evidence=dict(ticket_evidence(r), quota_used=r["used"], quota_soft=r["soft"], quota_hard=r["hard"], grace=r["grace"]))
    elif marked:
        yield Hit(message=f"the quota tool marks {'the number of files' if files else 'the space used'} over its quota "
                          f"(line {s['line']}, \"*\" on {s.get('fs') or 'a file system'}): past the soft limit writes still "
                          "work for the grace time; at the hard limit, or with the grace spent (\"none\"), they fail",
                  severity="warning", fix=fix, evidence=ticket_evidence(s))
    else:
        yield Hit(message=f"the ticket says a limit on the number of files is reached (\"{str(s.get('matched') or told_text(s))[:120]}\"): "
                          "the usual cause (sites' file-count quotas on home and project file systems) is a conda "
                          "environment or a package cache of tens of thousands of files; the quota tool's files column confirms it",
                  severity="info", fix=fix, evidence=ticket_evidence(s))


# quota(1) and lfs quota print a files column beside the space (disk_quota.toml); GNU du counts
# inodes with --inodes; conda's envs_dirs and pkgs_dirs move its environments and package cache.
_QUOTA_FIX = ("quota -s   # usage and limit, space and files; on Lustre: lfs quota -h -u $USER <mount>; GPFS: mmlsquota; "
              "or the site's own tool\n"
              "du -xsh ~/.[!.]* ~/* 2>/dev/null | sort -h | tail   # what fills the home directory "
              "(du --inodes -x -d1 ~ | sort -n | tail: what holds the files)\n"
              "pip cache purge; conda clean --all   # the package caches\n")
_CONDA_FIX = ("conda config --add envs_dirs /project/$USER/conda/envs; conda config --add pkgs_dirs /project/$USER/conda/pkgs   "
              "# new environments off $HOME, on a file system with a larger file quota (or pack one: conda-pack, a container image)\n")


def _disk_limits() -> tuple:
    t = knowledge.load("thresholds")["disk"]
    return int(t["min_free_bytes"]), int(t["min_free_inodes"])


@rule("SYS005", "disk-full", "error", "a file system the run writes to is full", impact=7,
      also={"warning": "on a live node: less free space or inodes than one install of torch takes; TORQUE 2.5's "
                       "\"cannot write job command file\": the PBS server's spool, the errno unsaid; Slurm's \"I/O error "
                       "writing script/environment to file\": slurmctld's StateSaveLocation, the errno unsaid",
            "info": "the user's words that a disk is full, no program's line"})
def disk_full(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, ENOSPC as programs print it: Python's "[Errno 28] No space left on device"
        (pip's "Could not install packages due to an OSError"), "<what>: No space left on device"
        from tar, cp, bash and C programs, conda's NoSpaceLeftError, and Go programs' lower-case
        "write <path>: no space left on device" (Apptainer/Singularity unpacking a SIF or OCI layers
        under its temporary directory: the fix then moves APPTAINER_TMPDIR). On a live node, a file system
        holding $HOME, the working directory, the temporary directory or a cache (HF_HOME, TORCH_HOME,
        TRITON_CACHE_DIR, pip's, conda's) with less free space, or fewer free inodes, than one
        install of torch takes (knowledge/thresholds.toml [disk]). /dev/shm is shm-too-small's. A
        user who only says a disk is full ("gpu-2-9 disk is full, jobs that need space in /tmp are
        failing") is quoted back at severity info with the df that shows it. A pasted df or df -i
        table (knowledge/messages/df_tables.toml, every coreutils header layout) with a row at 100%
        is a full file system, of space under Use%/Capacity or of inodes under IUse% (then said so:
        blocks free, the fix counts files); a 99% row is read only beside a write that failed for
        space. Snaps' squashfs loop images, optical media and overlay mounts are full by design and
        never a finding. TORQUE's pbs_server refusing qsub because it could not write the job's
        file or script into its own spool (server_priv/jobs on the server host): "MSG=cannot write
        to file ... (28-No space left on device)" and its open/create forms, an error; TORQUE
        2.5's bare "MSG=cannot write job command file", a warning (no errno printed): the fix
        points at the server host's PBS_HOME, not the user's directories. Slurm's sbatch refused with
        ESLURM_WRITING_TO_FILE ("I/O error writing script/environment to file"): slurmctld could not
        create or write the job's directory, script or environment under StateSaveLocation on the
        controller host, a warning (the errno is in slurmctld's log only): the fix reads where that is.

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
        - https://github.com/golang/go/blob/2bd616b1a7d2544e05d55141b6575f17a9b17263/src/syscall/zerrors_linux_amd64.go (Go's errno words)
        - https://github.com/apptainer/apptainer/blob/917d66577963ca297352a22e13c86f1748ddc645/internal/pkg/runtime/launch/launcher_linux.go (the SIF's temporary sandbox)
        - https://apptainer.org/docs/user/main/build_env.html#temporary-folders (APPTAINER_TMPDIR, APPTAINER_CACHEDIR)
        - https://www.gnu.org/software/coreutils/manual/html_node/df-invocation.html (df's columns, -i, -h, -P)
        - https://github.com/python/psf-chef/issues/43 (a node out of inodes: df -h 56%, df -i 100%)
        - https://github.com/adaptivecomputing/torque/blob/34ff845417cc0348dfe0a61a491e5e0f4adf6ef4/src/server/req_quejob.c (req_jobscript: the job's script into server_priv/jobs)
        - https://github.com/firemodels/fds/issues/9419 (the TORQUE server's file system full: qsub refused)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/job_mgr.c (_copy_job_desc_to_file: ESLURM_WRITING_TO_FILE)
        - https://github.com/ArjunaCluster/ArjunaUsers/issues/212 (sbatch's I/O error: the controller's root file system full)
    """
    # a line apptainer-tmpdir-too-small reads (its build's temporary files) is that rule's to answer
    claimed = {t.get("line") for t in _told_all(f, "apptainer-tmpdir-too-small")}
    told = [s for s in _told_all(f, "disk-full") if not _shm_only(f, s) and s.get("line") not in claimed]
    said = next((s for s in told if s.get("id") == _DISK_FULL_SAID and stated(s)), None)
    told = [s for s in told if s.get("id") != _DISK_FULL_SAID]
    # the PBS server's own spool refused the job's script (pbs_server_msg.toml): the server's disk, not this host's
    spool = next((s for s in told if str(s.get("id", "")).startswith(_PBS_SPOOL)), None)
    if spool is not None:
        yield _pbs_spool_hit(spool)
        return
    state = next((s for s in told if s.get("id") == _SLURM_STATE_WRITE), None)
    if state is not None:
        yield _slurm_state_hit(state)
        return
    # a pasted df table: rows at 100%; at 99% only beside a write that failed for space
    rows = df_rows(f, nearly=bool(told))
    if rows and not told:
        yield _df_hit(f, rows)
        return
    if said is not None and not told:
        # The user's sentence, no program's line: what it says is quoted back, df is what shows it.
        yield Hit(message=f"the user says a disk is full (line {said['line']}: \"{told_text(said)}\"); no program's line in "
                          "the paste shows it, df does",
                  fix=("df -h \"${TMPDIR:-/tmp}\" / \"$HOME\" .; df -i \"${TMPDIR:-/tmp}\" /   # free blocks, free inodes\n"
                       "du -xsh /tmp/* 2>/dev/null | sort -h | tail   # what fills /tmp (files of your own: rm them)\n"
                       "export TMPDIR=/scratch/$USER/tmp   # pip, compilers and torch write temporary files there\n"
                       + _move_caches()),
                  evidence=told_evidence(said), severity="info")
        return
    if told:
        s = next((t for t in told if _path_of(t)), told[0])
        path = _path_of(s)
        where = path or '"${TMPDIR:-/tmp}" "$HOME" .'
        table = (f"; {describe(rows[0])} (line {rows[0]['line']})" + (": out of inodes, not of space" if rows[0]["kind"] == "inodes" else "")
                 if rows else "; a file system out of inodes says the same")
        yield Hit(message=f"a file system was full (line {s['line']}: \"{_quote(s, 'No space left on device')}\"): writes failed on "
                          f"{_where_written(path)}{table}",
                  fix=(_df_hit(f, rows).fix if rows else f"df -h {where}; df -i {where}   # free blocks, free inodes\n"
                       + _lustre_check(path)
                       + (_APPTAINER_DIRS if _apptainer_said(f) else "")
                       + "export TMPDIR=/scratch/$USER/tmp   # pip, compilers and torch write temporary files there\n"
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


_PBS_SPOOL = "pbs_server_msg:"
_PBS_NOSPACE = "pbs_server_msg:torque-spool-no-space"


def _pbs_spool_hit(s: dict) -> Hit:
    """TORQUE's pbs_server could not write a job's file or script into its spool (PBS_HOME/server_priv/jobs
    on the server host): qsub is refused for the server's disk, whatever room the user has."""
    path = next((str(s[k]) for k in ("path", "opath", "fpath", "cpath") if s.get(k)), None)
    home = path.split("/server_priv/")[0] if path and "/server_priv/" in path else "/var/spool/torque"
    named = s.get("id") == _PBS_NOSPACE
    why = ("ENOSPC: that file system is out of space or inodes" if named else
           "TORQUE 2.5 prints no errno here; a short write() into the spool is, most often, its file system full "
           "(the server's log has the errno beside \"Unable to write script file\")")
    return Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the PBS server could not write the job's script into its "
                       f"own spool ({home}/server_priv/jobs, on the server host): {why}. The full disk is the server's, not "
                       "the user's: room in your home or job directory does not change it, and every user's qsub fails alike",
               fix=("qstat -B   # the PBS server's host (Server column): the spool is on that host, not necessarily on this one\n"
                    f"df -h {home}; df -i {home}   # on the server host: TORQUE's PBS_HOME (/var/spool/torque by default; "
                    "OpenPBS: PBS_HOME in /etc/pbs.conf, /var/spool/pbs by default)\n"
                    f"du -sh {home}/server_logs {home}/server_priv/accounting   # logs and accounting records kept for years "
                    "fill it: administrators compress or remove the old ones\n"
                    "# users without access to the server host: tell the administrators; qsub works again once the server's "
                    "spool has room"),
               evidence=ticket_evidence(s), severity="error" if named else "warning")


_SLURM_STATE_WRITE = "slurm:ESLURM_WRITING_TO_FILE"


def _slurm_state_hit(s: dict) -> Hit:
    """slurmctld could not write a batch job's script or environment under its StateSaveLocation (job_mgr.c's
    _copy_job_desc_to_file): the controller's file system, whatever room the user has. The errno is in
    slurmctld's log only, so full, out of inodes and not writable are all still open: a warning."""
    return Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": slurmctld could not write the job's script or environment "
                       "into its own StateSaveLocation (on the controller host): most often that file system is full or out of "
                       "inodes, else not writable by SlurmUser (the errno is in slurmctld's log only). The disk is the "
                       "controller's, not the user's: room in your home or quota does not change it, and every user's sbatch "
                       "fails alike",
               fix=("scontrol show config | grep -E 'StateSaveLocation|SlurmctldHost|SlurmctldLogFile'   # where the "
                    "controller writes job scripts, and on which host\n"
                    "# on the controller host (administrators):\n"
                    "df -h \"$(scontrol show config | awk '/^StateSaveLocation/ {print $3}')\" /; "
                    "df -i \"$(scontrol show config | awk '/^StateSaveLocation/ {print $3}')\" /   # free blocks, free inodes\n"
                    "grep -E 'Error (creating|writing) file|mkdir\\(' \"$(scontrol show config | awk '/^SlurmctldLogFile/ {print $3}')\" "
                    "| tail   # slurmctld's own line names the file and the errno\n"
                    "# users without access to the controller: tell the administrators; sbatch works again once StateSaveLocation "
                    "has room"),
               evidence=ticket_evidence(s), severity="warning")


_LUSTRE_PATH = re.compile(r"^(.{0,200}?(?:^|/)lustre[0-9]?)/")


def _lustre_check(path: Optional[str]) -> str:
    """On a Lustre path, the MDTs' inodes and the OSTs' blocks one by one: df sums them, and a full
    MDT (or one directory out of entries) fails creates with the OSTs half empty."""
    m = _LUSTRE_PATH.match(path or "")
    return (f"lfs df -i {m.group(1)}; lfs df -h {m.group(1)}   # Lustre: each MDT's inodes and each OST's space "
            "(a full MDT fails every create)\n") if m else ""


def _df_hit(f: FactView, rows: list) -> Hit:
    """A pasted df or df -i row at 100%: the file system it names is full, of space or of inodes."""
    r = next((x for x in rows if x["kind"] == "inodes"), rows[0])
    mount = r["mount"]
    if r["kind"] == "inodes":
        free = (f"; the df table of space in the same paste shows no full row for {mount}: blocks are free"
                if blocks_free(f, mount) else "; its blocks may well be free")
        return Hit(message=f"{describe(r)} (line {r['line']}): the file system is out of inodes{free}. Every new file "
                           "fails with \"No space left on device\" however much space is left: the fix counts files",
                   fix=(f"df -i {mount}   # inodes in all, used, free\n"
                        f"du --inodes -x {mount} 2>/dev/null | sort -n | tail -20   # the directories that hold the most files\n"
                        "# then delete or pack them (tar, zip, squashfs): caches of many small files (pip, conda pkgs, "
                        ".git objects, a data set unpacked as loose files) are the usual ones\n"
                        "pip cache purge; conda clean --all   # the package caches\n"),
                   evidence=dict(ticket_evidence(r), mount=mount, kind="inodes", use_percent=r.get("pct")))
    return Hit(message=f"{describe(r)} (line {r['line']}): the file system is full; writes to it fail with "
                       "\"No space left on device\"",
               fix=(f"df -h {mount}; df -i {mount}   # free blocks, free inodes\n"
                    f"du -xh -d1 {mount} 2>/dev/null | sort -h | tail -15   # what fills it (files of your own: rm them)\n"
                    "export TMPDIR=/scratch/$USER/tmp   # pip, compilers and torch write temporary files there\n"
                    + _move_caches()),
               evidence=dict(ticket_evidence(r), mount=mount, kind="blocks", use_percent=r.get("pct")))


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


# Which failures show the process limit itself. fork and clone return EAGAIN from the kernel only for
# a count of tasks: RLIMIT_NPROC, threads-max, the pids cgroup's pids.max (torvalds/linux kernel/fork.c
# copy_process, kernel/cgroup/pids.c pids_can_fork); a clone short of memory returns ENOMEM. Go's
# runtime calls clone itself and prints that errno. pthread_create is not so plain: glibc turns a stack
# it could not map, and a clone refused for memory, into EAGAIN as well (bminor/glibc @ 02189e8f
# nptl/pthread_create.c: "retval = err == ENOMEM ? EAGAIN : err", "if (retval == ENOMEM) retval =
# EAGAIN"), so CPython's "can't start new thread", OpenBLAS's, libgomp's and the OpenMP runtime's
# EAGAIN are the limit OR memory for the thread's stack.
_KERNEL_EAGAIN = ("oslimits:bash-fork-eagain", "oslimits:go-failed-to-create-os-thread", "oslimits:go-fork-exec-eagain")
_TELL_APART = (
    "ulimit -u; ps -L -u $USER --no-headers | wc -l   # the process limit, against the threads this user runs on the node\n"
    "cat /sys/fs/cgroup$(cut -d: -f3 /proc/self/cgroup | tail -1)/pids.max   # the job's cgroup limit on tasks (cgroup v2)\n"
    "grep -E 'MemAvailable|CommitLimit|Committed_AS' /proc/meminfo; cat /proc/sys/vm/overcommit_memory; ulimit -s; ulimit -v   "
    "# memory for stacks: each new thread maps ulimit -s (8 MiB by default); overcommit 2 or a ulimit -v refuses it\n")


# A limit reached by a runaway (a shell function or script that calls itself, a fork loop) is no limit
# set too low: raising it only delays the same failure (dapphub/seth#13: an unset variable made a
# lookup script call itself until bash's fork failed).
_RUNAWAY = ("ps -u $USER -o comm= | sort | uniq -c | sort -rn | head -5   # one command with hundreds of copies: "
            "a runaway (a script calling itself), which no higher limit fixes")


def _pasted_nproc(told: list) -> Hit:
    s = told[0]
    kernel = next((t for t in told if t.get("id") in _KERNEL_EAGAIN), None)
    limit = next((t for t in told if t.get("current")), None)
    soft = int(limit["current"]) if limit else None
    hard = int(limit["max"]) if limit and limit.get("max") else None
    if kernel is not None:
        return Hit(message=f"a process or thread could not be created (line {kernel['line']}: \"{told_text(kernel)}\"): "
                           "fork and clone return EAGAIN only when a count of tasks is reached: the user's process and "
                           "thread limit (ulimit -u), the job's cgroup pids.max, or the kernel's threads-max; "
                           "every thread of every process of the user counts, and a script that keeps starting "
                           "copies of itself reaches any limit",
                   fix=_nproc_fix(soft, hard) + "\n" + _RUNAWAY, evidence=ticket_evidence(kernel))
    if limit is not None and soft is not None and soft >= 0:
        return Hit(message=f"a thread could not be created under RLIMIT_NPROC {soft} (hard {hard}) (line {s['line']}: "
                           f"\"{told_text(s)}\"): a soft limit that low is the usual cause when every rank starts a thread "
                           "per CPU; pthread_create says the same (EAGAIN) when memory for the thread's stack is refused",
                   severity="warning", fix=_nproc_fix(soft, hard) + "\n" + _TELL_APART.rstrip("\n"), evidence=ticket_evidence(s))
    unlimited = " under an unlimited RLIMIT_NPROC, so not ulimit -u" if limit is not None else ""
    return Hit(message=f"a thread could not be created{unlimited} (line {s['line']}: \"{told_text(s)}\"): pthread_create "
                       "reports EAGAIN both for a limit on tasks (ulimit -u, the job's cgroup pids.max) and for memory "
                       "it could not get for the thread's stack (glibc turns ENOMEM into EAGAIN: a host short of memory, "
                       "vm.overcommit_memory=2, a ulimit -v); the paste does not say which: the commands tell them apart",
               severity="info", fix=_TELL_APART + _nproc_fix(soft, hard), evidence=ticket_evidence(s))


_PIDS_REJECTED = "kernel_limits:pids-fork-rejected"


@rule("SYS006", "nproc-limit-too-low", "error", "the process and thread limit (ulimit -u) stops new threads", impact=7,
      also={"warning": "on a live node: the soft limit is below the threads the job will start; pasted: a thread refused under a finite RLIMIT_NPROC",
            "info": "pasted: a thread refused with EAGAIN, which is the process limit or memory for its stack"})
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

        Severity follows what the line shows: fork's and the Go runtime's EAGAIN come from the kernel
        only for a count of tasks (error); pthread_create's EAGAIN (CPython, OpenBLAS, libgomp, the
        OpenMP runtime) is that or memory for the thread's stack, which glibc also reports as EAGAIN:
        a warning under a finite RLIMIT_NPROC that OpenBLAS printed, otherwise info naming both, with
        the commands that tell them apart (a host short of memory is host-memory-insufficient's).

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
        - https://github.com/bminor/glibc/blob/02189e8fb00c3c7f4e67476e21011a22c5dee707/nptl/pthread_create.c (ENOMEM reported as EAGAIN)
        - https://github.com/torvalds/linux/blob/master/kernel/fork.c (copy_process: -EAGAIN for RLIMIT_NPROC and threads-max)
        - https://docs.kernel.org/admin-guide/cgroup-v2.html (PID controller: fork or clone fails with -EAGAIN at pids.max)
    """
    told = _told_nproc(f)
    if told:
        # The pids controller's own line names the cgroup that refused the fork: cgroup-pids-limit-reached's, not ulimit -u.
        if not any(s.get("id") == _PIDS_REJECTED for s in f.get("ticket.symptoms") or []):
            yield _pasted_nproc(told)
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
                  fix=_nproc_fix(soft, hard) if "hard" in nproc else _nproc_fix(None, None), severity="warning",
                  evidence={"limits.nproc": nproc, "local_ranks": ranks, "threads_per_rank": per_rank})
