"""Opening snapshots (folders and .tar.gz bundles from users) and writing them.

A bundle is untrusted input: it is read as a stream, one 512-byte header at a time; members with
absolute paths, ``..``, links, devices, headers or sizes past the limits are refused before they
are read, extraction happens only into a fresh temporary folder (removed whole when anything is
refused), and the whole extraction is bounded by the run's budget.
"""

from __future__ import annotations

import gzip
import os
import tarfile
import tempfile
import time
import zlib
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Dict, Iterator, Optional

from hpcdoctor.sysroot import ReplaySysRoot, SnapshotError

MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_MEMBERS = 50_000
# The deepest path a recording holds is a sysfs one of about 15 levels; 1,800 levels made
# clean-up's recursive walk raise RecursionError and leave the tree behind (issue 27).
MAX_DEPTH = 64
# A long name or a pax record set of a real snapshot is a few hundred bytes. tarfile reads such a
# header whole before a caller sees the member (3 GB of zeros are 3 MB gzipped), so headers are
# read here, 512 bytes at a time, and their size is judged before their content is read.
MAX_HEADER_BYTES = 64 * 1024
BLOCK = tarfile.BLOCKSIZE
_EXTENDED = (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XHDTYPE, tarfile.XGLTYPE,
             tarfile.SOLARIS_XHDTYPE)


def is_archive(path: str) -> bool:
    return path.endswith((".tar.gz", ".tgz"))


def _check_member(m: tarfile.TarInfo) -> None:
    name = m.name
    if not name or name.startswith("/") or os.path.isabs(name) or ".." in Path(name).parts or "\x00" in name:
        raise SnapshotError(f"refusing archive member {name!r}: path leaves the bundle")
    if not (m.isfile() or m.isdir()) or m.type == tarfile.GNUTYPE_SPARSE:
        raise SnapshotError(f"refusing archive member {name!r}: links and special files are not allowed")
    if len(Path(name).parts) > MAX_DEPTH:
        raise SnapshotError(f"refusing archive member {name[:80]!r}...: deeper than {MAX_DEPTH} folders")
    if m.size > MAX_MEMBER_BYTES:
        raise SnapshotError(f"refusing archive member {name!r}: {m.size} bytes is over the limit")


class _Stream:
    """The decompressed archive, read forwards only, never past the total limit or the deadline."""

    def __init__(self, fh: gzip.GzipFile, path: str, deadline: Optional[float]) -> None:
        self.fh, self.path, self.deadline, self.read_bytes = fh, path, deadline, 0

    def read(self, n: int, short_ok: bool = False) -> bytes:
        # Member data and padding, plus at most three header blocks per member.
        if self.read_bytes + n > MAX_TOTAL_BYTES + MAX_MEMBERS * (3 * BLOCK + MAX_HEADER_BYTES):
            raise SnapshotError(f"{self.path}: archive is larger than a snapshot can be")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise SnapshotError(f"{self.path}: unpacking did not finish within the budget")
        data = self.fh.read(n)
        self.read_bytes += len(data)
        if len(data) < n and not short_ok:
            raise SnapshotError(f"{self.path}: archive ends in the middle of a member")
        return data

    def copy(self, size: int, out: BinaryIO) -> None:
        left = size
        while left > 0:
            chunk = self.read(min(left, 1 << 20))
            out.write(chunk)
            left -= len(chunk)
        self.read(_padding(size))

    def skip(self, size: int) -> None:
        left = size + _padding(size)
        while left > 0:
            left -= len(self.read(min(left, 1 << 20)))


def _padding(size: int) -> int:
    return -size % BLOCK


def _pax_records(data: bytes, path: str) -> Dict[str, str]:
    """``LENGTH KEY=VALUE\\n`` records (POSIX.1-2001 pax)."""
    out: Dict[str, str] = {}
    pos = 0
    while pos < len(data) and data[pos:pos + 1] != b"\x00":
        space = data.find(b" ", pos, pos + 20)
        if space < 0 or not data[pos:space].isdigit():
            raise SnapshotError(f"{path}: malformed pax header")
        length = int(data[pos:space])
        record = data[space + 1:pos + length]
        if length <= 0 or not record.endswith(b"\n") or b"=" not in record:
            raise SnapshotError(f"{path}: malformed pax header")
        key, _, value = record[:-1].partition(b"=")
        out[key.decode("utf-8", "replace")] = value.decode("utf-8", "surrogateescape")
        pos += length
    return out


