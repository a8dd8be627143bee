"""Extract one file of a PyPI wheel without downloading the wheel: the source of the strings that
knowledge/messages/ cites from wheels' binaries (cudnn64_8.dll of nvidia-cudnn-cu11 8.9.5.29 for
Windows, CUDA 9.0's libnvrtc in torch 1.0.1, Intel MPI 2018.0.3's libmpi.so). Range requests only
(bench/wheel_zip.py): the zip's directory, then the member's header and its compressed bytes.

    python3 bench/wheel_member.py nvidia-cudnn-cu11 8.9.5.29 win_amd64 cudnn64_8.dll /tmp/cudnn64_8.dll
    strings /tmp/cudnn64_8.dll | grep 'Could not'

PLATFORM and MEMBER are substrings of the wheel's file name and of the member's path."""

from __future__ import annotations

import sys

import wheel_zip


def main(package: str, version: str, platform: str, member: str, out: str) -> int:
    _, files = wheel_zip.wheel_files(package, version)
    wheel = next(((f, u) for f, u in files if platform in f), None)
    if wheel is None:
        print(f"no {platform} wheel of {package} {version}", file=sys.stderr)
        return 2
    filename, url = wheel
    found = next((m for m in wheel_zip.members(url) if member in m.name), None)
    if found is None:
        print(f"no member matching {member!r} in {filename}", file=sys.stderr)
        return 2
    data = wheel_zip.read(url, found)
    with open(out, "wb") as handle:
        handle.write(data)
    print(f"{filename}: {found.name} ({len(data)} bytes) -> {out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
