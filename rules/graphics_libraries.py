"""A program that links the graphics or windowing system's libraries (OpenGL, EGL, GLib, X11) run
where they are not installed: a minimal or container image, a compute node without a desktop. Read
from the dynamic loader's own failure naming the file (knowledge/messages/libraries.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "opengl-library-missing"
# The Debian 12 package installing each library (dpkg -S on the development VM, as libraries.toml says).
_DEBIAN = {"libGL": "libgl1", "libEGL": "libegl1", "libOpenGL": "libopengl0", "libGLX": "libglx0",
           "libGLdispatch": "libglvnd0", "libGLU": "libglu1-mesa", "libgthread-2.0": "libglib2.0-0",
           "libglib-2.0": "libglib2.0-0", "libSM": "libsm6", "libICE": "libice6", "libXext": "libxext6",
           "libXrender": "libxrender1", "libX11": "libx11-6", "libxcb": "libxcb1", "libfontconfig": "libfontconfig1",
           "libxkbcommon": "libxkbcommon0"}
# What opencv-python's GUI build links and its -headless wheels do not (opencv-python 3.4.0.14's release
# notes: the headless distributions have no GUI dependencies).
_OPENCV_GUI = frozenset({"libGL", "libSM", "libICE", "libXext", "libXrender", "libX11", "libxcb", "libgthread-2.0",
                         "libglib-2.0", "libfontconfig", "libxkbcommon"})


@rule("SYS017", SYMBOL, "error", "a graphics or windowing-system library (OpenGL, EGL, GLib, X11) is not installed where "
      "the program runs", impact=5)
def opengl_library_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the dynamic loader's "<library>: cannot open shared object file" for a
        library of the graphics or windowing system: libGL.so.1, libEGL.so.1, libOpenGL.so.0,
        libGLX.so.0, libGLdispatch.so.0, libGLU.so.1, libgthread-2.0.so.0, libglib-2.0.so.0,
        libSM.so.6, libICE.so.6, libXext.so.6, libXrender.so.1, libX11.so.6, libxcb.so.1,
        libfontconfig.so.1, libxkbcommon.so.0, as Python raises it on import (cv2, pymol, Qt,
        VTK, Open3D) or a program prints it.

    Why it matters:
        Builds with a GUI or OpenGL path link these system libraries; minimal and container images
        (python:slim, ubuntu, nvidia/cuda base images) and many compute nodes do not install them,
        and pip cannot: they come from the distribution. The import fails before any work runs.

    How to fix:
        Install the distribution's package that provides the file (Debian/Ubuntu: libgl1,
        libglib2.0-0, libsm6...; RPM systems: dnf install /usr/lib64/<file> resolves it), in the
        image's build for a container; or, for OpenCV without windows, use the -headless wheel.

    References:
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-load.c (_dl_map_object: "cannot open shared object file")
        - https://packages.debian.org/bookworm/libgl1 (and the packages named per library in libraries.toml)
        - https://github.com/opencv/opencv-python/releases/tag/14 (the headless distributions: no GUI dependencies)
        - https://github.com/opencv/opencv-python/issues/208
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    name = str(s.get("name") or s.get("key") or "")
    if name not in _DEBIAN:
        name = next((n for n in _DEBIAN if str(s.get("id", "")).endswith(":" + n)), name)
    version = s.get("version")
    file = f"{name}.so.{version}" if version else f"{name}.so"
    pkg = _DEBIAN.get(name, "the package that provides it")
    fix = (f"ls /usr/lib/x86_64-linux-gnu/{file} /usr/lib64/{file} 2>/dev/null || echo \"{file} not installed\"\n"
           f"sudo apt-get install -y {pkg}   # Debian/Ubuntu; in a Dockerfile: RUN apt-get update && apt-get install -y "
           f"--no-install-recommends {pkg}\n"
           f"sudo dnf install -y /usr/lib64/{file}   # RHEL/Rocky/Fedora: dnf resolves the package from the file\n"
           "# no root on a cluster: ask the administrators for the package, or run in a container image that installs it")
    if name in _OPENCV_GUI:
        fix += "\n# without root, for cv2: conda install -c conda-forge opencv (its own libraries) in a conda environment"
    if name in _OPENCV_GUI:
        fix += ("\n# opencv-python's cv2 without windows needs none of these: python3 -m pip uninstall -y opencv-python "
                "&& python3 -m pip install opencv-python-headless")
    yield Hit(message=f"{file} is not installed where the program ran (line {s.get('line')}: \"{told_text(s)}\"): "
                      f"a graphics/windowing system library that pip cannot install; the system package {pkg} provides it",
              fix=fix, evidence={**told_evidence(s), "library": file})


MESA = "mesa-dri-driver-not-found"
_NOT_THERE = "cannot open shared object file"
# Kernel DRM driver names that no Mesa release installs as <name>_dri.so (knowledge/mesa_dri_drivers.toml)
_KERNEL_NAMES = {k["name"]: k for k in knowledge.load("mesa_dri_drivers")["kernel"]}


@rule("SYS028", MESA, "warning", "Mesa's loader found no DRI driver it could load in its search path", impact=4,
      also={"info": "the driver asked for is a kernel DRM driver's name (amdgpu), which Mesa never installs as a DRI driver"})
def mesa_dri_driver_not_found(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Mesa's loader failing to open a DRI driver: "MESA-LOADER: failed to open
        swrast: /usr/lib/dri/swrast_dri.so: cannot open shared object file: No such file or
        directory (search paths ..., suffix _dri)", then libGL's "failed to load driver: swrast"
        (or, before the shared loader, "unable to load driver: swrast_dri.so"). A warning: the
        loader prints only the last directory's error, so a driver present in an earlier
        directory but not loadable there reads the same. A driver found but refused for another
        reason (an undefined symbol, a library version not found) is not this finding.

    Why it matters:
        Without a DRI driver GL falls back to indirect rendering or fails: viewers and GUI tools
        (Open3D, pangolin, Qt, VTK) do not open or render in software at a crawl. A conda
        environment's libGL often searches /usr/lib/dri, where Debian and Ubuntu do not put the
        drivers.

    How to fix:
        Run with LIBGL_DEBUG=verbose to see each directory's error; install the distribution's DRI
        drivers (Debian/Ubuntu libgl1-mesa-dri, RHEL mesa-dri-drivers), and point the loader at
        the directory that holds them with LIBGL_DRIVERS_PATH.

    References:
        - https://docs.mesa3d.org/envvars.html (LIBGL_DRIVERS_PATH, LIBGL_DEBUG)
        - https://gitlab.freedesktop.org/mesa/mesa/-/blob/main/src/loader/loader.c ("MESA-LOADER: failed to open %s: %s (search paths %s, suffix %s)")
        - https://github.com/rmurai0610/MASt3R-SLAM/issues/15 (the driver in /lib/x86_64-linux-gnu/dri, searched for in /usr/lib/dri)
    """
    told = catalogued(f, MESA)
    loader = [s for s in told if s.get("id") == "mesa:loader-failed-to-open"]
    if loader and not any(_NOT_THERE in str(s.get("error", "")) for s in loader):
        return  # found but not loadable (a symbol or version a library lacks): another cause
    s = next((t for t in loader if _NOT_THERE in str(t.get("error", ""))), told[0] if told else None)
    if s is None:
        return
    driver = str(s.get("driver") or "swrast")
    if driver.endswith("_dri.so"):   # libGL's older "unable to load driver: <name>_dri.so"
        driver = driver[:-len("_dri.so")]
    kernel = _KERNEL_NAMES.get(driver)
    if kernel is not None:
        # No distribution ships <kernel name>_dri.so: installing packages cannot help; whoever chose the
        # name (the program, MESA_LOADER_DRIVER_OVERRIDE) asked for the kernel module instead of Mesa's driver
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {driver} is {kernel['what']}; no Mesa release "
                          f"installs {driver}_dri.so, so the program (or MESA_LOADER_DRIVER_OVERRIDE) asked the loader "
                          "for the kernel driver's name, not a missing package",
                  fix=(f"echo \"$MESA_LOADER_DRIVER_OVERRIDE\"   # '{driver}' here: unset MESA_LOADER_DRIVER_OVERRIDE "
                       f"(or set it to {kernel['dri']})\n"
                       f"ls /usr/lib/x86_64-linux-gnu/dri/ /usr/lib64/dri/ 2>/dev/null | grep {kernel['dri']}   # Mesa's driver "
                       "for this GPU is installed\n"
                       "glxinfo -B | grep -i 'OpenGL renderer'   # (mesa-utils) what GL programs that let the loader choose get"),
                  evidence={**told_evidence(s), "driver": driver}, severity="info")
        return
    paths = str(s.get("paths") or "").replace("\\$$", "$")
    searched = f" (searched: {paths})" if paths else ""
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": Mesa's loader loaded no {driver}_dri.so from its search "
                      f"path{searched}; it prints only the last directory's error",
              fix=("LIBGL_DEBUG=verbose python your_script.py 2>&1 | grep MESA-LOADER   # every directory's dlopen error, not only the last\n"
                   f"ls /usr/lib/x86_64-linux-gnu/dri/ /usr/lib64/dri/ /usr/lib/dri/ 2>/dev/null | grep {driver}   # where the system's driver is\n"
                   "sudo apt-get install -y libgl1-mesa-dri   # Debian/Ubuntu: the DRI drivers (RHEL/Rocky: sudo dnf install -y mesa-dri-drivers)\n"
                   "export LIBGL_DRIVERS_PATH=/usr/lib/x86_64-linux-gnu/dri   # point the loader at the directory that holds them "
                   "(RHEL: /usr/lib64/dri), as a conda environment's libGL searches /usr/lib/dri"),
              evidence={**told_evidence(s), "driver": driver})
