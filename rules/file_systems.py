"""File systems that refuse what a job assumes of them: code written under a noexec mount that
cannot be loaded or run (knowledge/messages/noexec.toml, loader.toml), HDF5's file lock that
the file system does not grant or another process holds (knowledge/messages/hdf5.toml), and the file
locks of SQLite and Python's filelock (file_locks.toml) on a mount whose locking is off or local, and
a fixed name in the shared /tmp that another user holds (shared_tmp.toml). The mount options come from the limits check (/proc/self/mountinfo, per file system a run writes to)."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_symptoms, told_evidence, told_text

# Where JIT compilers and extension builders write what they then load or run: the temporary
# directories, and the default cache names of torch.compile (torchinductor_<user>, its triton/) and
# torch's cpp_extension (torch_extensions), as torch 2.13.0 names them, and Triton's own (.triton/, triton
# 3.9.0 knobs.py).
_JIT_PLACE = re.compile(r"^/(?:tmp|var/tmp|dev/shm)/|/torchinductor_[^/]{1,64}/|/\.?triton/|/torch_extensions/")
# A build stage: spack's default ($tempdir/$user/spack-stage, etc/spack/defaults/config.yaml) and the
# var/spack/stage/<pkg> links older spack made into it (spack#9746: "spack uses symlinks that hide
# that /tmp is being used"), and pip's build environments (/tmp/pip-build-env-*).
_STAGE_PLACE = re.compile(r"/spack-stage/|/var/spack/stage/|/pip-build-env-[^/]{1,40}/")
# The roles of the limits check's file systems that a JIT writes to (checks/limits.py write_dirs).
_JIT_ROLES = ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR")
# No Hit.env: `hpcdoctor env` quotes values, so $HOME would not expand, and the directories must exist first.
_EXEC_FIX = ("mkdir -p $HOME/tmp $HOME/.cache/torchinductor $HOME/.triton/cache $HOME/.cache/torch_extensions\n"
             "export TMPDIR=$HOME/tmp TORCHINDUCTOR_CACHE_DIR=$HOME/.cache/torchinductor "
             "TRITON_CACHE_DIR=$HOME/.triton/cache TORCH_EXTENSIONS_DIR=$HOME/.cache/torch_extensions\n"
             "# or a node-local directory the site documents for jobs, if it is not mounted noexec: "
             "findmnt -no OPTIONS --target DIR")

_STAGE_FIX = ("findmnt -no OPTIONS --target \"${TMPDIR:-/tmp}\"   # noexec among them: the stage cannot run configure\n"
              "spack config get config | grep -A3 build_stage   # spack: where it stages ($tempdir is TMPDIR, else /tmp)\n"
              "mkdir -p $HOME/tmp && export TMPDIR=$HOME/tmp   # a stage on a file system that allows execution; rerun the install\n"
              "# for good: build_stage: [$spack/var/spack/stage] under config: in ~/.spack/config.yaml (spack config edit config)")


def _filesystems(f: FactView) -> List[dict]:
    fs = f.get("limits.filesystems")
    return [x for x in fs if isinstance(x, dict)] if isinstance(fs, list) else []


def _mount_of(f: FactView, path: str) -> Optional[dict]:
    """The checked file system whose recorded paths hold ``path`` (the longest match), if any."""
    best, length = None, -1
    for fs in _filesystems(f):
        for p in fs.get("paths") or []:
            p = str(p).rstrip("/") or "/"
            if (path == p or path.startswith(p + "/") or p == "/") and len(p) > length and fs.get("options"):
                best, length = fs, len(p)
    return best


def _noexec(fs: Optional[dict]) -> Optional[bool]:
    return None if not fs or not fs.get("options") else "noexec" in fs["options"]


@rule("SYS008", "tmp-noexec", "error", "code written under a noexec mount cannot be loaded or run", impact=6,
      also={"advice": "no failure pasted: only the node's temporary directory or a JIT cache is on a noexec mount",
            "warning": "a build stage's program refused (spack, pip): noexec or a missing execute bit, no mount record; "
                       "or a library mapped for execution refused with EPERM where the line does not place it"})
def tmp_noexec(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a library or a script that a JIT compiler or an extension build wrote under
        the temporary directory (or its cache) failing to load or run: glibc's "<file>: failed to map
        segment from shared object" for a file under /tmp, /var/tmp, /dev/shm or a torchinductor_,
        triton or torch_extensions cache, torch.compile's wrapper of it ("The most common reason this
        may occur is if the /tmp folder is mounted with noexec"), bash's "<file>: Permission denied"
        and Python subprocess's "PermissionError: [Errno 13] Permission denied: '<file>'" for such a
        file. glibc's "failed to map segment from shared object: Operation not permitted" for a
        library the line does not place (a bare soname from a self-unpacking program): a warning,
        since mmap's EPERM for an executable mapping is a noexec mount or a security module.
        On a live node (and in a snapshot), the mount options of the file systems holding
        TMPDIR, TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR: noexec there alone is advice, since
        many sites mount /tmp noexec on purpose.

    Why it matters:
        The kernel refuses to map a library for execution, or to exec a program, from a file system
        mounted noexec. torch.compile (Inductor's C++ and Triton kernels), torch.utils.cpp_extension
        and many installers build into the temporary directory by default
        and then fail on the first load, however often the job is rerun. A "Permission denied" on a
        script under /tmp can also be a file without its execute bit; the mount options tell which,
        and so does the paste's own ls -l of the file: executable there, refused anyway, leaves the
        mount (or a security module) as the cause wherever the file lies.

    How to fix:
        Point the temporary directory and the JIT caches at a directory that allows execution, such
        as one under $HOME (or a node-local scratch directory the site documents for jobs, after
        checking its mount options with findmnt): export TMPDIR, TORCHINDUCTOR_CACHE_DIR,
        TRITON_CACHE_DIR and TORCH_EXTENSIONS_DIR in the job script before Python starts.

    References:
        - https://man7.org/linux/man-pages/man8/mount.8.html (noexec)
        - https://man7.org/linux/man-pages/man2/mmap.2.html (EPERM: PROT_EXEC on a file of a noexec mount)
        - https://pytorch.org/docs/stable/torch.compiler_troubleshooting.html
        - https://pytorch.org/docs/stable/cpp_extension.html (TORCH_EXTENSIONS_DIR)
        - https://pypi.org/project/torch/2.13.0/ (torch/_inductor/codecache.py and runtime/cache_dir_utils.py: the wrapper and the cache locations)
    """
    for s in catalogued(f, "tmp-noexec"):
        path = str(s.get("file") or "")
        mount = _mount_of(f, path) if path else None
        said = s.get("id") == "noexec:inductor-noexec-tempdir"
        staged = bool(_STAGE_PLACE.search(path)) and not _JIT_PLACE.search(path)
        if staged:
            yield from _stage_refused(f, s, path, mount)
            return
        if not (said or _JIT_PLACE.search(path) or _noexec(mount)):
            if s.get("reason") == "Operation not permitted" and _noexec(mount) is None:
                yield from _exec_mapping_refused(s, path)
                return
            listed = _listed_executable(f, path) if s.get("id") == "noexec:shell-exec-permission-denied" else None
            # ls -l's "." after the mode is an SELinux context: on such a host the label refuses as often
            # as a mount does (selinux-denies-container-access reads it), so the listing proves nothing here
            if listed is not None and not listed.get("mark") and _noexec(mount) is None:
                yield from _executable_refused(s, path, listed)
                return
            continue   # a library elsewhere: an address-space limit or another cause, not this rule's
        if _noexec(mount) is False and not said:
            continue   # the node's record says that file system allows execution: not this cause
        where = f" (the node's record: {mount.get('mount_probe')} is mounted {','.join(mount['options'])})" \
            if _noexec(mount) else ""
        denied = s.get("id", "").endswith("permission-denied")
        what = ("could not be executed: its file system is mounted noexec, or the file lacks its execute bit"
                if denied and not _noexec(mount) else "could not be loaded or run: its file system is mounted noexec")
        check = f"findmnt -no OPTIONS --target {path.rsplit('/', 1)[0] or '/'}   # noexec among them: use the exports below\n" \
            if path.startswith("/") and not _noexec(mount) else ""
        yield Hit(message=f"{path or 'a file a JIT compiler wrote'} {what}{where} (line {s.get('line')}: \"{told_text(s)}\")",
                  fix=check + _EXEC_FIX, evidence=told_evidence(s))
        return
    for fs in _filesystems(f):
        roles = [r for r in fs.get("roles") or [] if r in _JIT_ROLES]
        if roles and _noexec(fs):
            yield Hit(message=f"{fs.get('mount_probe')} ({', '.join(roles)}) is on a file system mounted noexec: "
                              "torch.compile, Triton and extension builds that write there cannot load what they build",
                      fix=_EXEC_FIX, severity="advice",
                      evidence={"limits.filesystems": {k: fs.get(k) for k in ("roles", "paths", "mount_probe", "fstype", "options")}})
            return


