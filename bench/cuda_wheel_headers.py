"""List the headers each of NVIDIA's CUDA wheels installs, without downloading the wheels: the
source of knowledge/cuda_wheel_libs.toml [wheel_headers]. A wheel is a zip file, whose directory
sits at its end, so two HTTP range requests per wheel read every file name.

    python3 bench/cuda_wheel_headers.py nvidia-cuda-runtime-cu12 nvidia-cuda-nvrtc-cu12 ...

Prints, per wheel, its release and every header directly under nvidia/<component>/include (and the
first folder of those deeper: thrust, cub, cuda, crt)."""

from __future__ import annotations

import json
import struct
import sys
import urllib.request
from urllib.parse import urljoin


def _get(url: str, byte_range: str = "") -> bytes:
    request = urllib.request.Request(url)
    if byte_range:
        request.add_header("Range", byte_range)
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def _wheel(name: str):
    index = f"https://pypi.org/pypi/{name}/json"
    meta = json.loads(_get(index))
    files = [u for u in meta["urls"] if u["filename"].endswith(".whl") and "x86_64" in u["filename"]]
    return meta["info"]["version"], urljoin(index, files[0]["url"]), files[0]["filename"]


def _names(url: str) -> list:
    """Every file name in the zip's central directory (ZIP64 where the offset does not fit 32 bits)."""
    tail = _get(url, "bytes=-65536")
    end = tail.rfind(b"PK\x05\x06")
    size, offset = struct.unpack("<II", tail[end + 12:end + 20])
    if offset == 0xFFFFFFFF:
        end64 = tail.rfind(b"PK\x06\x06")
        size, offset = struct.unpack("<QQ", tail[end64 + 40:end64 + 56])
    directory = _get(url, f"bytes={offset}-{offset + size - 1}")
    names, at = [], 0
    while directory[at:at + 4] == b"PK\x01\x02":
        n, m, k = struct.unpack("<HHH", directory[at + 28:at + 34])
        names.append(directory[at + 46:at + 46 + n].decode())
        at += 46 + n + m + k
    return names


def main(packages: list) -> None:
    for name in packages:
        version, url, filename = _wheel(name)
        print(f"## {name} {version} {filename}")
        for path in _names(url):
            if path.endswith((".h", ".hpp", ".cuh")) and "/include/" in path:
                rest = path.split("/include/", 1)[1]
                if "/" not in rest or rest.split("/")[0] in ("thrust", "cub", "cuda", "crt"):
                    print(path)


if __name__ == "__main__":
    main(sys.argv[1:])
