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


@rule("SYS027", SYMBOL, "error", "a FUSE mount's client process has exited: the mount answers nothing", impact=6,
      also={"info": "the words alone, with no path or program shown"})
def fuse_mount_client_died(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, "Transport endpoint is not connected" (ENOTCONN) on a file path: ls's
        "cannot access PATH", df's and cd's "PATH: ...", a FUSE client's own check of its mount
        point (s3fs's "unable to access MOUNTPOINT"), libfuse's "bad mount point `PATH'" when a
        client is started on a dead mount, Python's "[Errno 107] ...: 'PATH'". The kernel's FUSE
        driver returns ENOTCONN for every call once the connection to the user-space client is
        gone. The words alone on a line of their own (no path, no program) are quoted back at info.

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
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = next((t for t in told if t.get("id") != _BARE), None)
    if s is None:
        bare = told[0]
        yield Hit(message=f"line {bare.get('line')}: \"{told_text(bare)}\": ENOTCONN's words alone; on a file path they mean a "
                          "FUSE mount whose client process has exited (a socket that is not connected reads the same)",
                  fix=_fix("PATH"), severity="info", evidence=told_evidence(bare))
        return
    path = str(s.get("path") or "").strip("'\"‘’ ") or "PATH"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {path} is on a FUSE mount whose client process has exited; "
                      "everything under it fails until it is unmounted and mounted again",
              fix=_fix(path if " " not in path else f"'{path}'"), evidence={**told_evidence(s), "path": path})