def _listed_executable(f: FactView, path: str) -> Optional[dict]:
    """The paste's own ls -l line for the refused file (noexec.toml ls-listed-executable), by its name."""
    name = path.rsplit("/", 1)[-1]
    return next((t for t in f.get("ticket.symptoms") or []
                 if isinstance(t, dict) and t.get("id") == "noexec:ls-listed-executable" and t.get("file") == name), None)


def _executable_refused(s: dict, path: str, listed: dict) -> Iterator[Hit]:
    """The shell could not execute a file that the paste's own ls -l shows executable: the missing execute
    bit is ruled out, so execve()'s EACCES came from the file system's noexec mount (man 2 execve), or,
    less often, from a security module (SELinux, AppArmor)."""
    folder = path.rsplit("/", 1)[0] or "/"
    where = "the current directory" if folder in (".", "..") else folder
    yield Hit(message=f"{path} could not be executed (line {s.get('line')}: \"{told_text(s)}\") although the listing on "
                      f"line {listed.get('line')} shows it executable (-{listed.get('mode')}): the file system holding "
                      f"{where} is mounted noexec (a drive or volume mounted with that option), or SELinux/AppArmor refused it",
              fix=(f"findmnt -no TARGET,OPTIONS --target {shlex.quote(folder)}   # noexec among them: that mount refuses every program on it\n"
                   f"sh {shlex.quote(path)}   # a script runs through its interpreter even there (or mount the drive without "
                   "noexec: remount,exec, and drop noexec from its fstab or docker volume options)\n"
                   "sudo ausearch -m avc -ts recent 2>/dev/null | tail   # administrators: an SELinux denial instead"),
              evidence={**told_evidence(s), "listed": listed.get("text"), "listed.line": listed.get("line")})


