"""Vendor-neutral compute and rendering APIs whose loader finds no driver: OpenCL's ICD loader with
no platform registered in /etc/OpenCL/vendors, and EGL's (libglvnd) with no GPU vendor able to open
a device display for headless rendering (MuJoCo, dm_control). Read from the programs' own words
(knowledge/messages/opencl.toml, egl.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, cuda_gpus, told_evidence, told_text

OPENCL = "opencl-icd-missing"
EGL = "egl-device-unavailable"
# The words that say "no platform" outright; OpenCLCapsViewer's only says that the count failed.
_OPENCL_WEAK = frozenset({"opencl:capsviewer-platform-count-failed"})

_OPENCL_FIX = (
    "ls -l /etc/OpenCL/vendors/ ${OCL_ICD_VENDORS:+\"$OCL_ICD_VENDORS\"}   # the ICD loader's drivers: one .icd file "
    "naming each driver's library; none, no platform\n"
    "clinfo -l   # the platforms and devices the loader finds (Debian/Ubuntu package clinfo)\n"
    "# install the OpenCL driver of the device, which adds its .icd file: NVIDIA's comes with the driver "
    "(nvidia.icd), Intel GPUs' is intel-opencl-icd, AMD's is ROCm's OpenCL runtime, Mesa's is mesa-opencl-icd, "
    "and a CPU-only node's is pocl-opencl-icd (or conda install -c conda-forge pocl in a conda environment)\n"
    "export OCL_ICD_VENDORS=$CONDA_PREFIX/etc/OpenCL/vendors   # a driver installed in your own prefix: point "
    "the loader at its vendors directory")

_EGL_FIX = (
    "ls /usr/share/glvnd/egl_vendor.d/ /etc/glvnd/egl_vendor.d/ 2>/dev/null   # EGL's vendors: a GPU node needs its "
    "driver's file (NVIDIA: 10_nvidia.json); 50_mesa.json alone has no GPU device to open\n"
    "export MUJOCO_GL=osmesa; unset PYOPENGL_PLATFORM   # on a node without a GPU (a CPU partition): software "
    "rendering through OSMesa (Debian/Ubuntu package libosmesa6), slower but needs no GPU\n"
    "# on a GPU node in a container: docker --gpus all -e NVIDIA_DRIVER_CAPABILITIES=compute,utility,graphics "
    "(graphics brings the EGL libraries and 10_nvidia.json); Apptainer --nv binds 10_nvidia.json from its "
    "nvliblist.conf\n"
    "# in a Slurm job: ask for a GPU (--gpus=1) so the job can open an EGL device; MUJOCO_EGL_DEVICE_ID picks "
    "one of those EGL enumerates")


@rule("SW045", OPENCL, "error", "OpenCL finds no platform: no OpenCL driver is registered with the ICD loader",
      impact=6, also={"warning": "only OpenCLCapsViewer's 'Could not get platform count!' was pasted",
                      "advice": "live: the loader installed with no driver registered, nothing says OpenCL is used"})
def opencl_icd_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, clGetPlatformIDs finding no OpenCL platform: clinfo's "main:670: number of
        platforms : error -1001" (and "Number of platforms 0" from releases that print it as a
        count), the code's name CL_PLATFORM_NOT_FOUND_KHR as pyopencl ("clGetPlatformIDs failed:
        PLATFORM_NOT_FOUND_KHR") and other programs print it, "clGetPlatformIDs ... -1001", and
        OpenCLCapsViewer's "Could not get platform count!" (a warning alone: it does not print
        the code). On a node, as advice: the ICD loader (libOpenCL.so.1) is installed and its
        vendors directory holds no .icd file (checks/vendor_loaders.py), where the job uses
        OpenCL (pyopencl in its Python, or OCL_ICD_VENDORS / OCL_ICD_FILENAMES set): the loader
        alone comes with many packages and says nothing about the job.

    Why it matters:
        libOpenCL.so.1 is only a loader: it loads the drivers (ICDs) listed by the *.icd files
        in /etc/OpenCL/vendors (or $OCL_ICD_VENDORS). With none there, or none that loads, every
        OpenCL program finds no platform, whatever hardware the node has; installing the GPU
        driver's compute part alone, or a container without the vendor files, leaves it so.

    How to fix:
        Install the OpenCL driver (ICD) of the device, which registers its .icd file: NVIDIA's
        comes with the driver, Intel's intel-opencl-icd, AMD's ROCm OpenCL runtime, Mesa's
        mesa-opencl-icd, or pocl for CPUs; for a driver in your own prefix, set OCL_ICD_VENDORS
        to its vendors directory. clinfo -l then lists the platforms.

    References:
        - https://github.com/KhronosGroup/OpenCL-ICD-Loader/blob/main/README.md (vendors directory, OCL_ICD_VENDORS)
        - https://registry.khronos.org/OpenCL/specs/3.0-unified/html/OpenCL_Ext.html#cl_khr_icd (CL_PLATFORM_NOT_FOUND_KHR)
        - https://github.com/Oblomov/clinfo
        - https://documen.tician.de/pyopencl/misc.html#installation
    """
    told = catalogued(f, OPENCL)
    if not told:
        yield from _opencl_on_node(f)
        return
    strong = [s for s in told if s.get("id") not in _OPENCL_WEAK]
    s = (strong or told)[0]
    yield Hit(message=f"OpenCL found no platform (line {s.get('line')}: \"{told_text(s)}\"): no OpenCL driver is "
                      "registered with the ICD loader (/etc/OpenCL/vendors holds no .icd file that loads)",
              fix=_OPENCL_FIX, evidence=told_evidence(s), severity=None if strong else "warning")


