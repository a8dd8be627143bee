"""A program the dynamic loader cannot start: a library it needs is not found, or the node's C library
is older than the one it was built against (glibc's ld.so, knowledge/messages/loader.toml and
libraries.toml). GPU, MPI and graphics libraries have rules of their own (cuda-runtime-library-missing,
mpi-library-missing, opengl-library-missing), and torch's own libraries torch-import-failed."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, List

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, told_text, torch_import_frame_before
from hpcdoctor.rules._loader import _TORCH_LIB
from hpcdoctor.rules.wheel_tags import wheel_glibc_too_new

_GLIBC = re.compile(r"GLIBC_(\d{1,2})\.(\d{1,3})(?:\.(\d{1,3}))?$")
# Library families another rule answers, or whose absence means a GPU stack that rule names: a name
# the catalogue does not list by entry (libraries.toml) but of one of these families is left alone.
_OTHERS = re.compile(r"^lib(?:cu|nv|hip|roc|rccl|hsa|amd|MIOpen|mpi|open-(?:pal|rte)|nccl|ze_|OpenCL|torch|c10|caffe2|"
                     r"tensorflow|GL|EGL|X|xcb|glib|gthread|gobject|gio|gmodule|dcgm|ibverbs|rdma|ucp|ucs|uct|fabric|psm)")


# A version name retyped by hand ("GLIB _2.28", "GLIBC 2.28") beside a glibc library is still glibc's.
_RETYPED = re.compile(r"GLIBC?[ _]{1,2}(\d{1,2}\.\d{1,3}(?:\.\d{1,3})?)$")


def _glibc_version(s: dict) -> str:
    """The GLIBC_2.NN a loader line names; a retyped name of a glibc library's version read as that; else ''."""
    version = str(s.get("version") or "")
    if _GLIBC.match(version):
        return version
    m = _RETYPED.match(version)
    return f"GLIBC_{m.group(1)}" if m and _GLIBC_LIBS.search(str(s.get("file") or "")) else ""


def _glibc_lines(f: FactView) -> List[dict]:
    """The loader's "version `GLIBC_2.NN' not found" lines, torch's own libraries left to torch-import-failed."""
    out = []
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") != "loader:version-not-found" or not _glibc_version(s):
            continue
        if _TORCH_LIB.search(str(s.get("file") or "")) or _TORCH_LIB.search(str(s.get("required_by") or "")):
            continue
        out.append(s)
    return out


# glibc's own libraries: a symbol of theirs missing in the version a program was linked against is the
# C library's release, not another library's.
_GLIBC_LIBS = re.compile(r"(?:^|/)(?:libc|libm|libpthread|libdl|librt|libresolv|ld-linux[\w.-]{0,20})\.so[\w.]{0,12}$")


