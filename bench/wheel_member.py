"""Extract one file of a PyPI wheel without downloading the wheel: the source of the strings that
knowledge/messages/ cites from wheels' binaries (cudnn64_8.dll of nvidia-cudnn-cu11 8.9.5.29 for
Windows, CUDA 9.0's libnvrtc in torch 1.0.1, Intel MPI 2018.0.3's libmpi.so). A wheel is a zip file:
one range request reads its directory, two more the member's header and its compressed bytes.

    python3 bench/wheel_member.py nvidia-cudnn-cu11 8.9.5.29 win_amd64 cudnn64_8.dll /tmp/cudnn64_8.dll
    strings /tmp/cudnn64_8.dll | grep 'Could not'

PLATFORM and MEMBER are substrings of the wheel's file name and of the member's path."""

from __future__ import annotations

import json
import struct
import sys
import urllib.request
import zlib
from urllib.parse import urljoin


def _get(url: str, byte_range: str = "") -> bytes:
    request = urllib.request.Request(url)
    if byte_range:
        request.add_header("Range", byte_range)
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.read()


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


def main(package: str, version: str, platform: str, member: str, out: str) -> int:
    index = f"https://pypi.org/pypi/{package}/json"
    files = [u for u in json.loads(_get(index))["releases"][version]
             if u["filename"].endswith(".whl") and platform in u["filename"]]
    if not files:
        print(f"no {platform} wheel of {package} {version}", file=sys.stderr)
        return 2
    url = urljoin(index, files[0]["url"])
    tail = _get(url, "bytes=-65536")
    end = tail.rfind(b"PK\x05\x06")
    size, offset = struct.unpack("<II", tail[end + 12:end + 20])
    if offset == 0xFFFFFFFF:
        end64 = tail.rfind(b"PK\x06\x06")
        size, offset = struct.unpack("<QQ", tail[end64 + 40:end64 + 56])
    directory = _get(url, f"bytes={offset}-{offset + size - 1}")
    at = 0
    while directory[at:at + 4] == b"PK\x01\x02":
        method, = struct.unpack("<H", directory[at + 10:at + 12])
        csize, usize = struct.unpack("<II", directory[at + 20:at + 28])
        n, m, k = struct.unpack("<HHH", directory[at + 28:at + 34])
        local, = struct.unpack("<I", directory[at + 42:at + 46])
        name = directory[at + 46:at + 46 + n].decode()
        usize, csize, local = _zip64(directory[at + 46 + n:at + 46 + n + m], usize, csize, local)
        if member in name:
            header = _get(url, f"bytes={local}-{local + 29}")
            skip = 30 + sum(struct.unpack("<HH", header[26:30]))
            data = _get(url, f"bytes={local + skip}-{local + skip + csize - 1}")
            data = zlib.decompress(data, -15) if method == 8 else data
            with open(out, "wb") as handle:
                handle.write(data)
            print(f"{files[0]['filename']}: {name} ({len(data)} bytes) -> {out}")
            return 0
        at += 46 + n + m + k
    print(f"no member matching {member!r} in {files[0]['filename']}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
