"""Opening snapshots (folders and .tar.gz bundles from users) and writing them.

A bundle is untrusted input: members with absolute paths, ``..``, links, devices, or sizes past
the limits are refused before anything is written, and extraction happens only into a fresh
temporary folder.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from hpcdoctor.sysroot import ReplaySysRoot, SnapshotError

MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_MEMBERS = 50_000


def is_archive(path: str) -> bool:
    return path.endswith((".tar.gz", ".tgz"))


def _check_member(m: tarfile.TarInfo) -> None:
    name = m.name
    if name.startswith("/") or os.path.isabs(name) or ".." in Path(name).parts:
        raise SnapshotError(f"refusing archive member {name!r}: path leaves the bundle")
    if not (m.isfile() or m.isdir()):
        raise SnapshotError(f"refusing archive member {name!r}: links and special files are not allowed")
    if m.size > MAX_MEMBER_BYTES:
        raise SnapshotError(f"refusing archive member {name!r}: {m.size} bytes is over the limit")


def extract_bundle(path: str, dest: str) -> Path:
    """Extract a snapshot archive into ``dest``; returns the snapshot root inside it."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            members = []
            total = 0
            for m in tar:
                _check_member(m)
                total += m.size
                members.append(m)
                if len(members) > MAX_MEMBERS or total > MAX_TOTAL_BYTES:
                    raise SnapshotError(f"{path}: archive is larger than a snapshot can be")
            for m in members:
                target = Path(dest, m.name)
                if m.isdir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                src = tar.extractfile(m)
                if src is None:
                    continue
                with src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
    except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
        raise SnapshotError(f"{path}: not a readable .tar.gz snapshot ({exc.__class__.__name__}: {exc})") from None
    root = Path(dest)
    entries = [p for p in root.iterdir()]
    # Archives written by `hpcdoctor snapshot x.tar.gz` hold one top folder.
    if len(entries) == 1 and entries[0].is_dir() and not (root / "meta.json").exists():
        root = entries[0]
    return root


@contextmanager
def open_snapshot(path: str) -> Iterator[ReplaySysRoot]:
    if is_archive(path):
        if not os.path.isfile(path):
            raise SnapshotError(f"{path}: no such file")
        tmp = tempfile.mkdtemp(prefix="hpcdoctor-replay-")
        try:
            yield ReplaySysRoot(extract_bundle(path, tmp), label=path)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
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
