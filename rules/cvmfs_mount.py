"""A CernVM-FS repository the client could not mount, by the loader's own failure code
(knowledge/messages/cvmfs.toml: cvmfs/loader.h enum Failures, printed "<boot error> (<code> - <text>)")."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cvmfs-mount-failed"

# cvmfs_config's own commands (cvmfs/cvmfs cvmfs/cvmfs_config @ ae7450ec: chksetup, showconfig,
# probe, wipecache, killall); REPO is the repository's name (atlas.cern.ch, ...).
_CHECK = ("cvmfs_config chksetup   # the client's own checks of its configuration, cache and proxies\n"
          "cvmfs_config probe REPO   # REPO: the repository, as in /cvmfs/REPO")
_BY_CODE = {
    16: "cvmfs_config showconfig REPO | grep -E 'CVMFS_(SERVER_URL|HTTP_PROXY)='   # where the client fetches "
        "the repository's manifest from, and through which proxy (an empty SERVER_URL: no configuration for a "
        "repository of that name)\n"
        "sudo cvmfs_config wipecache   # administrators: a broken cached copy of the catalog",
    15: "ls /etc/cvmfs/keys/ /etc/cvmfs/keys/*/   # the public keys the signature is checked against: the "
        "repository's domain needs its key (the cvmfs-config package of the site or experiment)",
    9: "cvmfs_config showconfig REPO | grep -E 'CVMFS_(CACHE_BASE|QUOTA_LIMIT)='   # the cache folder and its size\n"
       "df -h \"$(cvmfs_config showconfig REPO | sed -n 's/^CVMFS_CACHE_BASE=\\([^ ]*\\).*/\\1/p')\"   # full, "
       "missing or read-only: the cache the cvmfs user must write",
    4: "lsmod | grep -w fuse; ls -l /dev/fuse   # the FUSE module and device the mount needs",
    3: "ls -ld /dev/fuse \"$(cvmfs_config showconfig REPO | sed -n 's/^CVMFS_CACHE_BASE=\\([^ ]*\\).*/\\1/p')\"   "
       "# the cvmfs user (CVMFS_USER) must open /dev/fuse and write the cache",
    23: "cvmfs_config showconfig REPO | grep -E 'CVMFS_(HTTP_PROXY|PAC_URLS)='   # 'auto' found no proxy: name one "
        "(CVMFS_HTTP_PROXY in /etc/cvmfs/default.local)",
    24: "pgrep -a cvmfs2   # a client still running for this repository\n"
        "sudo cvmfs_config killall   # administrators: end stuck clients, then mount again",
    20: "findmnt /cvmfs/REPO   # what is mounted there already",
    21: "findmnt /cvmfs/REPO   # the repository is mounted already: use it, or umount it first",
}


@rule("ENV129", SYMBOL, "error", "a CernVM-FS repository could not be mounted on this node", impact=7)
def cvmfs_mount_failed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The CernVM-FS client's failure to mount a repository, as it prints it on mount or on
        first access through autofs: its boot error, then the loader's failure code and text in
        parentheses, "Failed to initialize root file catalog (16 - file catalog failure)", for
        every code of the loader's table (cvmfs/loader.h enum Failures): the manifest or root
        catalog not fetched (no Stratum-1 server or proxy answered, a repository name its
        servers do not publish, no configuration for it), a signature its keys do not verify, the
        cache missing or full, FUSE unavailable, a proxy auto-discovery that found none, a stuck
        client holding the workspace, and the rest.

    Why it matters:
        The software the job takes from /cvmfs (an experiment's releases, EESSI's or the
        Compute Canada stack, containers unpacked there) is not on this node: modules, compilers
        and images under /cvmfs fail or are not found, on this node only.

    How to fix:
        cvmfs_config chksetup and cvmfs_config probe REPO on the node; then by the code: the
        server URL and proxy the client uses (cvmfs_config showconfig REPO) for 16, the keys for
        15, the cache for 9, FUSE for 3 and 4, a named proxy for 23, stuck clients for 24. Most
        are for the node's administrators: report the node and the exact line.

    References:
        - https://github.com/cvmfs/cvmfs/blob/ae7450ec9c98d45ee1c1c3ab2cc7955dcbfd928a/cvmfs/loader.h
        - https://cvmfs.readthedocs.io/en/stable/cpt-configure.html
        - https://github.com/cvmfs/cvmfs/issues/4044 (a repository name its servers do not publish: 16)
        - https://github.com/AAROC/DevOps/issues/260
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    code = s.get("code")
    try:
        code = int(code)
    except (TypeError, ValueError):
        code = None
    extra = _BY_CODE.get(code)
    yield Hit(message=f"CernVM-FS could not mount a repository (line {s.get('line')}: \"{told_text(s)}\"): "
                      f"{s.get('means')}; the software this node takes from /cvmfs is not there",
              fix=_CHECK + ("\n" + extra if extra else ""), evidence=told_evidence(s))
