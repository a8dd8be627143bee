"""A program built against one version of a library and run with another, as the library's own check
says it (knowledge/messages/version_check.toml): HDF5's H5check_version and h5py's import check, and
the same fact from protobuf (VerifyVersion), libpng (png_user_version_check) and OpenSSH's check of
OpenSSL. Each names the headers' version and the library's, which the finding decodes. NumPy's C-API
check is rules/numpy_abi.py's."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

HDF5 = "hdf5-version-mismatch"
OTHER = "built-against-other-library-version"

_H5PY = "version_check:h5py-running-against-other-hdf5"
_CONTINUED = "version_check:hdf5-check-disabled-continues"
_RELEASE = "version_check:hdf5-release-mismatched"

_HDF5_FIX = (
    "ldd $(command -v PROGRAM) | grep -i hdf5   # the libhdf5 the program loads at run time, and from where\n"
    "h5cc -showconfig | grep -i -E 'HDF5 Version|Installation point'   # the HDF5 whose headers and wrapper are on PATH now\n"
    "module list 2>&1 | grep -i hdf5   # on a cluster: the HDF5 module loaded now (load the same one to build and to run)\n"
    "# rebuild the program against the HDF5 it runs with (make clean; build with that module loaded), or run with the\n"
    "# HDF5 it was built against first on LD_LIBRARY_PATH; HDF5_DISABLE_VERSION_CHECK=1 only hides the mismatch")
_H5PY_FIX = (
    "python -c 'import h5py; print(h5py.version.info)'   # the HDF5 h5py was built against and the one it loaded\n"
    "python -c 'import h5py, os; print(os.path.dirname(h5py.__file__))'   # then ldd that folder's _errors*.so | grep -i hdf5\n"
    "# install h5py from the same channel as the libhdf5 it loads (one conda channel for both, or pip's wheel with no\n"
    "# other libhdf5 on LD_LIBRARY_PATH), or build it against that library: HDF5_DIR=<its prefix> pip install --no-binary=h5py h5py")


def _version(text: str) -> tuple:
    return tuple(int(p) for p in text.split(".")[:3] if p.isdigit())


def _hdf5_difference(headers: str, library: str) -> str:
    """What the two HDF5 versions say: which part differs, and what that means for the ABI."""
    h, lib = _version(headers), _version(library)
    if len(h) < 3 or len(lib) < 3:
        return ""
    newer = "the headers are newer than the library" if h > lib else "the library is newer than the headers"
    if h[:2] != lib[:2]:
        return (f"different release series ({h[0]}.{h[1]} against {lib[0]}.{lib[1]}: another API and ABI, {newer}); "
                "the program must be rebuilt against the library it runs with")
    return (f"the same {h[0]}.{h[1]} series, releases {h[2]} and {lib[2]} ({newer}); HDF5 1.8 to 1.14.3 abort on "
            "any release difference, 1.14.4 and later accept one unless the release is listed as incompatible")


def _versions(told: list) -> Optional[dict]:
    return next((s for s in told if s.get("headers") and s.get("library")), None)


@rule("SW071", HDF5, "error", "a program runs with another HDF5 library than the headers it was compiled with", impact=6,
      also={"warning": "h5py's own import check: it loaded another HDF5 than it was built against, and only warns"})
def hdf5_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, HDF5's own version check (H5check_version, run by every program's first
        HDF5 call): "Warning! ***HDF5 library version mismatched error***" (HDF5 1.8 to 1.14), the
        "release mismatched" banner of 1.14.4 and later, HDF5 1.6's "Warning! The HDF5 header files
        included by this application do not match the version used by the HDF5 library", the
        "'HDF5_DISABLE_VERSION_CHECK' environment variable is set to 1, application will continue"
        variant, and the line "Headers are X, library is Y", whose two versions the finding decodes.
        A warning for h5py's own check at import ("h5py is running against HDF5 Y when it was built
        against X, this may cause problems"), which only warns.

    Why it matters:
        The program's compiled code uses the struct layouts and constants of the headers it was
        built with; another libhdf5 may lay them out otherwise, so HDF5 aborts the program (SIGABRT,
        "Bye...") unless HDF5_DISABLE_VERSION_CHECK is set, and with it set, data corruption or
        crashes may follow. The usual cause is two HDF5 installations: the include path of the
        build pointed at one (a module, /usr/include, a conda environment) and the dynamic loader
        finds another at run time (LD_LIBRARY_PATH, another module loaded, a conda libhdf5).

    How to fix:
        Find which libhdf5 the program loads (ldd) and which HDF5 the build used (h5cc -showconfig,
        module list); rebuild the program against the library it runs with, or run it with the
        library it was built against (load the same module). Setting HDF5_DISABLE_VERSION_CHECK
        only silences the check.

    References:
        - https://github.com/HDFGroup/hdf5/blob/1187820c3bbd2fb21c3ca971e09e2df9317340d5/src/H5.c (H5check_version)
        - https://support.hdfgroup.org/documentation/hdf5/latest/_r_e_l_v_e_r_s_i_o_n.html (what major, minor and release mean)
        - https://github.com/daverio/LATfield2/issues/4 (two HDF5 installs: include path and linker pointed at different ones)
        - https://github.com/openmeeg/openmeeg/issues/363 (fixed by compiling against the library it runs with)
        - https://github.com/pydata/xarray/issues/8537 (h5py's own warning)
    """
    told = catalogued(f, HDF5)
    if not told:
        return
    hdf5_said = [s for s in told if s.get("id") != _H5PY]
    if not hdf5_said:
        yield from _h5py_only(told[0])
        return
    versions = _versions(hdf5_said)
    s = versions or hdf5_said[0]
    continued = any(t.get("id") == _CONTINUED for t in told)
    release = any(t.get("id") == _RELEASE for t in told)
    what = "a release HDF5 lists as incompatible; " if release else ""
    if versions:
        headers, library = versions["headers"], versions["library"]
        detail = _hdf5_difference(headers, library)
        said = (f"the program was compiled with HDF5 {headers} headers and runs with libhdf5 {library} "
                f"({what}line {versions.get('line')}: \"{told_text(versions)}\")" + (f": {detail}" if detail else ""))
    else:
        said = (f"HDF5 found the program compiled with other HDF5 headers than the libhdf5 it runs with ({what}"
                f"line {s.get('line')}: \"{told_text(s)}\"); the line 'Headers are X, library is Y' names both")
    outcome = ("HDF5_DISABLE_VERSION_CHECK let it continue at its own risk: corrupt data or crashes may follow"
               if continued else "HDF5 aborts it unless HDF5_DISABLE_VERSION_CHECK is set, which only hides the mismatch")
    evidence = told_evidence(s)
    if versions:
        evidence.update({"hdf5.headers": versions["headers"], "hdf5.library": versions["library"]})
    yield Hit(message=f"{said}. {outcome}", fix=_HDF5_FIX, evidence=evidence)


