"""A PyPI wheel read by HTTP range requests instead of downloaded: a wheel is a zip file whose
directory sits at its end, so one request finds the directory, one reads it, and two more read one
member. Shared by bench/cuda_wheel_headers.py (file names) and bench/wheel_member.py (one file)."""

from __future__ import annotations

import json
import struct
import urllib.request
import zlib
from typing import Iterator, NamedTuple
from urllib.parse import urljoin


class Member(NamedTuple):
    name: str
    method: int       # 0 stored, 8 deflated
    csize: int
    size: int
    offset: int       # of the member's local header


def get(url: str, byte_range: str = "") -> bytes:
    request = urllib.request.Request(url)
    if byte_range:
        request.add_header("Range", byte_range)
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


def wheel_files(package: str, version: str = "") -> tuple:
    """(version, [(file name, absolute URL)]) of the package's wheels: the release named, else the newest."""
    index = f"https://pypi.org/pypi/{package}/json"
    meta = json.loads(get(index))
    version = version or meta["info"]["version"]
    files = meta["releases"][version] if version in meta["releases"] else meta["urls"]
    return version, [(u["filename"], urljoin(index, u["url"])) for u in files if u["filename"].endswith(".whl")]


def _zip64(extra: bytes, size: int, csize: int, offset: int):
    """The sizes and offset a ZIP64 extra field holds where the central record says 0xFFFFFFFF."""
    at = 0
    while at + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[at:at + 4])
        if tag == 1:
            values = list(struct.unpack("<" + "Q" * (length // 8), extra[at + 4:at + 4 + length]))
            if size == 0xFFFFFFFF:
                size = values.pop(0)
            if csize == 0xFFFFFFFF:
                csize = values.pop(0)
            if offset == 0xFFFFFFFF:
                offset = values.pop(0)
        at += 4 + length
    return size, csize, offset


def members(url: str) -> Iterator[Member]:
    """Every entry of the zip's central directory (ZIP64 where a size or offset does not fit 32 bits)."""
    tail = get(url, "bytes=-65536")
    end = tail.rfind(b"PK\x05\x06")
    size, offset = struct.unpack("<II", tail[end + 12:end + 20])
    if offset == 0xFFFFFFFF:
        end64 = tail.rfind(b"PK\x06\x06")
        size, offset = struct.unpack("<QQ", tail[end64 + 40:end64 + 56])
    directory = get(url, f"bytes={offset}-{offset + size - 1}")
    at = 0
    while directory[at:at + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", directory[at + 10:at + 12])
        csize, usize = struct.unpack("<II", directory[at + 20:at + 28])
        n, m, k = struct.unpack("<HHH", directory[at + 28:at + 34])
        local, = struct.unpack("<I", directory[at + 42:at + 46])
        usize, csize, local = _zip64(directory[at + 46 + n:at + 46 + n + m], usize, csize, local)
        yield Member(directory[at + 46:at + 46 + n].decode(), method, csize, usize, local)
        at += 46 + n + m + k


def read(url: str, member: Member) -> bytes:
    """One member's bytes, inflated."""
    header = get(url, f"bytes={member.offset}-{member.offset + 29}")
    start = member.offset + 30 + sum(struct.unpack("<HH", header[26:30]))
    data = get(url, f"bytes={start}-{start + member.csize - 1}")
    return zlib.decompress(data, -15) if member.method == 8 else data
