"""What vendor-neutral loaders find on the node, read from the files they read: OpenCL's ICD
loader (libOpenCL.so.1 and the *.icd files of /etc/OpenCL/vendors or $OCL_ICD_VENDORS), EGL's
(libglvnd: the *.json files of /etc/glvnd/egl_vendor.d and /usr/share/glvnd/egl_vendor.d, or
$__EGL_VENDOR_LIBRARY_DIRS), and, on an NVIDIA Jetson (/etc/nvpmodel.conf), its power mode as
nvpmodel -q reports it. Read-only: nvpmodel -q queries, it never sets a mode."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Union

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot

NAME = "vendor_loaders"
TIMEOUT = 3.0

# KhronosGroup/OpenCL-ICD-Loader loader/icd_platform.h ICD_VENDOR_PATH; ocl-icd reads the same.
OPENCL_VENDORS = "/etc/OpenCL/vendors"
# libglvnd src/EGL/icd_enumeration.md: ${sysconfdir} then ${datadir}, as distributions configure them.
EGL_VENDOR_DIRS = ("/etc/glvnd/egl_vendor.d", "/usr/share/glvnd/egl_vendor.d")
_LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")
NVPMODEL_CONF = "/etc/nvpmodel.conf"
# oneapi-src/level-zero @ v1.32.0 source/loader/linux/driver_discovery_lin.cpp: the GPU drivers the
# loader looks for by name (knownDriverNames), in LD_LIBRARY_PATH, these directories
# (getLibrarySearchPaths) and the directories /etc/ld.so.conf names or includes.
ZE_GPU_DRIVERS = ("libze_intel_gpu.so.1", "libze_intel_gpu_legacy1.so.1")
ZE_DIRS = ("/lib", "/usr/lib", "/usr/local/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
           "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/usr/local/lib64")
_POWER_MODE = re.compile(r"NV Power Mode: ?(?P<mode>[A-Za-z0-9_]{1,40})[ \t]{0,4}\r?\n[ \t]{0,4}(?P<id>\d{1,3})\b")


def parse_nvpmodel_query(text: str) -> Optional[Dict[str, Any]]:
    """nvpmodel -q's report: "NV Power Mode: <NAME>" and the mode's ID on the next line (the form
    jetson_stats reads); None when the text holds no such report."""
    m = _POWER_MODE.search(text[:65536])
    if not m:
        return None
    return {"mode": m.group("mode"), "id": int(m.group("id")), "maxn": "MAXN" in m.group("mode").upper()}


def _listing(root: SysRoot, dirs: List[str], suffix: str) -> Union[List[str], Unknown]:
    """The files a loader reads from its directories; an absent directory holds none. Unknown only
    when a directory exists and cannot be listed (or was not recorded)."""
    found: List[str] = []
    for d in dirs[:16]:
        try:
            names = root.listdir(d)
        except Missing as exc:
            if root.exists(d):
                return Unknown(f"{d} not listed: {exc}")
            continue
        found += [f"{d.rstrip('/')}/{n}" for n in sorted(names)[:256] if n.endswith(suffix)]
    return found


def _env_dirs(env: Dict[str, str], name: str, default: List[str]) -> List[str]:
    value = env.get(name) or ""
    dirs = [d for d in value.split(":") if d.startswith("/")]
    return dirs or default


def _loader(root: SysRoot, lib: str) -> Optional[str]:
    return next((f"{d}/{lib}" for d in _LIB_DIRS if root.exists(f"{d}/{lib}")), None)


def _power_mode(root: SysRoot) -> Any:
    if not root.exists(NVPMODEL_CONF):
        return None   # not a Jetson
    try:
        res = root.run(["nvpmodel", "-q"], timeout=root.cap(2.0))
    except Missing as exc:   # a snapshot that did not record it
        return Unknown(f"nvpmodel -q: {exc}")
    if not res.ok:
        return Unknown(f"nvpmodel -q: {res.why_failed()}")
    parsed = parse_nvpmodel_query(res.stdout)
    return parsed if parsed else Unknown("nvpmodel -q printed no 'NV Power Mode:' line")


def _ld_so_conf_dirs(root: SysRoot) -> List[str]:
    """The directories /etc/ld.so.conf names, and those of the files its include lines glob
    (one level, as the Level Zero loader reads them), bounded."""
    dirs: List[str] = []
    for line in (root.read_or("/etc/ld.so.conf") or "").splitlines()[:64]:
        line = line.strip()
        if line.startswith("include "):
            pattern = line[8:].strip()
            folder, _, glob = pattern.rpartition("/")
            suffix = glob[glob.rfind("."):] if "." in glob else ""
            try:
                names = sorted(root.listdir(folder))[:64]
            except Missing:
                continue
            for n in names:
                if n.endswith(suffix):
                    dirs += [x.strip() for x in (root.read_or(f"{folder}/{n}") or "").splitlines()[:32]
                             if x.strip().startswith("/")]
        elif line.startswith("/"):
            dirs.append(line)
    return dirs[:128]


def _level_zero(root: SysRoot, env: Dict[str, str]) -> Dict[str, Any]:
    """The Level Zero loader and the GPU drivers it would find, where it looks for them."""
    dirs = [d for d in (env.get("LD_LIBRARY_PATH") or "").split(":") if d.startswith("/")][:32]
    dirs += list(ZE_DIRS) + _ld_so_conf_dirs(root)
    drivers = [f"{d.rstrip('/')}/{lib}" for lib in ZE_GPU_DRIVERS for d in dirs if root.exists(f"{d.rstrip('/')}/{lib}")]
    return {"loader": next((f"{d}/libze_loader.so.1" for d in dirs if root.exists(f"{d}/libze_loader.so.1")), None),
            "gpu_drivers": sorted(set(drivers)), "alt_drivers": env.get("ZE_ENABLE_ALT_DRIVERS") or None}


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    env = root.environ()
    opencl_dirs = _env_dirs(env, "OCL_ICD_VENDORS", [OPENCL_VENDORS])
    egl_dirs = _env_dirs(env, "__EGL_VENDOR_LIBRARY_DIRS", list(EGL_VENDOR_DIRS))
    return {"vendor_loaders": {
        "opencl": {"loader": _loader(root, "libOpenCL.so.1"), "dirs": opencl_dirs,
                   "vendors": _listing(root, opencl_dirs, ".icd")},
        "egl": {"loader": _loader(root, "libEGL.so.1"), "dirs": egl_dirs,
                "vendors": _listing(root, egl_dirs, ".json")},
        "jetson_power_mode": _power_mode(root),
        "level_zero": _level_zero(root, env),
    }}