def _uses_opencl(f: FactView) -> bool:
    # libOpenCL.so.1 comes in as a dependency of many packages (hwloc's plugins, ffmpeg): alone it
    # says nothing about the job, and advice on every such node would be noise.
    packages = f.get("torch.packages")
    return bool(_env(f, "OCL_ICD_VENDORS") or _env(f, "OCL_ICD_FILENAMES")
                or (isinstance(packages, dict) and "pyopencl" in packages))


def _opencl_on_node(f: FactView) -> Iterator[Hit]:
    loader, vendors = f.get("vendor_loaders.opencl.loader"), f.get("vendor_loaders.opencl.vendors")
    if not loader or not isinstance(vendors, list) or vendors or not _uses_opencl(f):
        return   # no loader, a driver registered, not read, or nothing here uses OpenCL
    dirs = ", ".join(f.get("vendor_loaders.opencl.dirs") or [])
    yield Hit(message=f"OpenCL's ICD loader is installed ({loader}) but no OpenCL driver is registered ({dirs} holds "
                      "no .icd file): an OpenCL program here finds no platform",
              severity="advice", fix=_OPENCL_FIX, evidence={"vendor_loaders.opencl.loader": loader,
                                                            "vendor_loaders.opencl.vendors": vendors})


def _env(f: FactView, name: str):
    try:
        return f.env(name)
    except MissingFact:
        return None


def _egl_on_node(f: FactView) -> Iterator[Hit]:
    """MUJOCO_GL=egl (or PYOPENGL_PLATFORM=egl) in this environment where EGL has no vendor for
    this node's GPUs: NVIDIA GPUs without NVIDIA's vendor file, or no GPU at all."""
    asked = next((f"{n}={_env(f, n)}" for n in ("MUJOCO_GL", "PYOPENGL_PLATFORM")
                  if str(_env(f, n) or "").strip().lower() == "egl"), None)
    loader, vendors = f.get("vendor_loaders.egl.loader"), f.get("vendor_loaders.egl.vendors")
    if not asked or not loader or not isinstance(vendors, list) or not isinstance(f.get("gpus"), list):
        return
    names = ", ".join(v.rsplit("/", 1)[-1] for v in vendors) or "no vendor file"
    if cuda_gpus(f) and not any("nvidia" in v.rsplit("/", 1)[-1].lower() for v in vendors):
        why = f"this node has {len(cuda_gpus(f))} NVIDIA GPU(s) but EGL has no NVIDIA vendor ({names})"
    elif not f.gpus():
        why = f"this node has no GPU, and EGL's vendors ({names}) have no device to render on"
    else:
        return
    yield Hit(message=f"{asked} asks for headless EGL rendering, but {why}: MuJoCo's EGL context cannot open a device",
              fix=_EGL_FIX, evidence={"vendor_loaders.egl.vendors": vendors, "env": asked})


@rule("SW046", EGL, "error", "headless EGL rendering finds no GPU device display (MuJoCo, dm_control)", impact=6)
def egl_device_unavailable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, MuJoCo's "Cannot initialize a EGL device display. This likely means that
        your EGL driver does not support the PLATFORM_DEVICE extension, which is required for
        creating a headless rendering context.", dm_control's "Cannot initialize a headless EGL
        display.", and MuJoCo's MUJOCO_EGL_DEVICE_ID range "between 0 and -1" (no device at all).
        On a node: MUJOCO_GL=egl (or PYOPENGL_PLATFORM=egl) in the job's environment where EGL's
        vendor files (checks/vendor_loaders.py) hold no NVIDIA vendor beside NVIDIA GPUs, or the
        node has no GPU at all.

    Why it matters:
        MUJOCO_GL=egl renders without a display by opening a GPU through EGL's device platform.
        EGL's loader (libglvnd) loads only the vendors whose JSON files are in
        /usr/share/glvnd/egl_vendor.d or /etc/glvnd/egl_vendor.d: a compute node without a GPU
        (the job landed on a CPU partition, while the login node has one), a job that did not
        ask for a GPU, or a container without the driver's 10_nvidia.json has no EGL device, and
        the import fails before any simulation runs.

    How to fix:
        On a node without a GPU, render in software: MUJOCO_GL=osmesa with PYOPENGL_PLATFORM
        unset (OSMesa installed). On a GPU node, make the NVIDIA EGL vendor visible: the job asks
        for a GPU, docker adds the graphics driver capability, Apptainer --nv binds
        10_nvidia.json.

    References:
        - https://github.com/google-deepmind/mujoco/blob/main/python/mujoco/egl/__init__.py
        - https://mujoco.readthedocs.io/en/stable/python.html (MUJOCO_GL: glfw, egl, osmesa)
        - https://github.com/NVIDIA/libglvnd/blob/master/src/EGL/icd_enumeration.md
        - https://github.com/NVIDIA/nvidia-container-toolkit/blob/main/internal/discover/graphics.go (10_nvidia.json)
    """
    told = catalogued(f, EGL)
    if not told:
        yield from _egl_on_node(f)
        return
    s = told[0]
    yield Hit(message=f"headless EGL rendering found no GPU device display (line {s.get('line')}: \"{told_text(s)}\"): "
                      "no GPU vendor's EGL library is registered on this node (no GPU, none given to the job, or "
                      "a container without the driver's EGL vendor file)",
              fix=_EGL_FIX, evidence=told_evidence(s))
