"""An NFS export that squashes root refusing chown and chmod (knowledge/messages/ownership.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, told_text

SYMBOL = "nfs-export-squash-denies-chmod"
_REFUSALS = ("ownership:coreutils-chown-eperm", "ownership:coreutils-chmod-eperm", "ownership:docker-failed-to-chmod")
_FIX = ("stat -f -c %T PATH; findmnt -T PATH   # on the client: nfs or nfs4 is an export of another machine\n"
        "# on the NFS server (its administrators): exportfs -v lists each export's options; root_squash (the default) "
        "or all_squash map root to the anonymous user\n"
        "# either chown the directory on the server to the uid the containers or jobs run as (or to anonuid), "
        "or run the chown/chmod as that uid; no_root_squash only for a trusted client, as exports(5) warns")


def _first(f: FactView, *ids: str):
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in ids), None)


@rule("SYS020", SYMBOL, "error", "an NFS export that squashes root refuses chown and chmod", impact=4,
      also={"warning": "chown or chmod refused on a path the paste shows on NFS, no squashing option shown"})
def nfs_export_squash_denies_chmod(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, chown's "changing ownership of '<path>': Operation not permitted",
        chmod's "changing permissions of ...", or dockerd's "failed to chmod on <path>: ...
        operation not permitted", beside an export option that squashes root (root_squash,
        all_squash, a NAS's "squash root"): an error. Beside an NFS mount or volume shown with no
        squashing option: a warning.

    Why it matters:
        An NFS server maps uid 0 to the anonymous user (root_squash, the default in exports(5)),
        or every uid (all_squash). Root on a client, a container's root among them, then owns
        nothing on the export: chown fails, and chmod of files the anonymous user does not own.
        Containers that chown their data directory at start (databases, volume plugins) stop there.

    How to fix:
        Make the directory belong on the server to the uid the job or container runs as (or to
        the export's anonuid), or run the step as that uid; no_root_squash only for a trusted
        client, on the server.

    References:
        - https://man7.org/linux/man-pages/man5/exports.5.html (User ID Mapping)
        - https://www.gnu.org/software/coreutils/manual/html_node/chown-invocation.html
        - https://docs.kernel.org/filesystems/nfs/index.html
    """
    refused = _first(f, *_REFUSALS)
    if refused is None:
        return
    squash = _first(f, "ownership:export-squash-said")
    nfs = _first(f, "ownership:nfs-volume-shown")
    if squash is None and nfs is None:
        return   # EPERM alone: not root, an immutable file, a read-only bind: not this rule's
    said = (f"the export squashes root (line {squash.get('line')}: \"{squash.get('option')}\")" if squash is not None
            else f"the path is on NFS (line {nfs.get('line')}) and an export squashes root by default (root_squash)")
    yield Hit(message=f"the file server refused to change owner or mode (line {refused.get('line')}: \"{told_text(refused)}\"): "
                      f"{said}, so root on this client owns nothing there",
              severity=None if squash is not None else "warning", fix=_FIX, evidence=told_evidence(refused))


ROOT_SQUASH = "nfs-root-squash"
# Paths that are network file systems on most clusters (home, project and scratch exports); root_squash
# acts only there. A local path refused to root is something else (an LSM, a FUSE mount without allow_root).
_SHARED_PREFIXES = ("/home/", "/home2/", "/u/", "/users/", "/project/", "/projects/", "/work/", "/scratch/",
                    "/data/", "/nfs/", "/shared/", "/gpfs/", "/lustre/", "/mnt/")
_ROOT_RUNTIME = "/user-0/"   # pyxis' and enroot's per-uid runtime and data paths (ENROOT_*_PATH .../user-$(id -u))
_SQUASH_FIX = ("id -u   # 0: the container was started as root, whom an NFS export maps to nobody (root_squash)\n"
               "findmnt -T SOURCE_PATH   # nfs or nfs4: the path is on another machine's export\n"
               "sudo -u OWNER srun --container-image=IMAGE --container-mounts=SOURCE_PATH:/data ...   # run as the "
               "user who owns the data, not as root\n"
               "# or bind a path root can read (a node-local copy); no_root_squash only on the server, for a trusted client (exports(5))")


@rule("SYS033", ROOT_SQUASH, "warning",
      "root was refused a path on a network home: consistent with an NFS export that squashes root", impact=4)
def nfs_root_squash(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, enroot's "enroot-mount: failed to mount: <path> at <target>: Permission
        denied" (pyxis prints it under "slurmstepd: error: pyxis:") for a path under a shared tree
        (/home, /scratch, /project ...), where the container was started as root: a root shell
        prompt ("[root@node0 dir]# srun ...") or enroot's per-uid path of uid 0 (".../user-0/").
        A warning: root refused on a shared path is what root_squash does, but the paste does not
        show the export's options.

    Why it matters:
        An NFS server maps uid 0 to the anonymous user (root_squash, the default in exports(5)),
        so root on a client reads only what "other" may read: a user's private directory under
        /home is closed to it, while the same bind works from root's own directory or as the user.

    How to fix:
        Run the job as the user who owns the data, not as root; or bind a path root can read;
        no_root_squash only on the server, for a trusted client.

    References:
        - https://man7.org/linux/man-pages/man5/exports.5.html (User ID Mapping: root_squash)
        - https://github.com/NVIDIA/enroot/blob/8ea147d337da60cb1c557140f3a85cdf0d620968/bin/enroot-mount.c (do_mount)
        - https://github.com/NVIDIA/enroot/issues/140 (the maintainer: this looks like NFS root squashing)
        - https://github.com/NVIDIA/pyxis
    """
    mount = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "enroot:enroot-mount-failed"
                  and str(s.get("error", "")).startswith("Permission denied")), None)
    if mount is None or not str(mount.get("source", "")).startswith(_SHARED_PREFIXES):
        return
    prompt = _first(f, "ownership:root-shell-prompt")
    if prompt is not None:
        as_root = f"the command ran as root (line {prompt.get('line')}: \"{told_text(prompt)[:60]}\")"
    elif _ROOT_RUNTIME in str(mount.get("target", "")):
        as_root = "the container ran as uid 0 (enroot's path .../user-0/)"
    else:
        return
    yield Hit(message=f"line {mount.get('line')}: \"{told_text(mount)}\": {as_root} and was refused "
                      f"{mount.get('source')}, a path on a shared tree: the file server squashes root (root_squash) "
                      "and root reads only what any user may",
              fix=_SQUASH_FIX, evidence=told_evidence(mount))