def _glibc_private(f: FactView) -> Iterator[Hit]:
    """glibc before 2.30's relocation error "symbol X, version GLIBC_PRIVATE not defined in file
    libc.so.6 with link time reference" (loader.toml symbol-version-not-defined): the program was
    linked against another glibc's internal symbols, which only the same glibc release provides."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") != "loader:symbol-version-not-defined":
            continue
        version, lib = str(s.get("version") or ""), str(s.get("file") or "")
        if not (version == "GLIBC_PRIVATE" or _GLIBC.match(version)) or not _GLIBC_LIBS.search(lib):
            continue
        if _TORCH_LIB.search(str(s.get("object") or "")):
            continue
        who = str(s.get("object") or "")
        private = version == "GLIBC_PRIVATE"
        what = (f"{who or 'the program'} was linked against glibc's internal symbol {s.get('symbol')} (GLIBC_PRIVATE), "
                f"which only the glibc release it was built with provides, and this node's {lib} is another, older one"
                if private else
                f"{who or 'the program'} needs {s.get('symbol')} at {version} and this node's {lib} lacks it: the C library "
                "is older than the one the program was built against")
        yield Hit(message=f"{what}: it was built on a newer OS than this one (line {s.get('line')}: \"{told_text(s)}\")",
                  fix=("ldd --version | head -1   # this node's glibc\n"
                       + (f"objdump -T {who} | grep -E 'GLIBC_(PRIVATE|[0-9.]+)' | sort -u | tail -5   # what it was linked against\n" if who else "")
                       + "# use a build of the program made for this OS (a release for an older distribution), rebuild it "
                         "here (module load gcc, then its build), or run it in a container of the OS it was built on:\n"
                       + f"apptainer exec --bind \"$PWD\" IMAGE.sif {who or './program'}   # IMAGE.sif: an image of that OS"),
                  evidence=told_evidence(s))
        return


def _key(version: str) -> tuple:
    m = _GLIBC.match(version)
    return tuple(int(g) for g in m.groups() if g is not None)


# A C library the loader found at a path the user chose (patchelf --replace-needed ./libc-2.23.so, a
# copy in the working or home directory): the glibc that is too old is that copy, not the node's,
# whose own libraries live under /lib, /lib64, /usr/lib and their multiarch folders.
_USERS_COPY = re.compile(r"(?:\.{1,2}/|~/|/home/|/tmp/)")


def _users_own_glibc(s: dict, lib: str, wanted: str, who: str) -> Hit:
    named = re.search(r"libc-(\d+\.\d+)\.so", lib)
    release = f" (glibc {named.group(1)}, by its name)" if named else ""
    prog = who or "./program"
    return Hit(message=f"{who or 'a program'} needs glibc {wanted}, and the C library the loader was pointed at is the "
                       f"user's own copy {lib}{release}, not this node's (line {s.get('line')}: \"{told_text(s)}\"): "
                       "the program was linked against a newer glibc than the copy it is made to run with, and the "
                       "node's own glibc is not what failed",
               severity="info",
               fix=(f"readelf -d {shlex.quote(prog)} | grep -E 'NEEDED|RPATH|RUNPATH'; readelf -l {shlex.quote(prog)} | grep "
                    f"interpreter   # what the binary was patched to load\n"
                    f"# to run it with that older glibc, build it against the same glibc (its headers and crt files, "
                    f"gcc --sysroot or that distribution's container); with the node's glibc it needs no patching"),
               evidence=told_evidence(s))


@rule("SW059", "glibc-older-than-binary", "error",
      "a program needs a newer GNU C library than the node has: it was built on a newer OS", impact=6,
      also={"info": "the C library named is the user's own copy (./libc-2.23.so), not the node's"})
def glibc_older_than_binary(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, glibc's dynamic loader refusing to start a program (or load a library)
        because a glibc library lacks a symbol version it was linked against: "./prog:
        /lib64/libm.so.6: version `GLIBC_2.29' not found (required by ./prog)" (elf/dl-version.c
        match_symbol, knowledge/messages/loader.toml version-not-found), for the GLIBC_2.x versions
        of libc, libm, libpthread, libdl and librt. libstdc++'s GLIBCXX/CXXABI versions are another
        library's, and a failure inside torch's own libraries is torch-import-failed's. glibc
        before 2.30's relocation error "symbol X, version GLIBC_PRIVATE not defined in file
        libc.so.6 with link time reference" (loader.toml symbol-version-not-defined) is read too: a
        program linked against another (newer) glibc's internal symbols. pip refusing a manylinux
        wheel ("dmlab2d-1.0-cp310-cp310-manylinux_2_35_x86_64.whl is not a supported wheel on this
        platform.") whose glibc floor (manylinux_2_35, or manylinux2014's 2.17) is above the node's,
        where the node's glibc is shown (collect_env's "Libc version: glibc-2.27") or the
        distribution release the user names has an older one (Ubuntu 18.04: 2.27, by the PEP 600
        compliance survey; knowledge/wheel_platform_tags.toml), and the pip shown knows the tag.

    Why it matters:
        glibc versions its symbols: a binary linked on a newer OS (a workstation, a CI runner, a
        newer container) requires the newest versions it used, and an older glibc cannot provide
        them. The node's C library cannot be replaced by the user; copying a newer libc beside the
        program does not work, since the loader and libc must match.

    How to fix:
        Build the program on the cluster (its compilers and modules) or on an OS no newer than the
        cluster's, run it in a container of the OS it was built on (Apptainer brings the image's own
        glibc), or, for a Python package, install a wheel whose manylinux tag this glibc accepts.

    References:
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-version.c;hb=refs/tags/glibc-2.42
        - https://apptainer.org/docs/user/latest/quick_start.html
        - https://peps.python.org/pep-0600/
        - https://github.com/mayeut/pep600_compliance/blob/2d70275ac1292c0f8750c0863df9d367a4967ebd/README.rst
    """
    lines = _glibc_lines(f)
    if not lines:
        private = list(_glibc_private(f))
        # a manylinux wheel pip refused for the node's glibc (rules/wheel_tags.py)
        yield from private or wheel_glibc_too_new(f)
        return
    newest = max(lines, key=lambda s: (_key(_glibc_version(s)), bool(s.get("required_by"))))   # a title retells it; the loader's line names who
    version = _glibc_version(newest)
    wanted = version.split("_", 1)[1]
    who = newest.get("required_by") or ""
    lib = newest.get("file") or "libc.so.6"
    if _USERS_COPY.match(lib):
        yield _users_own_glibc(newest, lib, wanted, who)
        return
    prog = who if who and not who.endswith(".so") and ".so." not in who else ""
    check = ("ldd --version | head -1   # this node's glibc: older than " + wanted + "\n"
             + (f"objdump -T {who} | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1   # the newest glibc it needs\n" if who else ""))
    python = ("python3 -m pip debug --verbose | grep -m3 manylinux   # the manylinux tags this glibc accepts: reinstall the "
              "package from a wheel of one of them (or from source, pip install --no-binary NAME NAME)\n"
              if who and (".cpython-" in who or "site-packages" in who) else "")
    fix = (check + python
           + "# rebuild it on this cluster (module load gcc, then its build) or on an OS no newer than this node's; or run "
             "it in a container of the OS it was built on, which brings that OS's glibc:\n"
           + f"apptainer exec --bind \"$PWD\" IMAGE.sif {prog or './program'}   # IMAGE.sif: an image of the OS "
             f"the program was built on (glibc {wanted} or newer)")
    others = sorted({_glibc_version(s) for s in lines}, key=_key)
    more = f" ({len(others)} glibc versions missing: {', '.join(others[-4:])})" if len(others) > 1 else ""
    yield Hit(message=f"{'the program ' + who if who else 'a program'} needs glibc {wanted} ({version} of {lib}) and the C "
                      f"library where it ran is older{more}: it was built on a newer OS than this one "
                      f"(line {newest.get('line')}: \"{told_text(newest)}\")",
              fix=fix, evidence=told_evidence(newest))