def _headers(stream: _Stream, path: str) -> Iterator[tarfile.TarInfo]:
    """Each member's header, with GNU long names and pax records applied; the caller reads or
    skips the member's data before asking for the next."""
    long_name: Optional[str] = None
    pax: Dict[str, str] = {}
    while True:
        buf = stream.read(BLOCK, short_ok=True)
        if len(buf) < BLOCK or buf == b"\x00" * BLOCK:
            return  # end of archive (two zero blocks, or a writer that stopped at the last member)
        try:
            info = tarfile.TarInfo.frombuf(buf, "utf-8", "surrogateescape")
        except tarfile.HeaderError as exc:
            raise SnapshotError(f"{path}: not a readable .tar.gz snapshot (bad header: {exc})") from None
        if info.type in _EXTENDED:
            if info.size > MAX_HEADER_BYTES:
                raise SnapshotError(f"refusing archive {path}: an extended header of {info.size} bytes "
                                    f"(names and attributes of a snapshot fit in {MAX_HEADER_BYTES >> 10} KiB)")
            data = stream.read(info.size + _padding(info.size))[:info.size]
            if info.type == tarfile.GNUTYPE_LONGNAME:
                long_name = data.split(b"\x00", 1)[0].decode("utf-8", "surrogateescape")
            elif info.type in (tarfile.XHDTYPE, tarfile.SOLARIS_XHDTYPE):
                pax = _pax_records(data, path)
            continue  # a global pax header or a long link name changes nothing a snapshot uses
        if "path" in pax:
            info.name = pax["path"]
        elif long_name is not None:
            info.name = long_name
        if "size" in pax:
            if not pax["size"].isdigit():
                raise SnapshotError(f"{path}: malformed pax size {pax['size'][:20]!r}")
            info.size = int(pax["size"])
        if any(key.startswith("GNU.sparse") for key in pax):
            info.type = tarfile.GNUTYPE_SPARSE  # its data is a map, not the file: refused
        if info.type == tarfile.AREGTYPE and info.name.endswith("/"):
            info.type = tarfile.DIRTYPE
        info.name = info.name.rstrip("/")
        long_name, pax = None, {}
        yield info


def extract_bundle(path: str, dest: str, deadline: Optional[float] = None) -> Path:
    """Extract a snapshot archive into ``dest``; returns the snapshot root inside it. Every
    header and member is judged before it is read; memory stays at one megabyte whatever the
    archive claims, and ``deadline`` (time.monotonic()) bounds the whole extraction."""
    try:
        with gzip.open(path, "rb") as fh:
            stream = _Stream(fh, path, deadline)  # type: ignore[arg-type]
            count = total = 0
            for m in _headers(stream, path):
                _check_member(m)
                count += 1
                total += m.size
                if count > MAX_MEMBERS or total > MAX_TOTAL_BYTES:
                    raise SnapshotError(f"{path}: archive is larger than a snapshot can be")
                target = Path(dest, m.name)
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    stream.skip(m.size)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with open(target, "xb") as out:
                    stream.copy(m.size, out)
    except (EOFError, OSError, ValueError, zlib.error) as exc:
        raise SnapshotError(f"{path}: not a readable .tar.gz snapshot ({exc.__class__.__name__}: {exc})") from None
    root = Path(dest)
    entries = [p for p in root.iterdir()]
    if not entries:
        raise SnapshotError(f"{path}: an empty archive, not a snapshot")
    # Archives written by `hpcdoctor snapshot x.tar.gz` hold one top folder.
    if len(entries) == 1 and entries[0].is_dir() and not (root / "meta.json").exists():
        root = entries[0]
    return root


def remove_tree(top: str) -> None:
    """Remove a temporary tree without recursion (shutil.rmtree recurses once per level) and
    without following links; what cannot be removed is left, never raised."""
    stack = [(str(top), False)]
    while stack:
        path, emptied = stack.pop()
        if emptied:
            try:
                os.rmdir(path)
            except OSError:
                pass
            continue
        stack.append((path, True))
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append((e.path, False))
                else:
                    os.unlink(e.path)
            except OSError:
                pass


@contextmanager
def open_snapshot(path: str, deadline: Optional[float] = None) -> Iterator[ReplaySysRoot]:
    if is_archive(path):
        if not os.path.isfile(path):
            raise SnapshotError(f"{path}: no such file")
        tmp = tempfile.mkdtemp(prefix="hpcdoctor-replay-")
        try:
            yield ReplaySysRoot(extract_bundle(path, tmp, deadline), label=path)
        finally:
            remove_tree(tmp)
        return
    if not os.path.isdir(path):
        raise SnapshotError(f"{path}: not a snapshot folder or .tar.gz archive")
    p = Path(path)
    if not any((p / sub).exists() for sub in ("meta.json", "fs", "cmd", "probes")):
        raise SnapshotError(f"{path}: holds no snapshot (no meta.json, fs/, cmd/ or probes/)")
    yield ReplaySysRoot(p, label=path)


def write_archive(folder: Path, archive: str) -> None:
    top = Path(archive).name
    for suffix in (".tar.gz", ".tgz"):
        if top.endswith(suffix):
            top = top[: -len(suffix)]
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(str(folder), arcname=top, filter=_anonymous)


def _anonymous(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # Who recorded the bundle is no diagnostic fact, and --redact promises to hide user names:
    # every member is owned by 0:0 with no names, whoever ran the snapshot.
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info
