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