# torch's own libraries (the wheel's torch/lib, libtorch's lib/): another program or extension that links
# them finds them only where the loader looks, or once torch's import has loaded them into the process.
_TORCH_OWN = re.compile(r"^lib(?:torch(?:_cpu|_cuda|_hip|_python|_global_deps)?|c10(?:_cuda|_hip)?|shm|caffe2_nvrtc)$")
_TORCH_LIB_DIR = "$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), \"lib\"))')"


def _torch_library_outside_torch(s: dict) -> Hit:
    """A program or extension module linked against torch's libraries (a torch C++ extension, a tch-rs
    or libtorch program) that the loader cannot find them for: not torch's own import (torch-import-failed)."""
    soname = f"{s['name']}.so" + (f".{s['version']}" if s.get("version") else "")
    python = "ImportError" in str(s.get("text", "")) or "OSError" in str(s.get("text", ""))
    if python:
        what = ("a Python extension module linked against torch's libraries is imported where the loader does not "
                f"find {soname}: torch's import loads them into the process, and its lib folder is not on the "
                "loader's path otherwise")
        fix = (f"# in the program: import torch before the extension module, so torch's import has loaded {soname}\n"
               f"export LD_LIBRARY_PATH=\"{_TORCH_LIB_DIR}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}\"   # or torch's "
               "lib folder on the loader's path; an extension built for another torch release needs rebuilding")
    else:
        what = (f"a program linked against torch's C++ libraries (libtorch, tch-rs) does not find {soname}: the "
                "folder that holds them is not on the loader's path")
        fix = (f"ls \"${{LIBTORCH:?the libtorch folder the program was built with}}\"/lib/{soname}   # libtorch's own "
               "copy (absent: a libtorch without that part, such as a CPU build)\n"
               "export LD_LIBRARY_PATH=\"$LIBTORCH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"   # in the shell or job "
               f"script that runs it; built against Python's torch (LIBTORCH_USE_PYTORCH=1): {_TORCH_LIB_DIR} instead")
    return Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))


@rule("SW060", "shared-library-not-found", "error",
      "the dynamic loader finds no copy of a library the program needs", impact=5,
      also={"info": "the program was run by a modulefile during module load, before the loaded modules' paths apply"})
