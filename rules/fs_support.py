"""What a file system does not support, as the programs that meet it say so (knowledge/messages/
fs_support.toml, errno.toml's ENAMETOOLONG, prose.toml): the NFS client's silly-renamed files of a file
still held open, a file name longer than the file system allows, a FIFO it cannot hold, and the shared
writable mmap LMDB needs."""

from __future__ import annotations

import os
import re
from typing import Iterator, List, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, path_var_line, told_evidence, told_text

_NFS_NAME = re.compile(r"""([^\s'"`‘’]{0,1024}/)?\.nfs[0-9a-f]{24}""")


def _dir_line(where: Optional[str], what: str, said: str = "as the pasted line names it") -> str:
    return path_var_line("DIR", where, f"{what}, {said}", "/path/to/dir", f"{what}: the pasted line does not name it")


def _nfs_fix(where: Optional[str]) -> str:
    return "\n".join((
        _dir_line(where, "the directory that would not go"),
        'lsof +D "$DIR" 2>/dev/null | grep -F .nfs   # the process holding the deleted file open; or: fuser -v "$DIR"/.nfs*',
        "kill PID   # end that process (or let it finish): the NFS client then removes its .nfs file itself",
        'rm -rf "$DIR"   # now the directory can be removed',
        "# the process may run on another node of the cluster: run lsof there (the job that used the directory)"))


def _nfs_dir(text: str) -> Optional[str]:
    m = _NFS_NAME.search(text)
    if not m:
        return None
    return (m.group(1) or "./").rstrip("/") or "/"


@rule("SYS042", "nfs-files-held-open-busy", "warning",
      "a directory on NFS cannot be removed while a process holds one of its deleted files open", impact=3)
def nfs_files_held_open_busy(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a removal refused with EBUSY ("Device or resource busy") for a file named
        .nfs followed by 24 hexadecimal digits, as rm, Perl's File::Path (rmtree: "cannot unlink
        file for ..."), git clean and Python (shutil.rmtree, os.unlink: "[Errno 16] Device or
        resource busy: '.nfs...'") print it; "Directory not empty" for its directory follows.

    Why it matters:
        The Linux NFS client cannot delete a file on the server while a process of this client
        still has it open (the server would lose it), so it renames it to .nfs<file id in 16 hex
        digits><counter in 8> (fs/nfs/unlink.c nfs_sillyrename) and deletes it at the last close.
        Removing that name again is refused with EBUSY, and the directory cannot be removed until
        the process ends. The line states what happened: a process still holds the deleted file
        open. It is a warning, not an error: nothing is broken, and the directory goes once the
        process closes the file.

    How to fix:
        Find the process holding the file (lsof +D on the directory, or fuser -v on the .nfs
        file), on this node or on the node where the job ran, end it, then remove the directory.

    References:
        - https://github.com/torvalds/linux/blob/v6.12/fs/nfs/unlink.c (nfs_sillyrename: ".nfs%0*llx%0*x", EBUSY for a name already silly-renamed)
        - https://nfs.sourceforge.net/ (Linux NFS FAQ, D2: "silly rename" of files still open)
        - https://man7.org/linux/man-pages/man8/lsof.8.html (+D: files open under a directory)
        - https://github.com/tseemann/snippy/issues/88 (the maintainer: the .nfs files of a file deleted while open)
    """
    told = catalogued(f, "nfs-files-held-open-busy")
    if not told:
        return
    s = told[0]
    names = {f".nfs{t.get('fileid')}{t.get('counter')}" for t in told if t.get("fileid")}
    first = f".nfs{s.get('fileid')}{s.get('counter')}" if s.get("fileid") else ".nfs..."
    fileid = str(s.get("fileid") or "")
    inode = f" (file id {int(fileid, 16)} on the server, hexadecimal {fileid.lstrip('0') or '0'})" if fileid else ""
    more = f" and {len(names) - 1} more such file(s)" if len(names) > 1 else ""
    yield Hit(message=f"{first}{more}: the NFS client's name for a file deleted while a process still holds it "
                      f"open{inode}; it cannot be removed until that process closes it (line {s.get('line')}: "
                      f"\"{told_text(s)}\")",
              fix=_nfs_fix(_nfs_dir(str(s.get("text") or ""))), evidence=told_evidence(s))


# NAME_MAX on Linux (include/uapi/linux/limits.h: 255 bytes), the limit of ext4, XFS and btrfs, and
# eCryptfs' limit with encrypted file names over such a file system (fs/ecryptfs/crypto.c
# ecryptfs_set_f_namelen, ENC_NAME_MAX_BLOCKLEN_8_OR_16); PATH_MAX 4096 with its NUL.
_NAME_MAX, _ECRYPTFS_NAME_MAX, _PATH_MAX = 255, 143, 4096
_QUOTED = re.compile(r"""'([^'\n]{1,4096})'|"([^"\n]{1,4096})"|`([^'`\n]{1,4096})'|‘([^’\n]{1,4096})’""")
# Marks a name read from a line cut inside it (a symptom's text is at most 300 characters).
_CUT = "\0cut"
_LAST_TOKEN = re.compile(r"([^\s:'\"`]{1,4096})(?::[ \t]{0,2}Cannot [a-z]{1,20})?[ \t]{0,2}$")