def _exec_mapping_refused(s: dict, path: str) -> Iterator[Hit]:
    """glibc's "failed to map segment from shared object: Operation not permitted" for a library the
    line does not place (a bare soname, as a bundled program's loader prints it): mmap's EPERM for an
    executable mapping is a noexec mount or a security module (man 2 mmap), never a memory limit
    (that is ENOMEM). Which directory the library was in the line does not say: the usual one is
    the temporary directory a self-unpacking program (PyInstaller, AppImage) extracts itself to."""
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the kernel refused to map {path or 'a library'} for "
                      "execution (EPERM): its file system is mounted noexec (a bundled program unpacks its libraries "
                      "into the temporary directory, /tmp unless TMPDIR says otherwise), or SELinux/AppArmor refused it",
              fix=("findmnt -no OPTIONS --target \"${TMPDIR:-/tmp}\"   # noexec among them: the unpacked libraries cannot be loaded\n"
                   "mkdir -p $HOME/tmp && export TMPDIR=$HOME/tmp   # then rerun the program: a temporary directory that "
                   "allows execution (PyInstaller bundles unpack under TMPDIR)\n"
                   "sudo ausearch -m avc -ts recent 2>/dev/null | tail   # administrators: an SELinux denial instead"),
              evidence=told_evidence(s), severity="warning")


def _stage_refused(f: FactView, s: dict, path: str, mount: Optional[dict]) -> Iterator[Hit]:
    """A build stage's program refused. The path says a stage, not where it lives (spack's
    var/spack/stage/<pkg> is a link into $tempdir), so the node's TMPDIR counts as much as the path's
    own mount: either noexec names the cause; both allowing execution leave a missing execute bit."""
    tmp = next((fs for fs in _filesystems(f) if "TMPDIR" in (fs.get("roles") or [])), None)
    line = f"(line {s.get('line')}: \"{told_text(s)}\")"
    noexec = next((fs for fs in (mount, tmp) if _noexec(fs)), None)
    if noexec:
        yield Hit(message=f"{path} could not be executed in the build stage {line}: the node's record says "
                          f"{noexec.get('mount_probe')} is mounted {','.join(noexec['options'])}",
                  fix=_STAGE_FIX.split("\n", 1)[1], evidence=told_evidence(s))
    elif _noexec(mount) is None or _noexec(tmp) is None:
        # consistent with noexec, not proof: the mount options say which
        yield Hit(message=f"{path} could not be executed in the build stage {line}: consistent with a stage on a noexec "
                          "mount (spack stages under $TMPDIR by default, and var/spack/stage links there), or a file "
                          "that lacks its execute bit: the mount options say which",
                  severity="warning", fix=_STAGE_FIX, evidence=told_evidence(s))


# errno values of a lock the file system does not grant (ENOLCK, ENOSYS) and of one another process holds (EAGAIN)
_UNSUPPORTED, _HELD = {"37", "38"}, {"11"}
# mountinfo's fstype of network and parallel file systems (nfs, nfs4, lustre, gpfs, beegfs, fuse.* of CephFS and
# the like) where lock support depends on the mount: the ones a local disk never is
_SHARED_FS = ("nfs", "lustre", "gpfs", "beegfs", "ceph", "fuse.", "cifs", "smb", "dvs", "wekafs")


@rule("SYS009", "hdf5-file-locking", "error", "HDF5's file lock is refused by the file system or held by another process",
      impact=6, also={"warning": "errno 11: the lock works and another process holds it"})
