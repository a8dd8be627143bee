"""Hostile inputs generated on the spot, shared by the tests (tests/hostile/test_untrusted.py) and the
before/after measurement (bench/hostile.py), so both measure the very same input."""

from __future__ import annotations

import tarfile
import zlib
from pathlib import Path


def header_bundle(path: Path, size: int, kind: bytes = tarfile.GNUTYPE_LONGNAME, data: bool = True) -> Path:
    """A .tar.gz whose first header is a GNU long name (or pax header) of ``size`` bytes of
    zeros, streamed through zlib so that a gigabyte costs a megabyte on disk and no memory. With
    ``data=False`` only the header is there: refusing it must not need its content."""
    info = tarfile.TarInfo("././@LongLink")
    info.type, info.size = kind, size
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as out:
        out.write(co.compress(info.tobuf(format=tarfile.GNU_FORMAT)))
        zeros = b"\0" * (1 << 20)
        left = size + (-size % 512) if data else 0
        while left > 0:
            out.write(co.compress(zeros[:min(left, len(zeros))]))
            left -= len(zeros)
        out.write(co.compress(tarfile.TarInfo("snap/meta.json").tobuf(format=tarfile.GNU_FORMAT) + b"\0" * 1024))
        out.write(co.flush())
    return path