def _name_fix(name: Optional[str]) -> str:
    path = name.replace(_CUT, "") if name else ""
    return "\n".join((
        _dir_line(os.path.dirname(path) or None, "where the long name was written"),
        "stat -f -c '%l' \"$DIR\"   # the longest file name its file system allows: 143 is eCryptfs with encrypted "
        "names, 255 the usual",
        'df -T "$DIR"   # which file system that is (ecryptfs: an encrypted home directory)',
        "mkdir -p /tmp/$USER && cd /tmp/$USER   # or a directory on another file system (a scratch or project "
        "area): run or clone there, or point the program's cache there"))


def _live_name_fix(where: str) -> str:
    return "\n".join((
        _dir_line(where, "the directory whose file system takes short names", "on this node"),
        "stat -f -c '%l' \"$DIR\"; df -T \"$DIR\"   # the name limit and the file system (ecryptfs: an encrypted "
        "home directory)",
        "export TMPDIR=/tmp/$USER XDG_CACHE_HOME=/tmp/$USER/.cache; mkdir -p $XDG_CACHE_HOME   # caches and "
        "temporary files on a file system with 255-byte names, where /tmp is one (check it the same way)"))


def _name_of(text: str) -> Optional[str]:
    """The path a "File name too long" line names: Python's repr after the message, else the last
    quoted string or the last word before the message (coreutils, git, tar, rsync)."""
    at = text.find("File name too long")
    if at < 0:
        return None
    rest = text[at + len("File name too long: "):] if text[at:].startswith("File name too long: ") else ""
    after = _QUOTED.match(rest)
    if after:
        return next(g for g in after.groups() if g)
    if rest[:1] in ("'", '"'):
        return rest[1:] + _CUT   # the pasted line was cut inside the name: what is left is a lower bound
    before = text[:at].rstrip(" :")
    quoted = list(_QUOTED.finditer(before[-4200:]))
    if quoted and before.endswith(quoted[-1].group(0)):
        return next(g for g in quoted[-1].groups() if g)
    token = _LAST_TOKEN.search(before[-4200:])
    return token.group(1) if token else None


def _longest(path: str) -> Tuple[int, str]:
    """The longest component of ``path`` in bytes (UTF-8, as the kernel counts), and the component."""
    parts: List[str] = [p for p in path.replace(_CUT, "").split("/") if p]
    if not parts:
        return 0, ""
    best = max(parts, key=lambda p: len(p.encode("utf-8", "replace")))
    return len(best.encode("utf-8", "replace")), best


@rule("SYS043", "fs-filename-length-limited", "warning",
      "a file name is longer than the file system it is written to allows", impact=3,
      also={"info": "a name over 255 bytes (the program's own), or a name whose length the line does not show; "
                    "or the user's words that an eCryptfs directory limits names",
            "advice": "no failure pasted: on the node, a file system a run writes to takes names under 255 bytes"})