def _h5py_only(s: dict) -> Iterator[Hit]:
    detail = _hdf5_difference(s.get("headers", ""), s.get("library", ""))
    evidence = told_evidence(s)
    evidence.update({"hdf5.headers": s.get("headers"), "hdf5.library": s.get("library")})
    yield Hit(message=f"h5py was built against HDF5 {s.get('headers')} and loaded libhdf5 {s.get('library')} (line "
                      f"{s.get('line')}: \"{told_text(s)}\")" + (f": {detail}" if detail else "") +
                      "; h5py only warns, but another package's libhdf5 is being loaded in its place",
              fix=_H5PY_FIX, evidence=evidence, severity="warning")


# What each library's check is called, how to see which copy is loaded, and what to rebuild: one line each.
_LIBRARIES = {
    "version_check:protobuf-library-too-old": (
        "protobuf", "the program's generated code needs a newer libprotobuf than the one loaded",
        "ldd $(command -v PROGRAM) | grep -i protobuf   # which libprotobuf is loaded, and from where\n"
        "protoc --version; pkg-config --modversion protobuf   # the protobuf whose headers and compiler are found now\n"
        "# run with the libprotobuf the program was generated and compiled with first on LD_LIBRARY_PATH, or rebuild the\n"
        "# program (regenerate its .pb.cc with the same protoc) against the libprotobuf it runs with"),
    "version_check:protobuf-headers-too-old": (
        "protobuf", "the program was compiled with protobuf headers older than the loaded libprotobuf accepts",
        "ldd $(command -v PROGRAM) | grep -i protobuf   # which libprotobuf is loaded, and from where\n"
        "protoc --version; pkg-config --modversion protobuf   # the protobuf whose headers and compiler are found now\n"
        "# regenerate the .pb.cc files with the protoc of the libprotobuf it runs with and rebuild, or run with the old\n"
        "# libprotobuf first on LD_LIBRARY_PATH"),
    "version_check:libpng-built-with-other-version": (
        "libpng", "png.h of one libpng, another libpng loaded; with major or minor differing libpng refuses to create its structs",
        "ldd $(command -v PROGRAM) | grep -i png   # which libpng is loaded, and from where\n"
        "libpng-config --version   # the libpng whose headers are found now\n"
        "# rebuild the program against the libpng it runs with, or put the libpng it was built with first on LD_LIBRARY_PATH"),
    "version_check:openssh-openssl-version-mismatch": (
        "OpenSSL (checked by OpenSSH)", "ssh was built against one OpenSSL and loaded another libcrypto",
        "echo $LD_LIBRARY_PATH   # a conda environment or an application folder here puts its own libcrypto first\n"
        "ldd $(command -v ssh) | grep -i crypto   # which libcrypto ssh loads\n"
        "env -u LD_LIBRARY_PATH ssh -V   # ssh with the system's libcrypto; run ssh and git that way, or deactivate the environment"),
}


