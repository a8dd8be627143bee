"""ENOSPC that is not data space: a directory whose ext4/ldiskfs index is full (the kernel's own line,
knowledge/messages/ldiskfs.toml), and a file create on Lustre failing with "No space left on device",
which on Lustre is as often the MDT's inodes or one directory's entries as the OSTs' blocks."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "lustre-mdt-directory-full"
# A path on a Lustre mount as sites name it: /lustre/... (ORNL, JINR, NERSC's former ones) or a
# directory of that name deeper down. Sites that mount Lustre as /scratch are not recognised from the
# path alone; the live check reads the mount's fstype.
_ON_LUSTRE = re.compile(r"(?:^|/)lustre[0-9]?/")
# What creates a file: open() with O_CREAT (IOR's and mdtest's "open64(..., 66, 0664)": O_RDWR|O_CREAT),
# creat, mkdir, mknod, or the words of a tool that creates many files.
_CREATES = re.compile(r"\b(?:open(?:64|at)?\(|creat\(|mkdir|mknod|mdtest|touch)", re.I)
_PATH = re.compile(r"""["'(](/[^"'\s,)]{1,300})""")

_FIX_LDISKFS = ("lfs df -i   # every Lustre mount's MDTs and OSTs: inodes used and free\n"
                "lfs getdirstripe .   # run in the directory the files go to: one MDT holds it unless it is striped\n"
                "lfs mkdir -c -1 ./spread   # a directory striped over every MDT (DNE) for many files in one directory; or "
                "spread the files over subdirectories\n"
                "# administrators: tune2fs -O large_dir on each MDT's ldiskfs device (e2fsprogs 1.45.6.wc2 or later) lifts "
                "the per-directory limit")


def _fix_ext4(device: str) -> str:
    dev = f"/dev/{device}" if re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", device or "") else "/dev/DEVICE"
    return (f"sudo dumpe2fs -h {dev} 2>/dev/null | grep -i 'features'   # large_dir among them: three index levels, "
            "else two\n"
            f"sudo tune2fs -O large_dir {dev}   # administrators: allow the third level (kernel 4.13 or later)\n"
            "# or spread the files over subdirectories: one directory of millions of entries meets the limit either way")


_FIX_ENOSPC = ("lfs df -i {mount}   # the MDTs' inodes (IUse%): full here is 'No space left on device' with OST space free\n"
               "lfs df -h {mount}   # the OSTs' blocks, for the other cause\n"
               "ls -f {dir} | wc -l   # entries in the directory the files were created in: millions in one directory "
               "meet the MDT's per-directory limit\n"
               "# many files in one directory: spread them over subdirectories, or lfs mkdir -c -1 a directory striped "
               "over the MDTs")


def _path(s: dict) -> Optional[str]:
    m = _PATH.search(str(s.get("text", "")))
    return m.group(1) if m else (str(s.get("path")) if s.get("path") else None)


@rule("SYS034", SYMBOL, "error", "a directory or a Lustre MDT has no room for more entries", impact=5,
      also={"warning": "a file create on a Lustre path failed with ENOSPC: MDT inodes or directory entries as likely as data space"})
def lustre_mdt_directory_full(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the kernel's ext4/ldiskfs refusal of a new directory entry: "Directory
        index full!", "Directory (ino: N) index full, reach max htree level :2" and "Large
        directory feature is not enabled on this filesystem" (an error: the directory is full, on
        an MDT or any ext4 file system). Without the kernel's line, a program's "No space left on
        device" (errno 28) while creating a file (open with O_CREAT, mkdir, mdtest) on a path under
        /lustre: a warning, since on Lustre a create fails with ENOSPC when the MDT is out of
        inodes or the directory out of entries as well as when the OSTs are full.

    Why it matters:
        df shows free space and the job still fails: each file needs an inode on an MDT and an
        entry in its directory, and an ldiskfs MDT without large_dir caps the entries of one
        directory. Jobs that write one file per task into one directory (mdtest's hard phase,
        checkpoint shards) meet it first.

    How to fix:
        lfs df -i shows the MDTs' inodes; spread the files over subdirectories or a directory
        striped over the MDTs (lfs mkdir -c); administrators can enable large_dir on the MDT.

    References:
        - https://doc.lustre.org/lustre_manual.xhtml (lfs df -i; lfs mkdir -c: striped directories; MDT sizing)
        - https://github.com/torvalds/linux/blob/master/fs/ext4/namei.c (ext4_dx_add_entry: index full, large_dir)
        - https://man7.org/linux/man-pages/man5/ext4.5.html (large_dir)
        - https://github.com/VI4IO/io-500-dev/issues/63 (mdtest hard write: ENOSPC on the MDT)
    """
    told = catalogued(f, SYMBOL)
    if told:
        s = next((t for t in told if t.get("id") != "ldiskfs:large-dir-not-enabled"), told[0])
        fs = str(s.get("fs") or "").upper()
        where = "a Lustre MDT or OST (ldiskfs)" if fs == "LDISKFS" else "an ext4 (or ldiskfs) file system"
        yield Hit(message=f"the kernel refused a new directory entry (line {s.get('line')}: \"{told_text(s)}\"): one "
                          f"directory on {where} holds as many entries as its index allows, so creating files there "
                          "fails with \"No space left on device\" with space and inodes free",
                  fix=_FIX_LDISKFS if fs == "LDISKFS" else _fix_ext4(str(s.get("device") or "")),
                  evidence=told_evidence(s))
        return
    for s in f.get("ticket.symptoms") or []:
        if "disk-full" not in (s.get("rules") or []):
            continue
        path = _path(s)
        if not path or not _ON_LUSTRE.search(path) or not _CREATES.search(str(s.get("text", ""))):
            continue
        at = _ON_LUSTRE.search(path)
        mount = path[:at.end()].rstrip("/") or "/lustre"
        directory = path.rsplit("/", 1)[0] or "/"
        yield Hit(message=f"creating {path} on Lustre failed with \"No space left on device\" (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): on Lustre a create fails so when the MDT has no free inodes or the "
                          "directory no room for more entries, as well as when the OSTs are full; lfs df -i and "
                          "lfs df -h tell which",
                  fix=_FIX_ENOSPC.format(mount=mount, dir=directory), evidence=told_evidence(s), severity="warning")
        return