def fs_filename_length_limited(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        ENAMETOOLONG (errno 36, "File name too long") in every form programs print it: Python's
        "[Errno 36] File name too long: '<path>'", coreutils' and glibc's "<what> '<path>': File
        name too long", git's "unable to create file <path>: File name too long", tar's and
        rsync's, Rust's "(os error 36)". The rule measures the longest component of the quoted
        path in bytes: one of 144 to 255 bytes is within the 255 of ext4, XFS and btrfs, so the
        file system has a lower limit, the mark of eCryptfs with encrypted names (143), a warning;
        one over 255 is too long for any Linux file system, the program's own name (info); a line
        that shows no name is quoted back at info. Also, at info, the user's words that an
        eCryptfs directory limits file-name length. On a live node (or its snapshot), advice where
        a file system a run writes to (home, TMPDIR, the caches) takes names of fewer than 255
        bytes (statvfs f_namemax, read by the limits check).

    Why it matters:
        An encrypted home directory (eCryptfs, as Ubuntu's installer set it up) stores each name
        encrypted and encoded, which leaves 143 bytes for the name a program sees. Caches that name
        files by long hashes, git checkouts with long test file names and archives fail there and
        work anywhere else.

    How to fix:
        stat -f -c '%l' DIR shows the file system's name limit; write to a directory on another
        file system (a scratch, project or node-local directory), or point the program's cache or
        work directory there.

    References:
        - https://github.com/torvalds/linux/blob/v6.12/fs/ecryptfs/crypto.c (ecryptfs_set_f_namelen: ENC_NAME_MAX_BLOCKLEN_8_OR_16 143)
        - https://github.com/torvalds/linux/blob/v6.12/include/uapi/linux/limits.h (NAME_MAX 255, PATH_MAX 4096)
        - https://man7.org/linux/man-pages/man3/statvfs.3.html (f_namemax)
        - https://github.com/postmarketOS/pmbootstrap/issues/9 (a cache file name too long in an eCryptfs home; /tmp works)
    """
    told = catalogued(f, "fs-filename-length-limited")
    if not told:
        yield from _name_limit_of_write_dirs(f)
        return
    measured = []
    for s in told:
        name = _name_of(str(s.get("text") or "")) if str(s.get("id")).startswith("errno:") else None
        if name:
            measured.append((_longest(name), name, s))
    lower = [m for m in measured if _ECRYPTFS_NAME_MAX < m[0][0] <= _NAME_MAX and not m[1].endswith(_CUT)]
    if lower:
        (size, part), name, s = max(lower, key=lambda m: m[0][0])
        yield Hit(message=f"a file name of {size} bytes (\"{part[:60]}...\") was refused as too long, within the "
                          f"{_NAME_MAX} bytes ext4, XFS and btrfs allow: the file system there has a lower limit, the "
                          f"mark of eCryptfs with encrypted names ({_ECRYPTFS_NAME_MAX} bytes), as an encrypted home "
                          f"directory is (line {s.get('line')}: \"{told_text(s)}\")",
                  fix=_name_fix(name), evidence=told_evidence(s))
        return
    if measured:
        (size, part), name, s = max(measured, key=lambda m: m[0][0])
        if name.endswith(_CUT) and size <= _NAME_MAX:
            why = f"the pasted line is cut inside the name: its last component is at least {size} bytes, too few to tell"
        elif size > _NAME_MAX:
            why = f"a name of {size} bytes, longer than any Linux file system allows ({_NAME_MAX}): the program's own name"
        elif len(name.encode("utf-8", "replace")) >= _PATH_MAX:
            why = f"a path of {len(name.encode('utf-8', 'replace'))} bytes, over PATH_MAX ({_PATH_MAX}): the program's own path"
        else:
            why = (f"its longest name is {size} bytes, within eCryptfs' {_ECRYPTFS_NAME_MAX}: a file system with a still "
                   "lower limit, which stat -f shows")
        yield Hit(message=f"File name too long (line {s.get('line')}: \"{told_text(s)}\"): {why}",
                  fix=_name_fix(name), evidence=told_evidence(s), severity="info")
        return
    s = told[0]
    said = "the user's words" if str(s.get("id")).startswith("prose:") else "the line names no file"
    yield Hit(message=f"a file name too long for its file system (line {s.get('line')}: \"{told_text(s)}\"; {said}): "
                      f"eCryptfs, as encrypted home directories use, allows {_ECRYPTFS_NAME_MAX} bytes where most file "
                      f"systems allow {_NAME_MAX}", fix=_name_fix(None), evidence=told_evidence(s), severity="info")


def _name_limit_of_write_dirs(f: FactView) -> Iterator[Hit]:
    """The live judgement: a file system a run writes to (home, TMPDIR, caches: checks/limits.py) whose
    statvfs f_namemax is below 255. Advice: nothing failed yet, but a long name written there will."""
    for fs in f.get("limits.filesystems") or []:
        limit = fs.get("name_max") if isinstance(fs, dict) else None
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 < limit < _NAME_MAX:
            kind = " (eCryptfs with encrypted names)" if fs.get("fstype") == "ecryptfs" else ""
            yield Hit(message=f"{fs.get('mount_probe')} ({', '.join(fs.get('roles') or [])}) is on a file system that takes "
                              f"file names of at most {limit} bytes{kind}, where most take {_NAME_MAX}: caches named by "
                              "long hashes, git checkouts and archives with longer names fail there",
                      fix=_live_name_fix(str(fs.get("mount_probe"))), severity="advice",
                      evidence={"limits.filesystems": {k: fs.get(k) for k in ("roles", "paths", "mount_probe", "fstype",
                                                                              "name_max")}})
            return


def _fifo_fix(path: Optional[str]) -> str:
    where = path.strip("'‘’") if path else None
    return "\n".join((
        _dir_line(os.path.dirname(where) or "." if where else None, "where the FIFO was made"),
        'df -T "$DIR"; findmnt -T "$DIR" -o TARGET,FSTYPE,OPTIONS   # cifs/smb3 without unix extensions or sfu, vfat, '
        "exfat, ntfs (WSL's /mnt/c) hold no FIFOs",
        'mkfifo "$DIR"/probe.fifo && rm "$DIR"/probe.fifo   # \'Operation not permitted\': this file system cannot hold one',
        "mkdir -p /tmp/$USER/star && STAR ... --outTmpDir /tmp/$USER/star/run1   # STAR: its FIFOs on a local Linux "
        "file system (the directory must not exist yet)"))


@rule("SYS044", "fs-fifo-unsupported", "error", "the file system refuses FIFOs (named pipes) a program makes there",
      impact=4, also={"warning": "STAR could not create its FIFO: its own SOLUTION names the file system, no errno shown",
                      "info": "the user's words that a CIFS, NAS, NTFS or FAT mount does not allow FIFOs"})
def fs_fifo_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        mknod(2) of a FIFO refused by the file system: coreutils' "mkfifo: cannot create fifo
        '<file>': Operation not permitted" (or "Operation not supported"; cp -a copying a FIFO
        prints the same words), an error; STAR's "could not create FIFO file <outTmpDir>tmp.fifo.
        read1" (STAR prints no errno; its own SOLUTION names the file system), a warning; and at
        info the user's words that a CIFS/SMB, NAS, NTFS or FAT mount does not allow FIFOs.

    Why it matters:
        Linux refuses mknod with EPERM on a file system whose inodes have no mknod operation
        (fs/namei.c vfs_mknod): vfat, exFAT, sysfs, WSL's Windows drives, and the CIFS client
        unless the server negotiates the unix extensions or the mount says sfu. STAR feeds
        compressed reads through FIFOs in its temporary directory, so a run directory on such a
        share fails (or, with its own --readFilesCommand, hangs).

    How to fix:
        Put the FIFOs on a Linux file system: STAR's --outTmpDir on local disk or /tmp; check a
        directory with mkfifo before a run.

    References:
        - https://github.com/torvalds/linux/blob/v6.12/fs/namei.c (vfs_mknod: no ->mknod, -EPERM)
        - https://man7.org/linux/man-pages/man2/mknod.2.html (EPERM: the file system does not support the type of node)
        - https://man7.org/linux/man-pages/man8/mount.cifs.8.html (sfu: FIFOs without the unix extensions)
        - https://github.com/alexdobin/STAR/blob/b1edc1208d91a53bf40ebae8669f71d50b994851/source/Parameters_openReadsFiles.cpp (the message and its SOLUTION)
        - https://github.com/alexdobin/STAR/issues/1855 (the maintainer: the NAS partition does not support FIFO files)
    """
    told = catalogued(f, "fs-fifo-unsupported")
    s = next((t for t in told if t.get("id") == "fs_support:mkfifo-not-supported"), None) \
        or next((t for t in told if t.get("id") == "fs_support:star-could-not-create-fifo"), None) \
        or (told[0] if told else None)
    if s is None:
        return
    sid, quote = s.get("id"), f"(line {s.get('line')}: \"{told_text(s)}\")"
    if sid == "fs_support:mkfifo-not-supported":
        yield Hit(message=f"the file system refused to create a FIFO at {s.get('path')}: {s.get('reason')} is mknod's "
                          f"answer where a file system holds no FIFOs {quote}", fix=_fifo_fix(s.get("path")), evidence=told_evidence(s))
    elif sid == "fs_support:star-could-not-create-fifo":
        where = f" at {s.get('path')}" if s.get("path") else ""
        yield Hit(message=f"STAR could not create its FIFO{where} {quote}: STAR's own SOLUTION names a run directory whose "
                          "file system does not support FIFOs (a Windows or NAS share: CIFS, NTFS, FAT)",
                  fix=_fifo_fix(s.get("path")), evidence=told_evidence(s), severity="warning")
    else:
        yield Hit(message=f"the user says the mount does not allow FIFOs {quote}: a CIFS/SMB mount without the unix "
                          "extensions or sfu, or an NTFS or FAT one, refuses mknod (EPERM), and programs that stream "
                          "through named pipes there (STAR's --readFilesCommand) fail or hang",
                  fix=_fifo_fix(None), evidence=told_evidence(s), severity="info")


def _mmap_fix(where: Optional[str], what: str = "the LMDB directory") -> str:
    return "\n".join((
        _dir_line(where, what),
        'df -T "$DIR"   # dvs (Cray DVS), or another network file system',
        'mkdir -p /tmp/$USER && cp -r "$DIR" /tmp/$USER/   # the database on node-local disk (or /dev/shm), opened there',
        "# read-only use on DVS: lmdb.open(path, readonly=True, lock=False) maps read-only, which DVS allows"))


@rule("SYS045", "fs-shared-mmap-unsupported", "warning",
      "the file system does not support the shared writable mmap a program (LMDB) needs", impact=4,
      also={"error": "strace shows mmap(..., MAP_SHARED, ...) refused with ENODEV or ENOSYS"})
def fs_shared_mmap_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        LMDB's environment open failing with ENOSYS ("Function not implemented") or ENODEV ("No
        such device"): py-lmdb's "lmdb.Error: <path>: Function not implemented" and the LMDB
        tools' "mdb_env_open failed, error 38 Function not implemented". A warning: the errno is
        mmap's answer on a file system without (writable, shared) mmap, the only call of the open
        that fails so on Linux, but the line does not name mmap. An error where strace shows the
        call itself: "mmap(..., MAP_SHARED, fd, 0) = -1 ENODEV (No such device)".

    Why it matters:
        LMDB maps its lock file shared and writable, and its data file shared. Cray's DVS
        projection of a file system supports only read-only mmap (Cray's documentation, quoted by
        LMDB's author in py-lmdb#100); mmap(2) returns ENODEV on a file system that does not
        support memory mapping at all. Every open fails, whatever the path.

    How to fix:
        Keep the database on a file system with shared mmap (node-local disk, /dev/shm, a Lustre or
        GPFS mount itself rather than its DVS projection); a read-only reader on DVS may open it
        with readonly=True and lock=False.

    References:
        - https://github.com/jnwatson/py-lmdb/issues/100 (hyc: "they only support read-only mmap on DVS", Cray S-0005 caveats)
        - https://man7.org/linux/man-pages/man2/mmap.2.html (ENODEV: the file system does not support memory mapping)
        - https://github.com/jnwatson/py-lmdb/blob/master/lmdb/cpython.c (err_set: "%s: %s", what, mdb_strerror(rc))
        - http://www.lmdb.tech/doc/group__mdb.html (mdb_env_open; MDB_WRITEMAP, MDB_NOLOCK)
    """
    told = catalogued(f, "fs-shared-mmap-unsupported")
    if not told:
        return
    s = next((t for t in told if t.get("id") == "fs_support:strace-mmap-shared-refused"), told[0])
    reason = str(s.get("reason") or "")
    errno = "ENODEV" if "No such device" in reason else "ENOSYS"
    if s.get("id") == "fs_support:strace-mmap-shared-refused":
        yield Hit(message=f"the kernel refused a shared mapping of a file with {errno} (\"{reason}\"): its file system does "
                          f"not support it (line {s.get('line')}: \"{told_text(s)}\")",
                  fix=_mmap_fix(None, "the mapped file's directory"), evidence=told_evidence(s),
                  severity="error")
        return
    yield Hit(message=f"LMDB could not open its environment{' ' + repr(s.get('path')) if s.get('path') else ''}: {errno} "
                      f"(\"{reason}\") is mmap's answer on a file system without the shared mapping LMDB needs, as "
                      f"Cray DVS maps files read-only only (line {s.get('line')}: \"{told_text(s)}\")",
              fix=_mmap_fix(str(s["path"]) if s.get("path") else None), evidence=told_evidence(s))
