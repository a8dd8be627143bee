"""A FUSE mount (sshfs, s3fs, ossfs, mfsmount, gcsfuse, ceph-fuse ...) whose user-space client has
exited: the kernel's FUSE driver answers every call on it with ENOTCONN, which programs print as
"Transport endpoint is not connected" after the path (knowledge/messages/fuse.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "fuse-mount-client-died"
_BARE = "fuse:bare-not-connected"


def _fix(path: str) -> str:
    return (f"findmnt -T {path}   # the mount holding it (TYPE fuse.s3fs, fuse.sshfs ...): still listed, its client gone\n"
            "fusermount -u MOUNTPOINT || fusermount -uz MOUNTPOINT   # unmount it (fusermount3 with FUSE 3; -z lazily "
            "while files are open; root: umount -l MOUNTPOINT)\n"
            "# then mount it again with the client's own command, or sudo mount MOUNTPOINT for an /etc/fstab entry\n"
            "journalctl -k | grep -iE 'segfault|killed process'   # why the client died: a crash (segfault) or the OOM killer; "
            "and the client's own log")


def _cvmfs_fix(repo: str) -> str:
    # The recovery cvmfs's maintainers and users give for a stuck client mount under autofs
    # (cvmfs/cvmfs#4109): a lazy unmount, every cvmfs2 stopped, autofs mounting afresh.
    return (f"cvmfs_config probe {repo}   # OK once the repository mounts and answers\n"
            f"sudo umount -l /cvmfs/{repo}; sudo cvmfs_config killall   # a stuck or dead client: unmount lazily and stop "
            "every cvmfs2 process\n"
            "sudo systemctl restart autofs   # autofs mounts the repository again on the next access\n"
            f"cvmfs_config stat -v {repo}; sudo cvmfs_config chksetup   # if it still fails: the proxy, the servers and "
            "the client's setup")


@rule("SYS027", SYMBOL, "error", "a FUSE mount's client process has exited: the mount answers nothing", impact=6,
      also={"info": "the words alone, with no path or program shown",
            "warning": "cvmfs_config probe failing on a repository: the client did not mount it, or its mount is stuck"})
def fuse_mount_client_died(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, "Transport endpoint is not connected" (ENOTCONN) on a file path: ls's
        "cannot access PATH", df's and cd's "PATH: ...", a FUSE client's own check of its mount
        point (s3fs's "unable to access MOUNTPOINT"), libfuse's "bad mount point `PATH'" when a
        client is started on a dead mount, Python's "[Errno 107] ...: 'PATH'". The kernel's FUSE
        driver returns ENOTCONN for every call once the connection to the user-space client is
        gone. The words alone on a line of their own (no path, no program) are quoted back at info.
        CernVM-FS: cvmfs_config probe's "Probing /cvmfs/REPO... Failed!" is a warning (the client
        did not mount the repository, or its mount is stuck; the loader's failure code, catalogued
        in knowledge/messages/cvmfs.toml, says which), and a dead mount under /cvmfs gets cvmfs's
        own recovery (umount -l, cvmfs_config killall, an autofs restart).

    Why it matters:
        Every file under the mount fails until it is unmounted and mounted again; jobs reading
        data or writing results there fail with an error that names a network, not the file
        system. The client died for a reason (a crash, the OOM killer) that comes back.

    How to fix:
        Find the mount (findmnt -T), unmount it (fusermount -u, lazily with -z), mount it again,
        and read the kernel log and the client's own log for why it exited.

    References:
        - https://github.com/torvalds/linux/blob/master/fs/fuse/dev.c (fuse_get_req: -ENOTCONN once the connection is gone)
        - https://github.com/libfuse/libfuse/blob/master/util/fusermount.c (fusermount -u, -z)
        - https://github.com/aliyun/ossfs/issues/40 (the client segfaulted; remounting fixed it)
        - https://github.com/moosefs/moosefs/issues/274 (the maintainer: the mount process died)
        - https://github.com/cvmfs/cvmfs/blob/devel/cvmfs/cvmfs_config (cvmfs_config_probe, killall)
        - https://github.com/cvmfs/cvmfs/issues/4109 (a stuck client mount under autofs: umount -l, cvmfs_config killall, autofs restarted)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    probe = next((t for t in told if t.get("id") == "cvmfs:probe-failed"), None)
    s = next((t for t in told if t.get("id") not in (_BARE, "cvmfs:probe-failed")), None)
    # The loader's own failure code (cvmfs.toml) says why the client never mounted it: not a dead client.
    started = not any(str(t.get("id", "")).startswith("cvmfs:k") for t in f.get("ticket.symptoms") or [])
    if probe is not None and s is None and started:
        repo = str(probe.get("path") or "").rstrip("/").rsplit("/", 1)[-1] or "REPOSITORY"
        yield Hit(message=f"line {probe.get('line')}: \"{told_text(probe)}\": cvmfs_config probe found no working cvmfs2 "
                          f"mount of {repo}: the client did not mount it (the loader's own error says why), or its mount "
                          "is stuck or its client gone, which a lazy unmount and an autofs restart clear",
                  fix=_cvmfs_fix(repo), severity="warning", evidence={**told_evidence(probe), "path": probe.get("path")})
        return
    if s is None:
        if probe is not None:
            return
        bare = told[0]
        yield Hit(message=f"line {bare.get('line')}: \"{told_text(bare)}\": ENOTCONN's words alone; on a file path they mean a "
                          "FUSE mount whose client process has exited (a socket that is not connected reads the same)",
                  fix=_fix("PATH"), severity="info", evidence=told_evidence(bare))
        return
    path = str(s.get("path") or "").strip("'\"‘’ ") or "PATH"
    repo = path.split("/")[2] if path.startswith("/cvmfs/") and path.count("/") >= 2 and path.split("/")[2] else ""
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {path} is on a FUSE mount whose client process has exited; "
                      "everything under it fails until it is unmounted and mounted again",
              fix=_cvmfs_fix(repo) if repo else _fix(path if " " not in path else f"'{path}'"),
              evidence={**told_evidence(s), "path": path})