def hdf5_file_locking(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, HDF5's own words (as h5py's OSError, or netCDF4's and the HDF5 tools'
        HDF5-DIAG stack) that it could not lock the file it opens: "unable to lock file, errno = 37,
        error message = 'No locks available'" or errno 38 "Function not implemented", the file
        system not granting locks; and errno 11 "Resource temporarily unavailable", a different
        cause: another process holds the lock.

    Why it matters:
        HDF5 1.10 and later lock every file they open. Network and parallel file systems mounted
        without lock support (NFS without the lock service, some Lustre and GPFS mounts) refuse
        the lock, so every open of an HDF5 or netCDF-4 file there fails, in every job, while the
        same code works on a laptop. Errno 11 is not the file system: a writer still has the file
        open, or several ranks open it for writing at once.

    How to fix:
        Lock refused (37, 38): export HDF5_USE_FILE_LOCKING=FALSE in the job script (the HDF Group's
        switch for the 1.10 series' locking, read by the HDF5 1.14.4 that h5py 3.12.1 bundles),
        making sure no process writes the file while others read it; or copy the file to node-local storage and open it there. Lock
        held (11): close the writer before readers open the file, open it read-only ('r') in every
        rank that only reads, or let one rank write; disabling locking there hides a real conflict.

    References:
        - https://forum.hdfgroup.org/t/rfc-concerning-the-disabling-of-file-locking-in-hdf5/3896 (HDF_Group RFC: HDF5_USE_FILE_LOCKING)
        - https://support.nesi.org.nz/hc/en-gb/articles/360000902955-NetCDF-HDF5-file-locking (a site's instructions, the HDF5-DIAG stack)
        - https://github.com/h5py/h5py/issues/1082
        - https://pypi.org/project/h5py/3.12.1/ (its bundled HDF5 1.14.4: the messages and HDF5_USE_FILE_LOCKING)
    """
    told = catalogued(f, "hdf5-file-locking")
    if not told:
        return
    s = next((t for t in told if str(t.get("errno")) in _UNSUPPORTED), told[0])
    errno = str(s.get("errno"))
    quote = f"(line {s.get('line')}: \"{told_text(s)}\")"
    if errno in _HELD:
        yield Hit(message="HDF5 could not lock the file because another process holds its lock (errno 11): a writer "
                          f"still has it open, or several processes open it for writing {quote}",
                  fix=("# close the file in the writer before readers open it; in ranks that only read, open it "
                       "read-only: h5py.File(path, 'r')\n"
                       "# lsof on the file, on the node that opened it, names the process holding it"),
                  evidence=told_evidence(s), severity="warning")
        return
    fix = "export HDF5_USE_FILE_LOCKING=FALSE   # in the job script; only if no process writes the file while others read it"
    cwd = next((fs for fs in _filesystems(f) if "working directory" in (fs.get("roles") or [])), None)
    here = f"; the working directory here is on {cwd['fstype']} ({cwd.get('mount_probe')})" \
        if cwd and str(cwd.get("fstype", "")).startswith(_SHARED_FS) else ""
    yield Hit(message=f"the file system holding the HDF5 file refuses its lock ({s.get('reason')}, errno {errno}): "
                      f"HDF5 1.10 and later lock every file they open{here} {quote}",
              fix=fix + "\n# or copy the file to node-local storage and open it there",
              evidence=told_evidence(s))   # no env: read from a paste, no export here silences what it read


_STALE_FIX = ("cd \"$(pwd -P)\" 2>/dev/null || cd \"$HOME\"   # a shell whose working directory was replaced on the server holds a stale handle\n"
              "export HF_HOME=\"${TMPDIR:-/tmp}/hf_home\"   # caches a job writes while other jobs replace them: on node-local disk, "
              "or one per job (HF_HOME, TORCH_HOME, TRITON_CACHE_DIR)")


@rule("SYS010", "nfs-stale-file-handle", "warning", "a file the process held was removed or replaced on the file server",
      impact=5)
def nfs_stale_file_handle(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, ESTALE as any program prints it: Python's "[Errno 116] Stale file handle:
        'PATH'", a C program's "...: Stale file handle", strace's "= -1 ESTALE" (knowledge/
        messages/errno.toml).

    Why it matters:
        The process held a file or directory (its working directory, an open file, a cache entry)
        that was deleted or replaced on the NFS server, often by another node of the same job or a
        second job sharing a cache directory in $HOME; the client's handle no longer names
        anything. Retrying the same open does not help; the node itself is fine.

    How to fix:
        Reopen from the path (cd into the directory again, restart the step); keep caches and
        scratch files that several jobs write apart (one per job, or on node-local disk) instead
        of in a shared directory on NFS.

    References:
        - https://man7.org/linux/man-pages/man3/errno.3.html (ESTALE: can occur for NFS and other file systems)
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=sysdeps/gnu/errlist.h (ESTALE's text and comment)
    """
    told = catalogued(f, "nfs-stale-file-handle")
    if not told:
        return
    s = told[0]
    where = f" ({s['path']})" if s.get("path") else ""
    yield Hit(message=f"a file or directory the process held{where} was removed or replaced on the file server "
                      f"(line {s.get('line')}: \"{told_text(s)}\"): its handle is stale",
              fix=_STALE_FIX, evidence=told_evidence(s))


# Mount options (as the kernel shows them in mountinfo) under which a lock taken here excludes only processes
# of this node: NFS's nolock and local_lock= other than none (Linux fs/nfs/super.c nfs_show_mount_options;
# nfs(5)), Lustre's localflock.
_LOCAL_LOCKS = ("nolock", "local_lock=all", "local_lock=flock", "local_lock=posix", "localflock")
_LOCK_FIX = ("findmnt -T \"$PWD\" -o TARGET,FSTYPE,OPTIONS   # the mount holding the file (run with the database's or "
             "cache's directory): nfs with nolock or local_lock=..., lustre without flock\n"
             "cp DB.sqlite \"${TMPDIR:-/tmp}/\"   # SQLite: keep the database on node-local disk and copy it back when done\n"
             "export HF_DATASETS_CACHE=\"${TMPDIR:-/tmp}/hf_datasets\"   # Hugging Face caches (filelock): on a "
             "file system that grants locks\n"
             "# administrators: mount with the lock service (NFS: lockd/rpc.statd, no nolock; Lustre: -o flock)")
# HDF5's lock refused as not supported, by its errno (knowledge/messages/hdf5.toml): 524 is Linux's
# kernel-internal ENOTSUPP (include/linux/errno.h), for which glibc's strerror has no text.
_HDF5_NOT_SUPPORTED = {
    "hdf5:lock-enotsupp": "ENOTSUPP, Linux's kernel-internal \"operation not supported\" (strerror: 'Unknown error 524'), "
                          "as Cray DVS answers flock()",
    "hdf5:lock-eopnotsupp": "EOPNOTSUPP, operation not supported",
}
_HDF5_LOCK_FIX = ("findmnt -T \"$PWD\" -o TARGET,FSTYPE,OPTIONS   # the mount holding the file (run in its directory): "
                  "dvs, nfs without locks, lustre without flock\n"
                  "export HDF5_USE_FILE_LOCKING=FALSE   # in the job script; only if no process writes the file while "
                  "others read it\n"
                  "# or copy the file to node-local storage (${TMPDIR:-/tmp}) and open it there")
# A lock call refused by the file system, as cargo and strace report it (knowledge/messages/file_locks.toml),
# and what each errno says of the mount.
_LOCK_CALL_REFUSED = {"file_locks:cargo-lock-refused": "cargo", "file_locks:strace-lock-refused": "a traced call",
                      "file_locks:uv-lock-refused": "uv"}
# uv locks its cache and its Python installs (crates/uv-fs LockedFile); both places move by variable
# (docs.astral.sh/uv/reference/environment/: UV_CACHE_DIR, UV_PYTHON_INSTALL_DIR).
_UV_LOCK_FIX = ("findmnt -T \"$HOME\" -o TARGET,FSTYPE,OPTIONS   # the mount holding uv's directories: nfs with nolock or "
                "local_lock=..., lustre without flock\n"
                "export UV_CACHE_DIR=\"${TMPDIR:-/tmp}/uv-cache\"   # uv's cache on node-local disk, which grants flock\n"
                "# and UV_PYTHON_INSTALL_DIR set to a directory on a file system that grants flock and that the nodes "
                "see (the Pythons uv installs must stay reachable)\n"
                "# administrators: mount with the lock service (NFS: lockd/rpc.statd, no nolock; Lustre: -o flock)")
_LOCK_ERRNO = {
    "38": "ENOSYS: no lock support, as Lustre mounted without flock answers", "ENOSYS": "ENOSYS: no lock support, as Lustre mounted without flock answers",
    "37": "ENOLCK: no lock manager answers, as on NFS without lockd", "ENOLCK": "ENOLCK: no lock manager answers, as on NFS without lockd",
    "95": "EOPNOTSUPP: locks not supported", "EOPNOTSUPP": "EOPNOTSUPP: locks not supported",
}
# ROMIO's (MPI-IO's) fcntl() lock refused (knowledge/messages/mpich.toml): lock.c prints the errno in
# hexadecimal, so "errno 26" is 38. Only the errnos that say the file system has no POSIX locks reach here.
_ROMIO_ERRNO = {
    "26": "38 ENOSYS (Function not implemented: Lustre mounted without flock)",
    "25": "37 ENOLCK (No locks available: NFS without its lock daemon)",
    "5F": "95 EOPNOTSUPP (Operation not supported)",
    "20C": "524 ENOTSUPP (Linux's kernel-internal \"not supported\")",
}
_ROMIO = ("mpich:romio-lock-not-supported", "mpich:romio-lock-failed-no-errno")
_ROMIO_LOCK_FIX = ("findmnt -T \"$PWD\" -o TARGET,FSTYPE,OPTIONS   # the mount holding the MPI-IO file (run in its "
                   "directory): lustre without flock, nfs with nolock\n"
                   "printf 'romio_ds_write disable\\nromio_ds_read disable\\n' > \"$HOME/romio-hints\"   # ROMIO locks "
                   "for data sieving: without it, non-atomic I/O takes no lock (shared file pointers still do)\n"
                   "export ROMIO_HINTS=\"$HOME/romio-hints\"   # read by ROMIO (MPICH, Open MPI's io/romio, Intel MPI) "
                   "at MPI_File_open\n"
                   "# administrators: mount Lustre with -o flock (or NFS with its lock service) on every node")
# Nextflow keeps its resume cache and history in .nextflow/ under the directory it is launched from;
# only the work directory (-w) has to be shared with the compute nodes.
_NEXTFLOW_CACHE = "nextflow_locks:cache-db-open-failed"
_NEXTFLOW_LOCK_FIX = ("findmnt -T \"$PWD\" -o TARGET,FSTYPE,OPTIONS   # the launch directory's mount: lustre without "
                      "flock, nfs with nolock, a FUSE or CephFS mount without POSIX locks\n"
                      "mkdir -p \"$HOME/nf-launch\" && cd \"$HOME/nf-launch\"   # launch from a directory whose file "
                      "system grants locks (home or node-local disk; .nextflow/ is created here)\n"
                      "# then run the same nextflow run command from there with -w \"$OLDPWD/work\": the shared work "
                      "directory stays where it was (-resume finds its tasks only through the old .nextflow/)")
_HINTS = {
    "file_locks:sqlite-busy": ("one of two documented causes (SQLite FAQ) of \"database is locked\": another connection "
                               "holds the lock, or the database is on a network file system whose fcntl() locking is broken"),
    "prose:filelock-hangs": ("the usual cause (filelock 3.0's source) of a FileLock that never acquires: the file system "
                             "refuses flock() and the lock is retried for ever"),
}


@rule("SYS013", "fs-file-locking-unsupported", "error",
      "the file system does not grant the file locks a program relies on", impact=5,
      also={"warning": "SQLite's locking protocol (WAL) failed, or on the node: a mount a run writes to has "
                       "locks local to this node",
            "info": "SQLite's \"database is locked\" or \"disk I/O error\", or a FileLock said to hang: the FAQ's or "
                    "source's usual cause (a disk I/O error is a warning where the paste names a network file system)"})
def fs_file_locking_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log: Python filelock 3.x's "FileSystem does not appear to support flock"
        (flock() failed with ENOSYS); ENOLCK as any program prints it ("[Errno 37] No locks
        available", "<what>: No locks available": fcntl() or flock() refused the lock); cargo's
        "failed to lock file: <path>" and uv's "Could not acquire lock for `<what>` at `<path>`" with
        "Function not implemented (os error 38)" (or 37, 95), and
        strace's "flock(3, LOCK_EX|LOCK_NB) = -1 ENOSYS (Function not implemented)" (fcntl F_SETLK
        too; ENOLCK, EOPNOTSUPP); SQLite's "locking protocol" (SQLITE_PROTOCOL, 15: its WAL
        locking, which does not work over a network file system) as a warning; HDF5's "unable to lock
        file, errno = 524" (Linux's kernel-internal ENOTSUPP, which strerror prints as "Unknown error
        524": Cray DVS answers flock() with it) or errno = 95 (EOPNOTSUPP); ROMIO's (MPI-IO in
        MPICH, Open MPI, Intel MPI) "File locking failed in ADIOI_Set_lock" / "ADIOI_GEN_SetLock"
        with errno 26, 25, 5F or 20C (printed in hexadecimal: ENOSYS, ENOLCK, EOPNOTSUPP, ENOTSUPP),
        and ROMIO's older wording that names no errno as a warning; Nextflow's "Can't open cache DB
        ... Nextflow needs to be executed in a shared file system that supports file locks" (its
        resume cache in the launch directory would not open; not its "Can't lock file ...
        history", which its source throws when another Nextflow holds the lock); SQLite's "database
        is locked" (SQLITE_BUSY) and a user's words that a FileLock hangs or is stuck acquiring,
        at info. On the node: a file system a run writes to (home, working directory, temporary
        directory, caches) mounted with locks local to the node (NFS nolock or local_lock=all,
        flock or posix; Lustre localflock).

    Why it matters:
        SQLite, Hugging Face's dataset and model caches (filelock), pip's and conda's caches and
        HDF5 lock the files they share. On a mount without lock support the lock fails (SQLite
        errors, filelock 3.0 retried for ever and hangs); with locks local to the node, the lock
        succeeds but does not exclude processes on other nodes, so concurrent jobs corrupt a
        shared database or cache.

    How to fix:
        Keep databases and caches that need locks on node-local disk (copy in, copy back) or on a
        file system that grants locks; for Hugging Face, point the cache to such a directory. For
        MPI-IO, turn off ROMIO's data sieving (romio_ds_read/romio_ds_write disable in a
        ROMIO_HINTS file), which takes the locks. The administrators can mount with the lock
        service (NFS without nolock) or Lustre with flock.

    References:
        - https://www.sqlite.org/faq.html#q5 (fcntl() locking broken on many NFS implementations)
        - https://www.sqlite.org/wal.html (WAL does not work over a network filesystem)
        - https://www.sqlite.org/rescode.html (SQLITE_BUSY, SQLITE_PROTOCOL)
        - https://pypi.org/project/filelock/3.12.4/ (UnixFileLock: ENOSYS from flock)
        - https://man7.org/linux/man-pages/man5/nfs.5.html (lock/nolock, local_lock)
        - https://man7.org/linux/man-pages/man2/fcntl.2.html (ENOLCK)
        - https://github.com/spack/spack/issues/12501 ("[Errno 37] No locks available": an NFS mount without lock support)
        - https://github.com/torvalds/linux/blob/master/include/linux/errno.h (ENOTSUPP 524, never meant for user space)
        - https://github.com/HDFGroup/hdf5/issues/3311 (errno 524 from flock() on Cray DVS)
        - https://github.com/pmodels/mpich/blob/main/src/mpi/romio/adio/common/lock.c (ADIOI_GEN_SetLock: errno in %X)
        - https://github.com/dtarb/TauDEM/issues/17 (ROMIO on Lustre without flock: errno 26)
        - https://github.com/nextflow-io/nextflow/blob/master/modules/nextflow/src/main/groovy/nextflow/cache/DefaultCacheStore.groovy (openDb: "Can't open cache DB")
        - https://github.com/nextflow-io/nextflow/issues/1310 (Can't open cache DB on a scratch file system)
    """
    told = catalogued(f, "fs-file-locking-unsupported")
    if told:
        s = next((t for t in told if t.get("id") in _HDF5_NOT_SUPPORTED), None) \
            or next((t for t in told if t.get("id") in _ROMIO), None) \
            or next((t for t in told if t.get("id") in ("file_locks:filelock-no-flock", "errno:ENOLCK")
                     or t.get("id") in _LOCK_CALL_REFUSED), None) \
            or next((t for t in told if t.get("id") in (_NEXTFLOW_CACHE, "file_locks:sqlite-protocol")), told[0])
        sid = str(s.get("id"))
        quote = f"(line {s.get('line')}: \"{told_text(s)}\")"
        if sid in _HDF5_NOT_SUPPORTED:
            name = _HDF5_NOT_SUPPORTED[sid]
            msg, sev = (f"the file system does not support the flock() HDF5 takes on every file it opens: errno "
                        f"{s.get('errno')} is {name} {quote}"), None
        elif sid == _ROMIO[0]:
            name = _ROMIO_ERRNO.get(str(s.get("errno", "")).upper(), f"0x{s.get('errno')}")
            msg, sev = (f"the file system refuses the fcntl() lock ROMIO (MPI-IO) takes, and the rank aborts: errno "
                        f"{s.get('errno')} is hexadecimal for {name} {quote}"), None
        elif sid == _ROMIO[1]:
            msg, sev = (f"ROMIO's (MPI-IO's) fcntl() lock was refused and the rank aborts {quote}; this ROMIO names no "
                        "errno: the usual cause is a file system without POSIX locks (NFS without lockd, Lustre "
                        "without flock)"), "warning"
        elif sid == "file_locks:filelock-no-flock":
            msg, sev = f"the file system refuses flock() (ENOSYS): a FileLock cannot be taken there {quote}", None
        elif sid in _LOCK_CALL_REFUSED:
            who = f"{s.get('call')}() (strace)" if s.get("call") else _LOCK_CALL_REFUSED[sid]
            msg, sev = (f"the file system refused the lock of {who}: {s.get('reason')} "
                        f"({_LOCK_ERRNO.get(str(s.get('errno') or s.get('name')), s.get('errno') or s.get('name'))}) "
                        f"{quote}"), None
        elif sid == "errno:ENOLCK":
            # fcntl(2) and flock(2) return ENOLCK when the lock cannot be granted: on NFS, no lock
            # manager (lockd/statd) answering for the mount, or a mount with nolock (nfs(5))
            msg, sev = (f"the file system refused a file lock: ENOLCK, no locks available {quote}: on an NFS mount, "
                        "no lock manager (rpc.statd, lockd) answers for it"), None
        elif sid == _NEXTFLOW_CACHE:
            msg, sev = (f"Nextflow could not open its resume cache in the launch directory's .nextflow/ {quote}: its "
                        "source prints these words for any failure but another run holding the session (that is "
                        "\"Unable to acquire lock on session\"): the file system refused the database's lock, or "
                        "the database is damaged"), None
        elif sid == "file_locks:sqlite-protocol":
            msg, sev = (f"SQLite's locking protocol failed {quote}: its WAL mode needs locks and shared memory that a "
                        "network or parallel file system does not provide (SQLite: WAL does not work over a network "
                        "filesystem)"), "warning"
        elif sid == "file_locks:sqlite-ioerr":
            msg, sev = _sqlite_ioerr(f, s, quote)
        else:
            msg, sev = f"{_HINTS.get(sid, 'a file lock that was not granted')} {quote}", "info"
        fix = _HDF5_LOCK_FIX if sid in _HDF5_NOT_SUPPORTED else _ROMIO_LOCK_FIX if sid in _ROMIO \
            else _NEXTFLOW_LOCK_FIX if sid == _NEXTFLOW_CACHE else _UV_LOCK_FIX if sid == "file_locks:uv-lock-refused" \
            else _LOCK_FIX
        yield Hit(message=msg, fix=fix,
                  evidence=told_evidence(s), severity=sev)
        return
    for fs in _filesystems(f):
        opts = [str(o) for o in fs.get("options") or []]
        local = [o for o in opts if o in _LOCAL_LOCKS]
        if local and str(fs.get("fstype", "")).startswith(("nfs", "lustre")):
            yield Hit(message=f"{fs.get('mount_probe')} ({', '.join(fs.get('roles') or [])}) is {fs.get('fstype')} mounted "
                              f"with {', '.join(local)}: a file lock taken there (SQLite, filelock, HDF5) excludes only "
                              "processes of this node, not other nodes' jobs sharing the file",
                      fix=_LOCK_FIX, severity="warning",
                      evidence={"limits.filesystems": {k: fs.get(k) for k in ("roles", "paths", "mount_probe", "fstype", "options")}})
            return


def _sqlite_ioerr(f: FactView, s: dict, quote: str):
    """SQLite's "disk I/O error" states only that the OS failed one of SQLite's file operations; on a
    network file system the usual cause is its locking (SQLite's FAQ), on a local disk a device. A
    paste whose user places the files on a network file system (prose:network-fs-named) makes that
    cause likely (warning); else the line is only consistent with it (info)."""
    net = ticket_symptoms(f).get("prose:network-fs-named")
    where = (f"the user places the files on {str(net.get('fs') or 'a network file system').upper()}, where SQLite's FAQ says "
             "fcntl() locking is broken on many implementations and WAL cannot work") if net else \
        "consistent with a database on a shared home or network file system, whose locking SQLite's FAQ calls unreliable"
    return (f"SQLite's \"disk I/O error\" (SQLITE_IOERR) {quote}: {where}; a copy of the database on node-local disk "
            "tells the file system from a failing device"), ("warning" if net else "info")


_TMP_FIX = ("ls -ld /tmp/NAME   # its owner and mode: another user's file or directory holds this fixed name\n"
            "export TMPDIR=\"$(mktemp -d)\"   # a private directory, where the program honours TMPDIR\n"
            "# the program: create temporary files with tempfile.mkstemp()/mkdtemp() or under a per-user name "
            "(/tmp/$USER-NAME, $XDG_RUNTIME_DIR), never one fixed /tmp path\n"
            "# /tmp is sticky: only the owner (or an administrator) can remove the old one")


@rule("SYS014", "shared-tmp-owned-by-other-user", "warning",
      "a program's fixed path in the shared /tmp belongs to another user", impact=4,
      also={"info": "read from the user's words that the /tmp path belongs to another user"})
def shared_tmp_owned_by_other_user(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Python's "[Errno 13] Permission denied: '/tmp/<name>'" (or /var/tmp) on
        opening or creating a path there, not an exec refused by a noexec mount (tmp-noexec's); at
        info, the user's words that a /tmp path is owned by another user, or that a tool's /tmp
        directory fails for the machine's other users.

    Why it matters:
        /tmp is shared by every user of a node and sticky: the first user to create a fixed name
        (/tmp/<tool>-log, /tmp/<tool>/) owns it, nobody else may replace it, and with mode 644 or
        755 nobody else may write it (fs.protected_regular refuses even an open with O_CREAT of
        another user's file there). A tool that uses one fixed path works for the first user of a
        login or compute node and fails for all others.

    How to fix:
        Point the program to a private directory (TMPDIR, where it honours it), or make it create
        its files with mkstemp/mkdtemp or per-user names; the owner of the old path (or an
        administrator) removes it.

    References:
        - https://man7.org/linux/man-pages/man7/inode.7.html (S_ISVTX: the sticky bit)
        - https://docs.kernel.org/admin-guide/sysctl/fs.html (protected_regular)
        - https://docs.python.org/3/library/tempfile.html (mkstemp, mkdtemp)
    """
    if catalogued(f, "tmp-noexec"):
        return   # an exec refused in /tmp is the mount's noexec, not another user's file
    told = catalogued(f, "shared-tmp-owned-by-other-user")
    s = next((t for t in told if t.get("id") == "shared_tmp:python-tmp-path-denied"), None)
    if s is not None:
        yield Hit(message=f"{s.get('path') or 'a path in /tmp'} was refused (EACCES) (line {s.get('line')}: \"{told_text(s)}\"): "
                          "a fixed name in the shared, sticky /tmp that another user of the node created first",
                  fix=_TMP_FIX.replace("/tmp/NAME", str(s.get("path") or "/tmp/NAME")), evidence=told_evidence(s))
        return
    if told:
        s = told[0]
        yield Hit(message="the usual cause (the sticky /tmp's rule) of a tool's /tmp path failing for every user but the "
                          f"first: that user owns it (the user: \"{str(s.get('matched') or told_text(s)).strip()[:120]}\")",
                  fix=_TMP_FIX, evidence=told_evidence(s), severity="info")
