"""Limits of the system a job meets before its program does: free space and free inodes on the file
systems a run writes to ($HOME, the working directory, the temporary directory, the caches of
Hugging Face, torch, torch.compile and Triton, pip and conda), one entry per file system with its
type and mount options (noexec refuses the libraries a JIT compiler builds there), the process
and thread limit (RLIMIT_NPROC) every thread of the user counts against, the stack size limit
(RLIMIT_STACK) the main thread's stack may grow to, and the address-space limit (RLIMIT_AS, ulimit -v)
that a JVM's start-up reservations meet. Each directory's nearest existing parent is also
tried for writing (access(2), W_OK: permissions and a read-only mount), since a cache is made there."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.rlimits import PROC_ARGV, SHELL_ARGV, parse_limits
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "limits"
TIMEOUT = 2.0


def write_dirs(env: Dict[str, str]) -> List[Tuple[str, str]]:
    """(role, path) of each directory a run writes to, from the job's environment, with each
    tool's default where its variable is unset, as read in its source on 2026-11-26:
    huggingface_hub 2.4.0 constants.py: $HF_HOME, else $XDG_CACHE_HOME/huggingface, else
    ~/.cache/huggingface; torch 2.13.0 torch/hub.py: $TORCH_HOME, else $XDG_CACHE_HOME/torch, else
    ~/.cache/torch; torch 2.13.0 torch/_inductor/runtime/cache_dir_utils.py: Triton's kernels under
    $TRITON_CACHE_DIR, else $TORCHINDUCTOR_CACHE_DIR/triton, else the temporary directory
    (/tmp/torchinductor_<user>), which TMPDIR covers; pip 23.2.1 (platformdirs user_cache_dir):
    $PIP_CACHE_DIR, else $XDG_CACHE_HOME/pip, else ~/.cache/pip; conda: the first of
    $CONDA_PKGS_DIRS. The working directory is added by the probe."""
    home = env.get("HOME") or ""
    xdg = env.get("XDG_CACHE_HOME") or (f"{home}/.cache" if home else "")
    out: List[Tuple[str, str]] = []

    def add(role: str, path: Optional[str]) -> None:
        if path and path.startswith("/"):
            out.append((role, path))

    add("HOME", home)
    add("TMPDIR", env.get("TMPDIR") or "/tmp")
    add("HF_HOME", env.get("HF_HOME") or (f"{xdg}/huggingface" if xdg else None))
    add("TORCH_HOME", env.get("TORCH_HOME") or (f"{xdg}/torch" if xdg else None))
    add("TORCHINDUCTOR_CACHE_DIR", env.get("TORCHINDUCTOR_CACHE_DIR"))
    add("TRITON_CACHE_DIR", env.get("TRITON_CACHE_DIR"))
    add("PIP_CACHE_DIR", env.get("PIP_CACHE_DIR") or (f"{xdg}/pip" if xdg else None))
    add("CONDA_PKGS_DIRS", (env.get("CONDA_PKGS_DIRS") or "").split(",")[0].strip() or None)
    return out


def _existing(path: str) -> str:
    """The path itself or its nearest existing parent: a cache not yet created will be created there."""
    p = os.path.normpath(path)
    while p != "/" and not os.path.exists(p):
        p = os.path.dirname(p)
    return p


def parse_mountinfo(text: str) -> Dict[str, List[Tuple[str, str, List[str]]]]:
    """/proc/self/mountinfo (proc(5)) by device "major:minor": (mount point, fstype, options) of
    each mount, the per-mount options (field 6: noexec, nosuid, ro) first, then the file system's."""
    out: Dict[str, List[Tuple[str, str, List[str]]]] = {}
    for line in text.splitlines()[:4096]:
        left, sep, right = line.partition(" - ")
        f, r = left.split(), right.split()
        if not sep or len(f) < 6 or len(r) < 3:
            continue
        # octal escapes in the mount point (\040 for a space) are left as they are: only prefixes are compared
        opts = [o for o in (f[5] + "," + r[2]).split(",") if o][:64]
        out.setdefault(f[2], []).append((f[4], r[0][:40], opts))
    return out


def _mount_for(mounts: Dict[str, List[Tuple[str, str, List[str]]]], dev: int, where: str) -> Optional[Tuple[str, List[str]]]:
    """fstype and options of the mount of device ``dev`` whose mount point is the longest prefix of ``where``."""
    best = None
    for point, fstype, opts in mounts.get(f"{os.major(dev)}:{os.minor(dev)}", []):
        p = point.rstrip("/")
        if (where == point or where.startswith(p + "/") or point == "/") and (best is None or len(point) > len(best[0])):
            best = (point, fstype, opts)
    return (best[1], best[2]) if best else None


