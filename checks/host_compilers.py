"""The CUDA compiler driver and the host compiler it would hand C++ to, where nvcc is on PATH:
their version banners (nvcc --version, gcc --version), read with short timeouts. Nothing runs
where nvcc is not on PATH."""

from __future__ import annotations

from typing import Any, Dict

from hpcdoctor.facts import Unknown
from hpcdoctor.parse.compilers import parse_gcc_version, parse_nvcc_version
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "host_compilers"
TIMEOUT = 5.0


def _version(root: SysRoot, argv, parse, timeout: float) -> Any:
    try:
        res = root.run(argv, timeout=root.cap(timeout))
    except Missing as exc:
        return Unknown(f"{' '.join(argv)}: {exc}")
    if not res.ok:
        return Unknown(f"{' '.join(argv)}: {res.why_failed()}")
    parsed = parse(res.stdout)
    return parsed if parsed else Unknown(f"{' '.join(argv)} printed no version banner")


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    env = root.environ()
    path = [d for d in (env.get("PATH") or "").split(":") if d.startswith("/")][:64]
    nvcc = next((f"{d.rstrip('/')}/nvcc" for d in path if root.exists(f"{d.rstrip('/')}/nvcc")), None)
    if nvcc is None:
        return {"host_compilers": {"nvcc_path": None, "nvcc": None, "gcc": None}}
    # nvcc's default host compiler on Linux is the gcc on PATH (nvcc --compiler-bindir says so);
    # NVCC_CCBIN, or -ccbin in NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS, names another.
    return {"host_compilers": {
        "nvcc_path": nvcc,
        "nvcc": _version(root, [nvcc, "--version"], parse_nvcc_version, 3.0),
        "gcc": _version(root, ["gcc", "--version"], parse_gcc_version, 2.0),
        "ccbin": env.get("NVCC_CCBIN") or None,
        "nvcc_flags": " ".join(v for v in (env.get("NVCC_PREPEND_FLAGS"), env.get("NVCC_APPEND_FLAGS")) if v) or None,
    }}