def _openssl_version(hexnum: str) -> str:
    """OPENSSL_VERSION_NUMBER 0xMNNFFPPS (1.x: major, minor, fix, patch letter, status; 3.x: major, minor, patch)."""
    try:
        n = int(hexnum, 16)
    except ValueError:
        return hexnum
    major, minor, fix = n >> 28, (n >> 20) & 0xFF, (n >> 12) & 0xFF
    if major >= 3:
        return f"{major}.{minor}.{(n >> 4) & 0xFF}"
    patch = (n >> 4) & 0xFF
    return f"{major}.{minor}.{fix}" + (chr(ord("a") + patch - 1) if 0 < patch <= 26 else "")


@rule("SW072", OTHER, "error", "a program runs with another version of a library than the headers it was built with", impact=5)
def built_against_other_library_version(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a library's own check that the program's headers and the loaded library
        differ: protobuf's VerifyVersion ("This program requires version X of the Protocol Buffer
        runtime library, but the installed version is Y", and "This program was compiled against
        version X ..., which is not compatible with the installed version (Y)"), libpng's "Application
        built with libpng-X but running with Y", and OpenSSH's "OpenSSL version mismatch. Built
        against X, you have Y" (OPENSSL_VERSION_NUMBER in hex, decoded). HDF5's check is
        hdf5-version-mismatch's; NumPy's is numpy-abi-mismatch's. And the same fact for the CUDA
        runtime as the dynamic loader says it (knowledge/messages/cuda_symbols.toml): an extension or
        program refused with "undefined symbol: __cudaRegisterFatBinaryEnd" (nvcc 10.1+ emits it),
        "__cudaPushCallConfiguration" / "__cudaPopCallConfiguration" (nvcc 9.2+), or
        "cudaGetDriverEntryPoint" (CUDA 11.3), users' "undefined symbol : NAME" included: it was built
        with at least that CUDA and runs with an older libcudart (knowledge/cuda_symbols.toml dates
        each symbol); and "version `libcudart.so.11.0' not found" (libcublasLt.so.11, ...): the file
        loaded under that name is another CUDA major's library. torch's own libraries failing so are
        torch-import-failed's, not this rule's.

    Why it matters:
        The program carries the header version as a constant and the library compares it with its
        own: they differ when the dynamic loader finds another copy of the library than the one the
        build used (LD_LIBRARY_PATH from a conda environment or a module, a library bundled with an
        application, two installations). protobuf and OpenSSH abort; libpng refuses to create its
        read and write structures when major or minor differ.

    How to fix:
        Find which copy is loaded (ldd on the program) and which the build used; run with the copy
        it was built against first on the library path, or rebuild against the one it runs with.
        For ssh and git under a conda environment, run them without the environment's
        LD_LIBRARY_PATH. For CUDA: rebuild the extension with the toolkit of the CUDA runtime it
        runs with (that CUDA's nvcc first on PATH, CUDA_HOME pointing at it), or load a runtime of
        the release it was built with (module load cuda/X, or its lib64 first on LD_LIBRARY_PATH);
        never symlink one CUDA major's libcudart to another's name.

    References:
        - https://github.com/protocolbuffers/protobuf/blob/40ee551715c3a784ea6132dbf604b0e665ca2def/src/google/protobuf/stubs/common.cc (VerifyVersion)
        - https://github.com/pnggroup/libpng/blob/8f3dd833d759b6e9b749123d1d0ebc942ea4bfb3/png.c (png_user_version_check)
        - https://github.com/openssh/openssh-portable/blob/4cbfe8ebebb1fb345bddab629768ad95885846d6/entropy.c (seed_rng)
        - https://docs.openssl.org/3.0/man3/OPENSSL_VERSION_NUMBER/ (the 0xMNN00PP0L layout of 3.x)
        - https://github.com/MCMrARM/mcpelauncher-linux/issues/355
        - https://github.com/llvm/llvm-project/blob/026c6392ea867d29ca7756763c63f226aa391731/clang/lib/Basic/Cuda.cpp (CUDA_USES_NEW_LAUNCH 9.2, CUDA_USES_FATBIN_REGISTER_END 10.1)
        - https://docs.nvidia.com/cuda/cuda-programming-guide/04-special-topics/driver-entry-point-access.html (cudaGetDriverEntryPoint since CUDA 11.3)
        - https://github.com/pmh47/dirt/issues/48 (maintainer: the op compiled with another CUDA than the one at run time)
        - https://github.com/YueLiao/PPDM/issues/59 (CUDA 7.5 runtime under an extension built for CUDA 9+)
    """
    told = [s for s in catalogued(f, OTHER) if s.get("id") in _LIBRARIES]
    if not told:
        lua = _lua_torch_symbol(f)
        if lua is not None:
            yield lua
            return
        yield from _cuda_symbols(f)
        return
    s = told[0]
    library, meaning, fix = _LIBRARIES[s["id"]]
    headers, loaded = s.get("headers") or "?", s.get("library") or "?"
    if s["id"].endswith("openssl-version-mismatch"):
        headers, loaded = (f"{_openssl_version(headers)} (0x{headers})", f"{_openssl_version(loaded)} (0x{loaded})")
    evidence = told_evidence(s)
    evidence.update({"library.name": library, "library.headers": headers, "library.loaded": loaded})
    yield Hit(message=f"{library}: the program was built for version {headers} and runs with {loaded} (line "
                      f"{s.get('line')}: \"{told_text(s)}\"): {meaning}. Another copy of the library comes first "
                      "on the library path than the one the build used",
              fix=fix, evidence=evidence)


# Lua Torch (torch/distro): the core rock torch builds libTH (torch/torch7 lib/TH, symbols TH*) and
# cutorch builds libTHC (torch/cutorch lib/THC, symbols THC*); every other rock (threads, nn, cunn,
# cudnn) links against them, all under the distro's install prefix (~/torch/install/lib). A TH or THC
# symbol the loader cannot bind there is one rock built against another release of those two than
# the one installed: the maintainers' answer is to update them together (torch/threads#14: "you
# probably did not update torch7 core"; torch/torch7#648: "upgrade your cutorch").
_LUA_TORCH = re.compile(r"(?:^|[/\\])torch[/\\]install[/\\]lib[/\\]")
_LUA_SYMBOL = re.compile(r"^TH(C?)[A-Z]\w{1,80}$")


def _lua_torch_symbol(f: FactView) -> Optional[Hit]:
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") != "loader:undefined-symbol" or not _LUA_TORCH.search(str(s.get("file") or "")):
            continue
        symbol = _LUA_SYMBOL.match(str(s.get("symbol") or ""))
        if symbol is None:
            continue
        rock, lib = ("cutorch", "libTHC") if symbol.group(1) else ("torch", "libTH")
        file = str(s.get("file"))
        if re.search(rf"(?:^|[/\\]){lib}\.so", file):   # the library itself refers to a symbol of its own release
            said = f"{file} refers to {s['symbol']}, which no loaded library defines: a {lib} of mixed releases"
        else:
            said = (f"{file} needs {s['symbol']}, which the installed {lib} (the {rock} rock) lacks: {rock} is older "
                    "than the rock that calls it")
        evidence = told_evidence(s)
        evidence.update({"library.name": f"Lua Torch {lib}", "library.loaded": file})
        return Hit(message=f"Lua Torch: {said} (line {s.get('line')}: \"{told_text(s)}\"); the rocks were built from "
                           "different releases",
                   fix=("luarocks list   # the rocks installed and their versions (torch, cutorch, threads, nn, cunn)\n"
                        f"luarocks install {rock}   # rebuilds {lib} from the current release; then reinstall the rocks "
                        "that link against it (luarocks install threads, nn, cunn) so that all are of one release"),
                   evidence=evidence)
    return None


# torch's own libraries (and the nvidia-* wheels torch loads): a loader error there is torch's import
# failing (rules/_loader.py, torch-import-failed), which keeps it.
_TORCH_OWN = re.compile(r"[/\\](?:torch|nvidia)[/\\]|(?:^|[/\\])lib(?:torch|c10)\w{0,20}\.so")
_CUDA_SYMBOLS = "cuda_symbols:cudart-symbol-undefined"
_CUDA_NODE = "cuda_symbols:cuda-version-node-not-found"


def _cuda_table() -> tuple:
    table = knowledge.load("cuda_symbols")
    return ({s["name"]: s for s in table["symbol"]}, {n["node"]: n for n in table["version_node"]})


def _cuda_fix(file: str, wanted: str) -> str:
    path = file if file.startswith(("/", "~/")) and "..." not in file else ""
    check = (f"ldd -r {path} 2>&1 | grep -E 'libcudart|libcublas|undefined symbol'   # which CUDA runtime it loads, and what it lacks\n"
             if path else "")
    return (f"{check}nvcc --version | tail -n 2; ls -d /usr/local/cuda*   # the CUDA toolkits here and the one a rebuild uses now\n"
            "echo \"$LD_LIBRARY_PATH\"; ldconfig -p | grep libcudart   # the CUDA runtimes the loader finds, first on the path first\n"
            f"# rebuild the extension with the nvcc of the CUDA runtime it runs with (export CUDA_HOME=/usr/local/cuda-X; "
            f"export PATH=$CUDA_HOME/bin:$PATH; clean its build folder, then build it again), or run it with a {wanted} "
            "runtime first on LD_LIBRARY_PATH (module load cuda/X on a cluster)")


def _cuda_symbols(f: FactView) -> Iterator[Hit]:
    """An extension built with one CUDA and loaded with an older (or another major's) CUDA runtime."""
    told = [s for s in catalogued(f, OTHER) if s.get("id") in (_CUDA_SYMBOLS, _CUDA_NODE)
            and not _TORCH_OWN.search(str(s.get("file") or "") + " " + str(s.get("required_by") or ""))]
    if not told:
        return
    symbols, nodes = _cuda_table()
    for s in told:
        file = str(s.get("file") or "")
        if s["id"] == _CUDA_SYMBOLS:
            name = str(s.get("symbol") or "")
            entry = next((e for k, e in symbols.items() if k.lower() == name.lower().removesuffix("_ptsz")), None)
            if entry is None:
                continue
            since = entry["since"]
            who = f"{file} was" if file else "the program or extension was"
            evidence = told_evidence(s)
            evidence.update({"library.name": "CUDA runtime (libcudart)", "library.headers": f">= {since}",
                             "library.loaded": f"< {since}", "cuda.symbol": entry["name"]})
            yield Hit(message=f"CUDA runtime: {who} built with CUDA {since} or later ({entry['what']}) and runs with "
                              f"an older libcudart that lacks {entry['name']} (line {s.get('line')}: \"{told_text(s)}\"): "
                              "another CUDA runtime comes first on the library path than the toolkit the build used",
                      fix=_cuda_fix(file, f"CUDA {since} or newer"), evidence=evidence)
            return
        node = nodes.get(str(s.get("node") or ""))
        if node is None:
            continue
        by = str(s.get("required_by") or "") or "the program"
        evidence = told_evidence(s)
        evidence.update({"library.name": node["library"], "library.headers": f"CUDA {node['cuda']}.x ({node['node']})",
                         "library.loaded": file or "?"})
        yield Hit(message=f"{node['library']}: {by} was linked against CUDA {node['cuda']}'s {node['library']} (symbol "
                          f"version {node['node']}) and the file loaded under that name ({file}) is another CUDA "
                          f"major's library, which lacks that version (line {s.get('line')}: \"{told_text(s)}\"); "
                          "a symlink from another toolkit's library is the usual cause",
                  fix=_cuda_fix(str(s.get("required_by") or ""), f"CUDA {node['cuda']}.x"), evidence=evidence)
        return