def statvfs_dirs(dirs: List[Tuple[str, str]]) -> List[Dict[str, Any]]:
    """One record per file system (by st_dev) holding any of ``dirs`` and the working directory:
    the roles and paths on it, its size and what an unprivileged user may still use of it."""
    try:
        dirs = [("working directory", os.getcwd())] + list(dirs)
    except OSError:
        pass
    try:
        with open("/proc/self/mountinfo") as fh:   # read inside the probe, recorded and replayed with it
            mounts = parse_mountinfo(fh.read(1 << 20))
    except OSError:
        mounts = {}
    by_dev: Dict[int, Dict[str, Any]] = {}
    for role, path in dirs:
        where = _existing(path)
        try:
            dev = os.stat(where).st_dev
            st = os.statvfs(where)
        except OSError as exc:
            by_dev.setdefault(-len(by_dev) - 1, {"roles": [role], "paths": [path], "error": exc.strerror or str(exc)})
            continue
        # a cache not yet made is made in its nearest existing parent: that is what must be writable
        unwritable = [path] if not os.access(where, os.W_OK) else []
        if dev in by_dev:
            by_dev[dev]["roles"].append(role)
            by_dev[dev]["paths"].append(path)
            by_dev[dev]["unwritable"] = by_dev[dev].get("unwritable", []) + unwritable
            continue
        # f_files == 0: the file system keeps no inode count (btrfs, some network file systems).
        by_dev[dev] = {"roles": [role], "paths": [path], "mount_probe": where,
                       "size_bytes": st.f_blocks * st.f_frsize, "free_bytes": st.f_bavail * st.f_frsize,
                       "total_inodes": st.f_files or None, "free_inodes": st.f_favail if st.f_files else None,
                       # the longest file name it takes (statvfs f_namemax): 255 on ext4, XFS, btrfs;
                       # 143 on eCryptfs with encrypted names
                       "name_max": st.f_namemax or None, "unwritable": unwritable}
        mount = _mount_for(mounts, dev, where)
        if mount:
            by_dev[dev]["fstype"], by_dev[dev]["options"] = mount
    return list(by_dev.values())


def _rlimit_nproc() -> Dict[str, Any]:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard, "uid": os.getuid()}


def _rlimit_stack() -> Dict[str, Any]:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard}


def _rlimit_as() -> Dict[str, Any]:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard}


def _rlimit(name: str) -> Dict[str, Any]:
    import resource

    soft, hard = resource.getrlimit(getattr(resource, name))
    inf = resource.RLIM_INFINITY
    return {"soft": None if soft == inf else soft, "hard": None if hard == inf else hard}