def shared_library_not_found(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, glibc's loader (or dlopen, or Python's import of an extension) failing to
        open a library that is not a GPU, MPI or graphics library: "./prog: error while loading
        shared libraries: libcrypto.so.1.1: cannot open shared object file: No such file or
        directory" (elf/dl-load.c _dl_map_object; libraries.toml form dlopen-cannot-open, a
        library the catalogue does not list). CUDA, ROCm, cuDNN and NCCL libraries are
        cuda-runtime-library-missing's, MPI's mpi-library-missing's, OpenGL/X11/GLib's
        opengl-library-missing's; a libibverbs provider that "couldn't load driver" names is
        container-rdma-libs-missing's. Where the user's own "module load ..." line printed the
        loader's refusal, a modulefile ran the program (Lmod's capture()) before the load's paths
        applied: said at info, since that is not evidence the library is missing. torch's own
        libraries (libtorch_cuda.so, libc10.so) not found for a program that links them (a torch C++
        extension imported on its own, a tch-rs or libtorch program), outside torch's import.

    Why it matters:
        The loader searches LD_LIBRARY_PATH, the RUNPATH of the program, /etc/ld.so.cache and the
        system directories, for the exact soname the program was linked against (libcrypto.so.1.1
        is not libcrypto.so.3). A library of another release than the system ships, or one
        installed where the loader does not look (/usr/local/lib before ldconfig ran, a bundled
        lib/ folder, a module not loaded), stops the program before it runs.

    How to fix:
        Find whether a copy exists (ldconfig -p, find); put its folder on LD_LIBRARY_PATH or in
        the loader's cache (ldconfig, as root), load the module that provides it, or install the
        package of that soname's release; else rebuild the program against the release present.

    References:
        - https://man7.org/linux/man-pages/man8/ld.so.8.html
        - https://man7.org/linux/man-pages/man8/ldconfig.8.html
        - https://sourceware.org/git/?p=glibc.git;a=blob;f=elf/dl-load.c;hb=refs/tags/glibc-2.42
        - https://lmod.readthedocs.io/en/latest/050_lua_modulefiles.html (capture: run a command from a modulefile)
        - https://github.com/LaurentMazare/tch-rs/blob/main/README.md (LIBTORCH, LD_LIBRARY_PATH, LIBTORCH_USE_PYTORCH)
    """
    symptoms = f.get("ticket.symptoms") or []
    # libibverbs dlopens its providers by the names /etc/libibverbs.d lists: not a link-time soname,
    # and harmless where another provider serves the device (container-rdma-libs-missing reads it)
    providers = {t.get("line") for t in symptoms if t.get("id") == "libibverbs:driver-load-failed"}
    own = next((t for t in symptoms if t.get("id") == "libraries:unlisted" and _TORCH_OWN.match(str(t.get("name") or ""))
                and not torch_import_frame_before(f, t)), None)
    if own is not None:
        yield _torch_library_outside_torch(own)
        return
    s = next((s for s in symptoms if s.get("id") == "libraries:unlisted" and s.get("line") not in providers
              and s.get("name") and not _OTHERS.match(str(s["name"]))), None)
    if s is None:
        return
    soname = f"{s['name']}.so" + (f".{s['version']}" if s.get("version") else "")
    fix = (f"ldconfig -p | grep '{soname}'   # nothing: the loader's cache has no {soname} (another release may be there: "
           f"ldconfig -p | grep '{s['name']}.so')\n"
           f"find / -xdev -name '{soname}*' 2>/dev/null | head   # a copy outside the search path (/usr/local/lib, a bundled "
           "lib/, a conda env or module)\n"
           f"export LD_LIBRARY_PATH=/path/to/its/dir${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}   # the folder find printed; or, "
           "as root, add it to /etc/ld.so.conf.d/ and run ldconfig\n"
           f"module spider {s['name'][3:]} 2>&1 | head; dnf provides '*/{soname}' || apt-file search {soname}   # a module, "
           "or the distribution package of that release; else rebuild the program against the release installed")
    by_module = next((t for t in symptoms if t.get("id") == "prose:module-load-printed-loader-error"
                      and t.get("line") == s.get("line")), None)
    if by_module is not None:
        loads = [t for t in symptoms if t.get("id") == "jobscript:module-load" and (t.get("line") or 0) < (s.get("line") or 0)]
        mods = str(max(loads, key=lambda t: t.get("line") or 0).get("modules")) if loads else "MODULES"
        # printed by the module command itself: a modulefile ran the program (Lmod's capture()) before the
        # loaded modules' paths reach any environment, so the same program may start once the load is done
        yield Hit(message=f"{by_module.get('program')} could not load {soname} while a modulefile ran it during "
                          f"\"module load\" (line {s.get('line')}: \"{told_text(s)}\"): a command a modulefile runs "
                          "(Lmod's capture()) starts in the environment from before the load, so libraries the modules "
                          "being loaded provide are not on its path yet; not evidence that the library is missing",
                  fix=(f"module load {mods}; ldd \"$(command -v {by_module.get('program')})\" | grep 'not found'   "
                       "# after the load: nothing here means the program starts in the loaded environment\n"
                       "# in the modulefile: do not capture() a program that needs the modules of the same load; set "
                       "the values it would print (paths, flags) with setenv/prepend_path instead"),
                  evidence=told_evidence(s), severity="info")
        return
    yield Hit(message=f"the loader finds no {soname} (line {s.get('line')}: \"{told_text(s)}\"): the program was linked "
                      f"against that exact release of {s['name']}, and no copy of it is where the loader searches",
              fix=fix, evidence=told_evidence(s))
