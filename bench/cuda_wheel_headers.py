"""List the headers each of NVIDIA's CUDA wheels installs, without downloading the wheels: the
source of knowledge/cuda_wheel_libs.toml [wheel_headers]. A wheel is a zip file, whose directory
sits at its end, so two HTTP range requests per wheel read every file name.

    python3 bench/cuda_wheel_headers.py nvidia-cuda-runtime-cu12 nvidia-cuda-nvrtc-cu12 ...

Prints, per wheel, its release and every header directly under nvidia/<component>/include (and the
first folder of those deeper: thrust, cub, cuda, crt)."""

from __future__ import annotations

import sys

import wheel_zip


def _wheel(name: str):
    version, files = wheel_zip.wheel_files(name)
    filename, url = next((f, u) for f, u in files if "x86_64" in f)
    return version, url, filename


def _names(url: str) -> list:
    return [m.name for m in wheel_zip.members(url)]


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