def _count(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


def _strings(v: Any, limit: int) -> List[str]:
    return [x[:limit] for x in v[:16] if isinstance(x, str)] if isinstance(v, list) else []


def _filesystems(data: Any) -> Any:
    """A replayed snapshot is untrusted: keep the shape statvfs_dirs writes, bounded."""
    if not isinstance(data, list):
        return Unknown("the recorded free space is not a list of file systems")
    out = []
    for fs in data[:64]:
        if not isinstance(fs, dict):
            continue
        rec: Dict[str, Any] = {"roles": _strings(fs.get("roles"), 40), "paths": _strings(fs.get("paths"), 300)}
        for key in ("size_bytes", "free_bytes", "total_inodes", "free_inodes", "name_max"):
            rec[key] = _count(fs.get(key))
        if isinstance(fs.get("mount_probe"), str):
            rec["mount_probe"] = fs["mount_probe"][:300]
        if isinstance(fs.get("error"), str):
            rec["error"] = fs["error"][:200]
        if isinstance(fs.get("fstype"), str):
            rec["fstype"] = fs["fstype"][:40]
        if isinstance(fs.get("unwritable"), list):   # absent from recordings made before it was read
            rec["unwritable"] = _strings(fs.get("unwritable"), 300)
        if fs.get("options") is not None:
            rec["options"] = _strings(fs.get("options"), 80)
        out.append(rec)
    return out


def _sizes(data: Any, what: str) -> Any:
    """A limit recorded as {"soft", "hard"} (bytes or a count); None is unlimited only where the recording said null."""
    if not isinstance(data, dict):
        return Unknown(f"the recorded {what} is not a record")
    out = {k: _count(data.get(k)) for k in ("soft", "hard")}
    if any(data.get(k) is not None and out[k] is None for k in out):
        return Unknown(f"the recorded {what} holds values that are not counts")
    return out


def _nproc(data: Any, what: str = "RLIMIT_NPROC") -> Any:
    if not isinstance(data, dict):
        return Unknown("the recorded RLIMIT_NPROC is not a record")
    out = {k: _count(data.get(k)) for k in ("soft", "hard", "uid")}
    # None is "unlimited" only where the recording said null; anything else unreadable is unknown
    if any(data.get(k) is not None and out[k] is None for k in out):
        return Unknown("the recorded RLIMIT_NPROC holds values that are not counts")
    return out


def _stack(data: Any, what: str = "RLIMIT_STACK") -> Any:
    """RLIMIT_STACK in bytes; None is unlimited only where the recording said null."""
    if not isinstance(data, dict):
        return Unknown("the recorded RLIMIT_STACK is not a record")
    out = {k: _count(data.get(k)) for k in ("soft", "hard")}
    if any(data.get(k) is not None and out[k] is None for k in out):
        return Unknown("the recorded RLIMIT_STACK holds values that are not sizes")
    return out


def _address_space(data: Any, what: str = "RLIMIT_AS") -> Any:
    """RLIMIT_AS in bytes; None is unlimited only where the recording said null."""
    if not isinstance(data, dict):
        return Unknown("the recorded RLIMIT_AS is not a record")
    out = {k: _count(data.get(k)) for k in ("soft", "hard")}
    if any(data.get(k) is not None and out[k] is None for k in out):
        return Unknown("the recorded RLIMIT_AS holds values that are not sizes")
    return out


def _pasted(root: SysRoot) -> Optional[Dict[str, Dict[str, Any]]]:
    """The limits a pasted listing shows (parse.rlimits: a shell's ulimit -a or limit, or
    /proc/PID/limits), or None where the snapshot holds none. Read only from recordings (a paste):
    a live node's limits are its getrlimit(2) probes."""
    texts = []
    for argv in (SHELL_ARGV, PROC_ARGV):
        try:
            res = root.run(argv, live=False)
        except Missing:
            continue
        if res.ok and res.stdout:
            texts.append(res.stdout)
    if not texts:
        return None
    return parse_limits("\n".join(texts))


def _from_paste(pasted: Optional[Dict[str, Dict[str, Any]]], resource: str, what: str, why: str) -> Any:
    """One limit from the pasted listing: soft (None: unlimited), hard where it was shown (absent
    otherwise: a shell's listing shows one value) and the form it was read from."""
    if pasted is None:
        return Unknown(f"{what} not read: {why}")
    rec = pasted.get(resource)
    if rec is None:
        return Unknown(f"{what} not read: the pasted limits listing does not show it (or shows it twice, differently)")
    # the listing's own line numbers are not the paste's: left out
    return dict({k: v for k, v in rec.items() if k != "line"}, pasted=True)


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    pasted: Any = False  # read once, where a probe was not recorded
    env = root.environ()
    try:
        out["filesystems"] = _filesystems(root.probe("statvfs_write_dirs", lambda: statvfs_dirs(write_dirs(env))))
    except Missing as exc:
        out["filesystems"] = Unknown(f"free space not read: {exc}")
    for key, probe, fn, check, resource, what in (
            ("nproc", "rlimit_nproc", _rlimit_nproc, _nproc, "nproc", "RLIMIT_NPROC"),
            ("stack", "rlimit_stack", _rlimit_stack, _stack, "stack", "RLIMIT_STACK"),
            ("address_space", "rlimit_as", _rlimit_as, _address_space, "as", "RLIMIT_AS"),
            ("memlock", "rlimit_memlock", lambda: _rlimit("RLIMIT_MEMLOCK"), _sizes, "memlock", "RLIMIT_MEMLOCK"),
            ("nofile", "rlimit_nofile", lambda: _rlimit("RLIMIT_NOFILE"), _sizes, "nofile", "RLIMIT_NOFILE")):
        try:
            out[key] = check(root.probe(probe, fn), what)
        except Missing as exc:
            if pasted is False:
                pasted = _pasted(root)
            out[key] = _from_paste(pasted, resource, what, str(exc))
    return {"limits": out}
