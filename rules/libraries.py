"""Runtime libraries: a job that loads two copies (OpenMP runtimes, cuDNN and CUDA libraries, torch
itself), and a CUDA or ROCm library a program cannot load at all."""

from __future__ import annotations

import os
import re
import shlex
from typing import Any, Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import (catalogued, facts_or_ticket, first_symptom, ticket_all, ticket_evidence, ticket_symptoms,
                                     told_evidence, told_text, torch_import_frame_before)
from hpcdoctor.rules._cuda_wheels import loader_path_fix
from hpcdoctor.rules._loader import _SONAME, _TORCH_LIB
from hpcdoctor.rules._openmp_mixing import openmp_mixing_hits
from hpcdoctor.rules._stacks import JAX_CUDA_FIX, TF_CUDA_CHECK, TF_CUDA_FIX, stack_of_ticket, tf_tested_build

OPENMP_RUNTIMES = ("libgomp", "libiomp5", "libomp")


@rule("SW005", "duplicate-libraries", "warning", "two copies of a runtime library loaded, or torch installed twice", impact=8)
def duplicate_libraries(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Two different files of the same library loaded into the job's process (two libnccl, two
        libcudart, two libcudnn), more than one OpenMP runtime (libgomp with libiomp5 or libomp),
        torch installed in two places on sys.path (user site and a venv, pip and conda), or, in a
        collect_env library list, conda's cudatoolkit or nccl beside NVIDIA's pip wheels of them,
        or pip's torch ("torch 1.3.1 pypi_0 pypi") beside conda's pytorch. In a pasted ticket,
        the messages a second copy causes: cuDNN's "version incompatibility: PyTorch was compiled
        against ... but found runtime version ...", Intel OpenMP's "OMP: Error #15", mkl-service's
        "MKL_THREADING_LAYER=INTEL is incompatible with libgomp.so.1 library" (Intel's threading
        layer asked for beside GNU OpenMP) and threadpoolctl's "Found Intel OpenMP ('libiomp') and
        LLVM OpenMP ('libomp') loaded at the same time". glibc's relocation error (before 2.30) for a
        symbol versioned by its library's soname, "libcublas.so.11: symbol free_gemm_select version
        libcublasLt.so.11 not defined in file libcublasLt.so.11 with link time reference": the copy
        of the library found is another release than the one the requiring library was built with.

    Why it matters:
        Two copies of a library means two states: NCCL communicators that hang, cuDNN version
        errors, crashes at exit. Two OpenMP runtimes oversubscribe the cores and can deadlock
        (Intel's "OMP: Error #15"). A second torch install shadows the one the user upgraded.

    How to fix:
        Remove the extra copy: uninstall the duplicate torch (pip uninstall torch until none is
        left, then reinstall once), drop LD_LIBRARY_PATH entries or LD_PRELOADs that bring another
        libnccl/libcudart, and avoid mixing conda's and pip's CUDA libraries. For mkl-service's
        refusal, export MKL_THREADING_LAYER=GNU (MKL then uses the GNU runtime already loaded), or
        import numpy before torch, as its message says.

    References:
        - https://github.com/pytorch/pytorch/issues/37377
        - https://github.com/IntelPython/mkl-service/blob/bf04f5e00cdbe7ea714e4ca443dc334cebbf922a/mkl/_mklinitmodule.c
        - https://github.com/joblib/threadpoolctl/blob/master/multiple_openmp.md
        - https://github.com/microsoft/onnxruntime/issues/8594 (how many libcublasLt.so.11 there are, and which one loads)
        - https://github.com/pytorch/pytorch/issues/51080 (conda's cudatoolkit 11.0.221 alone gives the same error)
        - 001_dd2fe1913b91ca0a.txt (one clean virtual environment per project)
    """
    yield from facts_or_ticket(lambda: list(_duplicates_from_facts(f)), _duplicates_in_ticket(f))


def _duplicates_in_ticket(f: FactView) -> Iterator[Hit]:
    """The messages a second copy causes: cuDNN's version check (another libcudnn than torch's
    own was loaded) and Intel OpenMP's "OMP: Error #15" (two libiomp5 in one process)."""
    sym = ticket_symptoms(f)
    if "torch:cudnn-mismatch" in sym:
        s = sym["torch:cudnn-mismatch"]
        yield Hit(message=f"torch was built with cuDNN {s['compiled']} but loaded cuDNN {s['found']} (line {s['line']}): "
                          "another libcudnn shadows the one torch brings",
                  fix="unset LD_LIBRARY_PATH   # or remove the cuDNN directory from it, so torch loads its own libcudnn",
                  evidence=ticket_evidence(s))
    if "openmp:omp-error-15" in sym:
        s = sym["openmp:omp-error-15"]
        yield Hit(message=f"two copies of the Intel OpenMP runtime ({s['library']}) were loaded into one process (line {s['line']})",
                  fix="conda install nomkl   # or pip uninstall intel-openmp, keeping torch's own libiomp5; "
                      "KMP_DUPLICATE_LIB_OK=TRUE only hides the conflict",
                  evidence=ticket_evidence(s))
    yield from openmp_mixing_hits(f)
    shadowed = _other_release_found(f)
    if shadowed is not None:
        yield shadowed
    local = _user_tree_copy(f)
    if local is not None:
        yield local


# A user's own package tree, searched before the installation's: LuaRocks' --local tree (~/.luarocks,
# which `luarocks path` puts first on LUA_CPATH) and pip's --user site (~/.local/lib/pythonX.Y).
_USER_TREE = re.compile(r"/\.luarocks/lib/|/\.local/lib/python\d")
_LOOKUP_BY = re.compile(r"(?P<program>/[^\s:]{1,300}): symbol lookup error: ")


def _user_tree_copy(f: FactView):
    """The loader's "undefined symbol" for a library in the user's own package tree while the program
    runs from another installation: a copy the user once installed locally is found before the one
    the installation built (torch7#243: ~/.luarocks' libcutorch.so under torch/install's luajit)."""
    for s in ticket_all(f, "loader:undefined-symbol"):
        lib = str(s.get("file") or "")
        local, by = _USER_TREE.search(lib), _LOOKUP_BY.search(str(s.get("text") or ""))
        if not (local and by and not _USER_TREE.search(by["program"])):
            continue
        tree = lib[:local.end()].rstrip("/")
        return Hit(message=f"{by['program']} loaded {os.path.basename(lib)} from the user's own package tree ({tree}), "
                           f"which lacks {s.get('symbol')} (line {s.get('line')}): a copy installed there earlier is "
                           "found before the one the installation built",
                   fix=(f"ls -la {shlex.quote(os.path.dirname(lib))}   # the local copies that shadow the installation's\n"
                        f"mv {shlex.quote(lib)} {shlex.quote(lib)}.old   # or remove the local tree's copy of the package "
                        "(luarocks remove --local NAME; pip uninstall from the user site), then run again"),
                   evidence={**ticket_evidence(s), "library": lib, "program": by["program"]})
    return None


# The trees of the package managers that keep their own copies of the CUDA libraries.
_CONDA_TREE = re.compile(r"/(?:ana|mini|micro)?(?:conda|forge|mamba)[0-9]?/|/envs/[^/]+/lib/")


def _other_release_found(f: FactView):
    """glibc before 2.30's relocation error naming a symbol versioned by its library's soname ("free_gemm_select
    version libcublasLt.so.11"): the library exports versioned symbols, so the copy found is another release,
    not the one the requiring object was built with (loader.toml symbol-version-not-defined). The library
    the loader found first may be a second copy, or a package may hold files of two releases."""
    s = next((t for t in catalogued(f, "duplicate-libraries") if t.get("id") == "loader:symbol-version-not-defined"
              and _SONAME.fullmatch(str(t.get("version") or ""))), None)
    if s is None:
        return None
    lib, obj = s["version"], os.path.normpath(str(s.get("object") or ""))
    name = os.path.basename(obj)
    fix = [f"ldd {shlex.quote(obj)} | grep {shlex.quote(lib)}   # the {lib} the loader picks for {name}: a folder "
           "from LD_LIBRARY_PATH or another CUDA install shadows the copy it belongs with; drop that folder",
           f"find / -xdev -name '{lib}*' 2>/dev/null   # every copy on this machine"]
    if _CONDA_TREE.search(obj + "/"):
        fix.append(f"conda list   # {name} lies in a conda environment: a package there (cudatoolkit, or one of its "
                   "parts) whose files come from two releases; install another build of it (conda install "
                   "cudatoolkit=<other version>) in place of patching files")
    return Hit(message=f"{name} needs {s['symbol']} at version {lib} and the {lib} the loader found does not define "
                       f"it (line {s.get('line')}): that {lib} is another release than the one {name} was built "
                       "with, a second copy found first or a package holding files of two releases",
               fix="\n".join(fix), evidence={**ticket_evidence(s), "object": obj, "library": lib})


def _duplicates_from_facts(f: FactView) -> Iterator[Hit]:
    t = f["torch"]
    libs = t.get("loaded_libraries") or {}
    for name, paths in sorted(libs.items()):
        if len(paths) > 1 and name not in OPENMP_RUNTIMES:
            yield Hit(message=f"{len(paths)} different {name} files are loaded: {', '.join(paths)}",
                      fix="# remove the LD_LIBRARY_PATH/LD_PRELOAD entry or package that brings the extra copy",
                      evidence={f"torch.loaded_libraries.{name}": paths})
    omp = [n for n in OPENMP_RUNTIMES if n in libs]
    if len(omp) > 1:
        yield Hit(message=f"{len(omp)} OpenMP runtimes loaded ({', '.join(omp)}): threads oversubscribe and may deadlock",
                  fix="# keep one OpenMP runtime: drop the LD_PRELOAD of the other, or install torch and MKL from one source",
                  evidence={n: libs[n] for n in omp})
    installs = t.get("installs") or []
    places = sorted({i.get("location") for i in installs})
    if len(places) > 1:
        yield Hit(message="torch is installed in %d places on sys.path: %s" % (len(places), "; ".join(
                      f"{i.get('version')} in {i.get('location')}" for i in installs)),
                  fix="pip uninstall -y torch   # repeat until none is left, then install it once",
                  evidence={"torch.installs": installs})
    conda = t.get("conda_list") or {}
    pip = t.get("pip") or {}
    if "pytorch" in conda and conda.get("torch") and _from_pypi(conda["torch"]):
        # conda list shows pip's installs with the pypi channel: "torch 1.3.1 pypi_0 pypi" beside
        # conda's own "pytorch" package is a second torch in the same site-packages.
        yield Hit(message=f"torch {conda['torch'].get('version')} from pip and pytorch {conda['pytorch'].get('version')} "
                          "from conda are both installed in this environment",
                  fix="pip uninstall -y torch && conda install --force-reinstall pytorch   # or remove conda's: conda remove --force pytorch",
                  evidence={"conda.torch": conda["torch"], "conda.pytorch": conda["pytorch"]})
    elif "pytorch" in conda and "torch" in pip and conda["pytorch"].get("version", "").split("+")[0] != pip["torch"].split("+")[0]:
        yield Hit(message=f"torch {pip['torch']} from pip and pytorch {conda['pytorch'].get('version')} from conda in one environment",
                  fix="# remove one of them (conda remove pytorch, or pip uninstall torch) and reinstall from one source",
                  evidence={"pip.torch": pip["torch"], "conda.pytorch": conda["pytorch"]})
    for what, conda_names, wheel in CUDA_LIBRARY_COPIES:
        ours = [n for n in conda_names if n in conda and not _from_pypi(conda[n])]
        wheels = sorted(n for n in pip if re.fullmatch(wheel, n))
        if ours and wheels:
            c = ours[0]
            yield Hit(message=f"two copies of {what}: {c} {conda[c].get('version')} from conda and "
                              f"{wheels[0]} {pip[wheels[0]]} from pip",
                      fix=f"conda remove {c}   # keep one copy: the pip wheels come with torch (or install torch from conda only)",
                      evidence={f"conda.{c}": conda[c], f"pip.{wheels[0]}": pip[wheels[0]]})


# The same library from conda's channels and from NVIDIA's pip wheels (collect_env lists conda's
# cudatoolkit and nccl; pip's nvidia-* wheels are torch's own since 1.13).
CUDA_LIBRARY_COPIES = (
    ("the CUDA runtime", ("cudatoolkit", "cuda-runtime", "cuda-cudart"), r"nvidia-cuda-runtime-cu\d+"),
    ("NCCL", ("nccl",), r"nvidia-nccl-cu\d+"),
    ("cuDNN", ("cudnn",), r"nvidia-cudnn-cu\d+"),
)


def _from_pypi(entry: Any) -> bool:
    """conda list shows pip's installs too, as build pypi_0 in channel pypi: not a second copy."""
    return entry.get("channel") == "pypi" or str(entry.get("build", "")).startswith("pypi")


# Messages that name the library by their own words, not its file: PaddlePaddle's dynload checks
# ("Cannot load cudnn shared library"), cuDNN 9's status for a sub-library it could not load.
_LIBRARY_OF = {"paddle:dynload-cannot-load-cudnn": "libcudnn", "paddle:dynload-cannot-load-miopen": "libMIOpen",
               "cudnn:CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED": "libcudnn", "nvrtc:builtins-load-failed": "libnvrtc-builtins"}


# ONNX Runtime's CUDA provider library (onnxruntime_providers_cuda.dll / libonnxruntime_providers_cuda.so)
# ships with onnxruntime-gpu; the CUDA runtime, cuBLAS and cuDNN it links do not (knowledge/messages/
# onnxruntime.toml). The majors each release needs: ONNX Runtime's CUDA EP requirements table
# (https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements, read 2026-11-28:
# "Starting with version 1.19, CUDA 12.x becomes the default version when distributing ONNX Runtime GPU
# packages in PyPI"; its CUDA 11 rows as quoted at blog.csdn.net/FL1623863129/article/details/127887083;
# 1.18's PyPI build CUDA 11.8, its CUDA 12 build on a separate index: microsoft/onnxruntime#21684, tianleiwu).
_ORT_TABLE = ("# onnxruntime-gpu's CUDA/cuDNN majors (onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html"
              "#requirements): 1.19 and later from PyPI: CUDA 12.x + cuDNN 9.x; 1.15-1.18 from PyPI: CUDA 11.8 + cuDNN 8.x; "
              "1.10-1.14: CUDA 11.4-11.6 + cuDNN 8.2")
_ORT_VERSION = "python -c \"import onnxruntime as ort; print(ort.__version__, ort.get_device())\"   # Python: the release whose majors the row names"
# a soname whose major is the CUDA's (cudart, cuBLAS: libcublasLt.so.11 is CUDA 11's) or cuDNN's; cuFFT's and
# cuRAND's majors are their own (libcufft.so.10 ships with CUDA 11), so they say nothing of CUDA's
_ORT_MAJOR_OF = {"libcudart": "CUDA", "libcublas": "CUDA", "libcublasLt": "CUDA", "libcudnn": "cuDNN"}


def _onnxruntime_provider_missing(f: FactView, s: dict) -> Hit | None:
    """ONNX Runtime's CUDA provider library that its own loader could not load for a missing dependency:
    Linux names the library ("with error: libcublasLt.so.11: cannot open shared object file"), Windows says
    only LoadLibrary's error 126 (ERROR_MOD_NOT_FOUND: the DLL or one it imports was not found; ORT passes the
    provider DLL's full path, which onnxruntime-gpu ships, so it is one the DLL imports)."""
    wants = first_symptom(f, "onnxruntime:failed-to-create-provider") or {}
    needs = (f" (line {wants.get('line')} names them: cuDNN {wants['cudnn']}.x and CUDA {wants['cuda']}.x)"
             if wants.get("cuda") and wants.get("cudnn") else "")
    if s.get("id") == "onnxruntime:provider-dll-loadlibrary-failed":
        if s.get("provider") != "cuda" or str(s.get("code")) != "126":
            return None
        cuda, cudnn = (wants.get("cuda"), wants.get("cudnn")) if needs else ("*", "*")
        return Hit(message=f"ONNX Runtime's CUDA provider DLL could not be loaded: LoadLibrary's error 126 (ERROR_MOD_NOT_FOUND, "
                           f"\"{s.get('reason') or 'The specified module could not be found.'}\") for {s.get('provider_lib')}, "
                           "which onnxruntime-gpu ships, means a DLL it imports is not on the PATH: the CUDA runtime, cuBLAS "
                           f"or cuDNN of the majors this onnxruntime release was built for{needs} (line {s.get('line')}: "
                           f"\"{told_text(s)}\")",
                   fix=f"where cudart64_{cuda}.dll cublasLt64_{cuda}.dll cudnn64_{cudnn}.dll   # in the cmd window that "
                       "runs the program: each one not found is missing from the PATH\n"
                       f"{_ORT_VERSION}\n{_ORT_TABLE}\n"
                       "# install that CUDA and cuDNN and put their bin folders on the PATH (set PATH=C:\\Program Files\\NVIDIA GPU "
                       "Computing Toolkit\\CUDA\\v12.x\\bin;%PATH%), or install the onnxruntime-gpu release built for the CUDA "
                       "this machine has",
                   evidence={**told_evidence(s), "library": s.get("provider_lib"), "code": s.get("code")})
    if s.get("id") != "onnxruntime:cuda-provider-so-load-failed":
        return None
    lib, version = str(s.get("library") or ""), s.get("version")
    so = f"{lib}.so" + (f".{version}" if version else "")
    major = str(version or "").split(".")[0]
    what = (f"{_ORT_MAJOR_OF[lib]} {major}.x" if major and lib in _ORT_MAJOR_OF else "")
    return Hit(message=f"ONNX Runtime's CUDA provider (libonnxruntime_providers_cuda.so) could not be loaded: {so} is not "
                       f"where the loader looks{': the onnxruntime-gpu release was built for ' + what if what else ''}{needs} "
                       f"(line {s.get('line')}: \"{told_text(s)}\")",
               fix=f"ldd \"$(find / -xdev -name libonnxruntime_providers_cuda.so 2>/dev/null | head -1)\" | grep 'not found'   "
                   "# every library the provider still lacks\n"
                   f"{loader_path_fix(lib, so)}\n{_ORT_VERSION}\n{_ORT_TABLE}\n"
                   "# or install the onnxruntime-gpu release built for the CUDA and cuDNN this machine has",
               evidence={**told_evidence(s), "library": so})


# cuDNN 8 on Windows names the sub-library DLL it could not find (knowledge/messages/libraries.toml):
# cuDNN 9's DLLs have other names (cudnn_ops64_9.dll), so a cuDNN 9 install does not provide it.
_CUDNN_WINDOWS_DLL = re.compile(r"cudnn[a-z_]{0,24}64_(?P<major>[0-9]{1,2})\.dll")


def _cudnn_windows_dll(s: dict, dll: str, major: str) -> Hit:
    return Hit(message=f"cuDNN {major} cannot find its sub-library {dll} (line {s.get('line')}: \"{told_text(s)}\"): the "
                       f"program loads cuDNN {major}, and no folder on PATH holds that release's DLLs (another cuDNN "
                       "major's DLLs have other names and do not stand in for them)",
               fix=(f"where cudnn64_{major}.dll {dll}   # in the cmd window that runs the program: the cuDNN {major} "
                    f"folders on PATH; none: install cuDNN {major}.x for the program's CUDA and put its bin folder on "
                    f"PATH (set PATH=C:\\path\\to\\cudnn\\bin;%PATH%), or the program's build for the cuDNN installed"),
               evidence={**told_evidence(s), "library": dll})


# A CUDA toolkit DLL by its Windows name (<library>64_<version>[_0].dll), as libgpuarray names the one
# it could not load: Windows looks beside the program, in its system folders and on PATH, never under CUDA_PATH.
_CUDA_WINDOWS_DLL = re.compile(r"(?P<dll>(?:cudart|cublasLt|cublas|cufft|curand|cusolver|cusparse|nvrtc)64_\d{2,3}(?:_0)?\.dll)")


def _cuda_windows_dll(s: dict, dll: str) -> Hit:
    return Hit(message=f"{dll} cannot be loaded (line {s.get('line')}: \"{told_text(s)}\"): Windows looks for a DLL beside the "
                       "program, in its system folders and on PATH, never under CUDA_PATH, and none of them holds it: the "
                       "CUDA toolkit's bin folder of the release the program was built for is not on PATH",
               fix=(f"where {dll}   # in the cmd window that runs the program: none found is the cause\n"
                    f"dir \"%CUDA_PATH%\\bin\\{dll.split('64_')[0]}64_*.dll\"   # the installed toolkit's own name for it; "
                    "another version there means the program was built for another CUDA\n"
                    "set PATH=%CUDA_PATH%\\bin;%PATH%   # for this window; the System Properties' Environment Variables "
                    "for every new one"),
               evidence={**told_evidence(s), "library": dll})


# cudarc's two panics (knowledge/messages/libraries.toml cudarc-*): it tried a list of names of its own
CUDARC_PANIC_WORDS = (" lib under the names ", "shared library - searched for library names")


def _cudarc_library(s: dict, lib: str) -> Hit:
    """cudarc found a toolkit library under none of the names it tries: either the library is not where the
    loader looks, or its file has a name this cudarc release does not try (cudarc#246: 0.11.4's list lacked
    CUDA 12.5's nvrtc64_120_0.dll). Which one, the installed file's name says: a hint, not a verdict."""
    name = lib[3:] if lib.startswith("lib") else lib
    return Hit(message=f"cudarc could not load {lib} under any of the names it tried (line {s.get('line')}: \"{told_text(s)}\"): "
                       "the library is not installed where the loader looks (LD_LIBRARY_PATH, or PATH on Windows), or its "
                       "file has a name this cudarc release does not try (cudarc 0.11.4's list lacked CUDA 12.5's "
                       "nvrtc64_120_0.dll): the installed file's name tells which",
               fix=(f"ls /usr/local/cuda*/lib64/{lib}.so* \"${{CONDA_PREFIX:-/nonexistent}}\"/lib/{lib}.so* 2>/dev/null   "
                    f"# Linux: the files installed; cudarc tries {lib}.so\n"
                    f"where {name}64*.dll   # Windows, in the cmd window that runs the program: the DLL's name, to compare "
                    "with the names cudarc tried\n"
                    "cargo update -p cudarc   # a file that is there under a name cudarc does not try: a cudarc release "
                    "whose list has it"),
               evidence={**told_evidence(s), "library": lib}, severity="info")


@rule("SW022", "cuda-runtime-library-missing", "error", "a CUDA or ROCm library the program needs cannot be loaded", impact=9,
      also={"info": "the paste's ls -l shows the library beside the program under another version suffix: the package's "
                    "fault; or cudarc found it under none of its own names, which may lack the installed file's"})
def cuda_runtime_library_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the dynamic loader's "<library>: cannot open shared object file" for
        a library of the CUDA toolkit or its PyPI wheels (libcudart, libcublas, libcudnn and its
        sub-libraries, libcufft, libcurand, libcusolver, libcusparse, libnvrtc, libnccl, ...) or
        of ROCm (libamdhip64, librocblas, libMIOpen, librccl, ...), raised by a program other than
        torch's own import (mmcv, TensorFlow, a CUDA extension, a compiled sample). torch's own
        import failing so is torch-import-failed. The list of libraries is the one PyTorch's CUDA
        and ROCm wheel builds bundle or load (hpcdoctor/knowledge/messages/libraries.toml).
        PaddlePaddle's own words for it (its dynload: "Cannot load cudnn shared library. Cannot
        invoke method cudnnGetVersion", "Failed to find dynamic library: libcudnn.so"), and cuDNN
        9's CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED, are read as the library they name, as is cuDNN
        8's own line on Windows ("Could not locate cudnn_ops_infer64_8.dll. Please make sure it is
        in your library path!", answered with the cmd window's PATH). At build
        time, a linker that finds no link library of the toolkit, cuDNN or NCCL (GNU ld's and gold's
        "cannot find -lcudart", lld's "unable to find library -lcublas", ld64's "library not found
        for -lcudart"; -lcuda, the driver's, is triton-libcuda-not-found's). Torch7's cudnn.torch
        ("'libcudnn (R5) not found in library path.", R1-R3's "'libcudnn.so not found"). ONNX
        Runtime's CUDA provider that did not load: "Failed to load library
        libonnxruntime_providers_cuda.so with error: libcublasLt.so.11: cannot open shared object
        file", and on Windows "LoadLibrary failed with error 126 ... when trying to load
        ...onnxruntime_providers_cuda.dll" (126: ERROR_MOD_NOT_FOUND, a DLL it imports is missing).
        libgpuarray's 'Could not load "nvrtc64_70.dll"', a toolkit DLL by its Windows name,
        answered with the cmd window's PATH. cudarc's panic for a toolkit library ("Unable to find
        nvrtc lib under the names [...]") as info: cudarc tries a list of file names of its own, and
        a release's list can lack the installed file's name (cudarc#246), which only that name tells.

    Why it matters:
        The program was built against a CUDA (or ROCm) runtime that is not where the loader looks:
        the version in the file name (libcudart.so.10.1) is the CUDA the program was compiled for,
        which need not be the CUDA installed (nvcc, nvidia-smi) or torch's. Installing another
        CUDA toolkit does not help when the version differs; the program's build must match.

    How to fix:
        Install the build of the failing package made for the CUDA the environment has (for
        mmcv or a CUDA extension: the wheel for this torch and CUDA, or rebuild it), or put the
        toolkit of the version the file name asks for on LD_LIBRARY_PATH; check with ldd which
        libraries a module still cannot find. Where the paste's ls -l shows the library under a
        longer version (libcudart.so.12.0 for libcudart.so.12) and not under the name asked for,
        the package shipped it without its SONAME link: the finding is info, the fault is the
        package's (its maintainers fix it), and a link of the asked-for name beside the file works
        around it. A link: the unversioned lib<name>.so, which NVIDIA's pip wheels never carry: in a
        conda environment (its linker is <triple>-conda-linux-gnu's ld) the channel's -dev package
        (cuda-cudart-dev, libcublas-dev ...), else the toolkit's lib64 on LIBRARY_PATH. cudnn.torch:
        the libcudnn of the bindings' major on the library path (DYLD_LIBRARY_PATH on macOS) or
        CUDNN_PATH naming it (master, R6, R7); a Jupyter kernel reads neither from .bashrc, only
        from its kernel.json's "env".

    References:
        - https://github.com/pytorch/pytorch/blob/main/.ci/manywheel/build_cuda.sh (the CUDA libraries of torch's wheels)
        - https://anaconda.org/nvidia/cuda-cudart-dev (libcudart.so for a link in a conda environment)
        - https://github.com/ivan-chai/torch-linear-assignment/issues/2 (ld in a conda environment: cannot find -lcudart)
        - https://github.com/soumith/cudnn.torch/blob/f53fc2b365421155c102066db60674fb9b802ec2/ffi.lua (the bindings' library search)
        - https://jupyter-client.readthedocs.io/en/stable/kernels.html#kernel-specs (a kernel's env)
        - https://man7.org/linux/man-pages/man8/ld.so.8.html (the loader's search order)
        - https://github.com/iSEE-Laboratory/LLMDet/issues/32 (mmcv built for CUDA 10.1 on a CUDA 12.1 system)
        - https://github.com/ollama/ollama/issues/602 (libcudart.so.12.0 shipped, libcudart.so.12 looked for)
        - https://github.com/coreutils/coreutils/blob/master/src/ls.c (print_long_format: the listing read)
        - https://github.com/PaddlePaddle/PaddleOCR/issues/300 (Paddle's cuDNN not on LD_LIBRARY_PATH outside its Docker image)
        - https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements (onnxruntime-gpu's CUDA and cuDNN majors)
        - https://learn.microsoft.com/en-us/windows/win32/debug/system-error-codes--0-499- (ERROR_MOD_NOT_FOUND, 126)
        - https://learn.microsoft.com/en-us/windows/win32/dlls/dynamic-link-library-search-order (PATH, not CUDA_PATH)
        - https://github.com/Theano/libgpuarray/issues/562 (the toolkit's bin folder missing from PATH)
    """
    told = [s for s in catalogued(f, "cuda-runtime-library-missing") if not torch_import_frame_before(f, s)]
    for s in told:
        if s.get("family") == "onnxruntime":
            hit = _onnxruntime_provider_missing(f, s)
            if hit is not None:
                yield hit
                return
    told = [s for s in told if s.get("family") != "onnxruntime"]
    framework = _framework_library_missing(f, told)
    if framework is not None:
        yield framework
        return
    # The loader's text on a TensorFlow DsoLoader line ("dlerror: libcudart.so.11.0: cannot open shared
    # object file") is TensorFlow's failure, read above with its own condition: not a second one.
    framework_lines = {s.get("line") for s in f.get("ticket.symptoms") or [] if s.get("family") in ("tensorflow", "jax")}
    told = [s for s in told if s.get("family") not in ("tensorflow", "jax") and s.get("line") not in framework_lines]
    if not told:
        return
    s = told[0]
    if s.get("family") == "linker":
        yield _link_library_missing(f, s, [t for t in f.get("ticket.symptoms") or [] if t.get("family") == "linker"
                                           and "cuda-runtime-library-missing" in (t.get("rules") or [])])
        return
    if s.get("id") in _CUDNN_TORCH_NOT_FOUND:
        yield _cudnn_torch_not_found(f, s)
        return
    lib = str(s.get("library") or _LIBRARY_OF.get(s.get("id")) or s.get("key") or "")
    version = s.get("version")
    dll = _CUDNN_WINDOWS_DLL.search(str(s.get("text", "")))
    if dll is not None:
        yield _cudnn_windows_dll(s, dll.group(0), dll.group("major"))
        return
    if any(words in str(s.get("text", "")) for words in CUDARC_PANIC_WORDS):
        yield _cudarc_library(s, lib)
        return
    dll = _CUDA_WINDOWS_DLL.search(str(s.get("text", "")))
    if dll is not None:
        yield _cuda_windows_dll(s, dll.group("dll"))
        return
    so = f"{lib}.so" + (f".{version}" if version else "")
    shipped = _shipped_under_another_name(f, so)
    if shipped is not None:
        yield Hit(message=f"{so} cannot be loaded (line {s.get('line')}: \"{told_text(s)}\"), but the listing on line "
                          f"{shipped.get('line')} shows {shipped['file']}: the library is there under a longer version "
                          f"name, without the {so} link the program asks for. The package was shipped without it "
                          "(its maintainers' fix), not a CUDA runtime missing from this node",
                  fix=f"find / -xdev -name '{shipped['file']}' 2>/dev/null   # the folder it was shipped in; there, as "
                      f"a stopgap: ln -s {shipped['file']} {so}",
                  evidence={**told_evidence(s), "library": so, "listed": shipped["file"],
                            "listed.line": shipped.get("line")},
                  severity="info")
        return
    if s.get("family") == "nvrtc":
        yield _nvrtc_builtins(s, lib, so)
        return
    if 'Failure finding "' in str(s.get("text", "")):
        yield _pathfinder_not_found(f, s, lib, so)
        return
    rocm = lib.startswith(("libroc", "libhip", "libamd", "libMIOpen", "librccl", "libhsa"))
    built = (f": the program was built for {'ROCm' if rocm else 'CUDA'} {version} and that runtime is not where the "
             "loader looks" if version and lib in ("libcudart", "libamdhip64") else ": it is not where the loader looks")
    where = ("ls /opt/rocm*/lib/" if rocm else "ls /usr/local/cuda*/lib64/ \"$(python -c 'import site; print(site.getsitepackages()[0])')\"/nvidia/*/lib")
    stack = stack_of_ticket(f)
    if stack is not None and not rocm:
        # TensorFlow's import (1.x links the CUDA libraries at load time) or JAX's: their own install
        # tf.sysconfig cannot answer here: it is TensorFlow's own import that fails
        own = ("pip show tensorflow tensorflow-gpu 2>/dev/null | grep -E '^(Name|Version)'   # the release that needs "
               f"{so}\n{TF_CUDA_FIX}" if stack == "tensorflow" else JAX_CUDA_FIX)
        yield Hit(message=f"{so} cannot be loaded (line {s.get('line')}: \"{told_text(s)}\"){built}",
                  fix=f"{where} 2>/dev/null | grep {lib}   # which versions of {lib} this machine has\n{own}",
                  evidence={**told_evidence(s), "library": so})
        return
    found = (f"{where} 2>/dev/null | grep {lib}   # which versions of {lib} this machine has\n" if rocm
             else f"{loader_path_fix(lib, so)}\n")
    program = _LOADER_PROGRAM.search(str(s.get("text", "")))
    if program is not None:
        # ld.so named the executable that failed to start: a program, not a Python extension module
        yield Hit(message=f"{so} cannot be loaded (line {s.get('line')}: \"{told_text(s)}\"){built}",
                  fix=f"{found}ldd {shlex.quote(program.group('program'))} | grep 'not found'   # every library the "
                      "program still cannot find, once the folder is on LD_LIBRARY_PATH",
                  evidence={**told_evidence(s), "library": so, "program": program.group("program")})
        return
    if "Unable to load any of {" in str(s.get("text", "")):
        yield _cudnn9_sublibrary(s, lib, so, found)
        return
    yield Hit(message=f"{so} cannot be loaded (line {s.get('line')}: \"{told_text(s)}\"){built}",
              fix=found +
                  "python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)'   "
                  "# the build the failing package must match\n"
                  "# then ldd on the failing package's own .so files, piped to grep 'not found': every library it still misses",
              evidence={**told_evidence(s), "library": so})


# libcudnn.so.9 prints its own line (libraries.toml cudnn9-unable-to-load-any-of) after it was loaded:
# where it lies, its sub-libraries should too (its RUNPATH is $ORIGIN).
_CUDNN_SHIM_WHERE = ("python -c \"import ctypes; ctypes.CDLL('libcudnn.so.9'); print(*sorted({l.split()[-1] for l in "
                     "open('/proc/self/maps') if 'libcudnn' in l}), sep=chr(10))\"   # the libcudnn.so.9 the loader "
                     "finds: its sub-libraries must lie beside it")


def _cudnn9_sublibrary(s: dict, lib: str, so: str, found: str) -> Hit:
    """cuDNN 9's shim was loaded and could not open one of its sub-libraries: a libcudnn.so.9 without
    its siblings (a partial copy, a system cuDNN of another release) ahead of the full one."""
    return Hit(message=f"cuDNN 9's libcudnn.so.9 was loaded but could not open its sub-library {so} (line {s.get('line')}: "
                       f"\"{told_text(s)}\"): that libcudnn.so.9 has no {lib} of its own release beside it, nor does the "
                       "loader find one (a partial or other-release cuDNN ahead of the complete one)",
               fix=f"{_CUDNN_SHIM_WHERE}\n{found}", evidence={**told_evidence(s), "library": so})


# The conda package that carries each CUDA library's link library (the unversioned lib<name>.so a link
# with -l<name> needs; NVIDIA's pip wheels carry only lib<name>.so.<major>): the nvidia and conda-forge
# channels' "-dev" packages of the CUDA 12 redistributables. Checked on anaconda.org (2026-11-28):
# nvidia/cuda-cudart-dev and conda-forge/cuda-cudart-dev (libcudart.so), anaconda/cuda-cudart-static,
# nvidia/libcublas-dev; and in conda-forge's recipes, each -dev output listing lib/lib<name>.so:
# cuda-cudart-feedstock @ 672c8a48 (cuda-cudart-dev), libcublas-feedstock @ ff9ac4da (libcublas-dev),
# libcufft-feedstock @ 84fe9473 (libcufft-dev), libcurand-feedstock @ 1c493300 (libcurand-dev),
# cuda-nvtx-feedstock @ e38ee57b (cuda-nvtx-dev; 13.x ships libnvtx3interop, not libnvToolsExt). The
# others (cuda-nvrtc-dev, libcusolver-dev, libcusparse-dev, libnvjitlink-dev, cuda-cupti-dev,
# libnvjpeg-dev, libcufile-dev) follow the same naming of the redistributables and were not each
# read. cuDNN and NCCL: conda-forge's cudnn and nccl.
_CONDA_LINK_PACKAGE = (
    (("cudart",), "cuda-cudart-dev"), (("cudart_static", "cudadevrt", "culibos"), "cuda-cudart-static"),
    (("cublas", "cublasLt", "nvblas"), "libcublas-dev"), (("cufft", "cufftw"), "libcufft-dev"),
    (("curand",), "libcurand-dev"), (("cusolver", "cusolverMg"), "libcusolver-dev"), (("cusparse",), "libcusparse-dev"),
    (("nvrtc", "nvrtc-builtins"), "cuda-nvrtc-dev"), (("nvJitLink",), "libnvjitlink-dev"),
    (("nvToolsExt", "nvtx3interop"), "cuda-nvtx-dev"), (("cupti", "nvperf_host", "nvperf_target", "pcsamplingutil"), "cuda-cupti-dev"),
    (("nvjpeg",), "libnvjpeg-dev"), (("cufile", "cufile_rdma"), "libcufile-dev"),
)


def _conda_link_package(name: str) -> tuple:
    """(channel, package) of conda's package with lib<name>.so for a link."""
    if name.startswith("cudnn"):
        return "conda-forge", "cudnn"
    if name == "nccl":
        return "conda-forge", "nccl"
    if name.startswith("npp"):
        return "nvidia", "libnpp-dev"
    return "nvidia", next((pkg for names, pkg in _CONDA_LINK_PACKAGE if name in names), "cuda-libraries-dev")


def _link_library_missing(f: FactView, s: dict, every: list) -> Hit:
    """A linker (GNU ld, gold, lld, ld64) found no link library of a CUDA toolkit, cuDNN or NCCL library:
    the fix is the link library where the build runs: a conda environment's package (its linker is
    conda's, <triple>-conda-linux-gnu's ld, or the paste builds in an environment), else the toolkit's lib64."""
    name = str(s.get("lib") or "cudart")
    linker = str(s.get("linker") or "")
    text = str(s.get("text", ""))
    conda = "conda" in linker or "conda" in text
    link = f"lib{name}.so"
    find = (f"ls \"${{CONDA_PREFIX:?activate the environment that builds}}\"/lib/{link}* \"$CONDA_PREFIX\"/targets/*/lib/{link}* "
            f"2>/dev/null   # the environment's {link}: a versioned file alone ({link}.12) is a runtime, not a link library"
            if conda else
            f"ls \"${{CUDA_HOME:-/usr/local/cuda}}\"/lib64/{link}* 2>/dev/null; ldconfig -p | grep '{link}'   "
            f"# where this machine has {link} (the unversioned name is the one -l{name} needs)")
    if conda:
        channel, package = _conda_link_package(name)
        fix = (f"{find}\nconda list | grep -E '^cuda-(version|nvcc|cudart) '   # the CUDA version of the environment: "
               f"pin the package to it\nconda install -c {channel} {package}   # the package with {link}, the link library; "
               f"for a CUDA 12.4 environment: conda install -c {channel} {package} cuda-version=12.4\n"
               'export LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/lib64${LIBRARY_PATH:+:$LIBRARY_PATH}"   # or link '
               "against the system's CUDA toolkit instead, where the machine has one (gcc passes LIBRARY_PATH to the linker)")
    else:
        fix = (f"{find}\nexport LIBRARY_PATH=\"${{CUDA_HOME:-/usr/local/cuda}}/lib64${{LIBRARY_PATH:+:$LIBRARY_PATH}}\"   "
               "# gcc passes LIBRARY_PATH's folders to the linker (the folder where ls found it, for cuDNN or NCCL "
               "installed elsewhere); then rebuild")
    where = "this conda environment" if conda else "the folders the link searched"
    others = list(dict.fromkeys(f"lib{t.get('lib')}.so" for t in every if t.get("lib") and t.get("lib") != name))
    if others:
        link_all = ", ".join([link] + others)
        fix += f"\n# the same for {', '.join(others)}: the link named {len(others) + 1} CUDA libraries it could not find"
    else:
        link_all = link
    return Hit(message=f"the linker found no {link_all} (line {s.get('line')}: \"{told_text(s)}\"): {where} "
                       f"{'has' if conda else 'hold'} no link library for -l{name}. A CUDA build needs the toolkit's "
                       "unversioned link library; NVIDIA's pip wheels and a runtime-only conda package carry only the "
                       f"versioned {link}.<major>",
               fix=fix, evidence={**told_evidence(s), "library": link, "linker": linker or None})


# Torch7's cudnn.torch: "'libcudnn (R5) not found in library path." (R4-R7), "'libcudnn.so not found" (R1-R3)
_CUDNN_TORCH_NOT_FOUND = frozenset({"cudnn_checks:cudnn-torch-not-found", "cudnn_checks:cudnn-torch-so-not-found"})


def _cudnn_torch_not_found(f: FactView, s: dict) -> Hit:
    """cudnn.torch loaded no libcudnn of its branch's major: that file on the loader's path of the
    process that runs torch, or CUDNN_PATH naming it (R6, R7, master read it). A Jupyter kernel
    (iTorch) is started by the notebook server, not by a login shell: .bashrc's exports never reach it."""
    major = s.get("version")
    so = f"libcudnn.so.{major}" if major else "libcudnn.so"
    lines = [f"ls /usr/local/cuda*/lib64/{so}* /usr/local/lib/{so}* 2>/dev/null; ldconfig -p | grep '{so}'   # where this "
             f"machine has {so}: none means that cuDNN major is not installed",
             "export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}   # the folder ls found "
             f"{so} in, in the shell or job script that runs torch (th, luajit, qlua)"]
    if "/Users/" in str(s.get("text", "")):
        # macOS: dyld searches DYLD_LIBRARY_PATH and its fallback path (~/lib, /usr/local/lib, /usr/lib), never
        # LD_LIBRARY_PATH, for the libcudnn.<n>.dylib the bindings ask for
        lib = f"libcudnn.{major}.dylib" if major else "libcudnn.dylib"
        lines = [f"ls /usr/local/cuda/lib/{lib} /Developer/NVIDIA/CUDA-*/lib/{lib} 2>/dev/null   # where this Mac has {lib}",
                 "export DYLD_LIBRARY_PATH=/usr/local/cuda/lib${DYLD_LIBRARY_PATH:+:$DYLD_LIBRARY_PATH}   # the folder ls "
                 f"found {lib} in: macOS's loader reads DYLD_LIBRARY_PATH, not LD_LIBRARY_PATH"]
        so = lib
    if major and int(major) >= 5:
        lines.append(f"export CUDNN_PATH=/usr/local/cuda/lib64/{so}   # or the file itself: master (R5), R6 and R7 read CUDNN_PATH")
    lines.append("jupyter kernelspec list   # in a notebook (iTorch): the kernel does not read .bashrc; put the export in "
                 "the \"env\" object of that kernel's kernel.json and restart the kernel")
    return Hit(message=f"Torch7's cudnn.torch bindings{' (R' + str(major) + ')' if major else ''} found no {so} "
                       f"(line {s.get('line')}: \"{told_text(s)}\"): that cuDNN is not installed, or its folder is not on "
                       "the library path of the process that ran torch",
               fix="\n".join(lines), evidence={**told_evidence(s), "library": so})


# ld.so's own line names the executable: "<program>: error while loading shared libraries: <lib>: ..."
# (elf/rtld.c via _dl_signal_error); a quoting backtick or prompt before it is not part of the name.
_LOADER_PROGRAM = re.compile(r"(?:^|[\s`'\"])(?P<program>[^\s`'\":]{1,300}): error while loading shared libraries: ")


@rule("SW034", "static-tls-exhausted", "error", "a library cannot be loaded: the static TLS space is used up", impact=7)
def static_tls_exhausted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, glibc's "<library>: cannot allocate memory in static TLS block": a
        library with initial-exec thread-local storage (libgomp, libOpen3D, OpenBLAS on aarch64)
        dlopen()ed after the static TLS space set aside at start-up was used up. Where torch's
        import raised it (torch's bundled libgomp, or the user says `import torch` failed), the
        finding says so: this rule answers it, not torch-import-failed, which would only say the
        consequence.

    Why it matters:
        The library cannot be loaded at all, whatever memory the node has: glibc reserves a fixed
        surplus for libraries loaded later, and on aarch64 (Jetson) it is easily used up.
        Reinstalling torch or the program does not help; loading order does.

    How to fix:
        Load the library at process start, before the others fill the space: name it in
        LD_PRELOAD for the program (glibc places preloaded libraries in the static TLS block).
        In Jupyter, set it in the kernel's environment (kernel.json "env"), then restart the kernel.

    References:
        - https://github.com/bminor/glibc/blob/glibc-2.42/elf/dl-reloc.c (_dl_allocate_static_tls)
        - https://github.com/CMU-cabot/cabot/issues/86 (libOpen3D.so on JetPack 5, fixed with LD_PRELOAD)
        - https://github.com/NVIDIA/DALI/issues/5519 (libgomp preloaded)
        - https://github.com/NVIDIA-AI-IOT/jetbot/issues/507 (torch's and the system's libgomp on a Jetson)
    """
    s = first_symptom(f, "loader:static-tls-exhausted")
    if s is None:
        return
    file = str(s.get("file") or "")
    torch = bool(_TORCH_LIB.search(file)) or "prose:importing-torch" in ticket_symptoms(f) \
        or torch_import_frame_before(f, s)
    run = "python3 -c 'import torch'" if torch else "start the program again"
    if file.startswith("/") and "..." not in file and "\u2026" not in file:
        fix = (f"export LD_PRELOAD={file}${{LD_PRELOAD:+:$LD_PRELOAD}}   # in the shell, launch file or Jupyter "
               f"kernel.json \"env\" that starts the program; then: {run}")
    else:
        name = file.rsplit("/", 1)[-1] or "the library"
        fix = (f"ldconfig -p | grep -F '{name}'   # its full path: export LD_PRELOAD=<that path> before "
               "starting the program")
    yield Hit(message=f"{'import torch fails: ' if torch else ''}{file or 'a library'} cannot be loaded: the static "
                      f"TLS space was used up before it was dlopen()ed (line {s['line']})",
              fix=fix, evidence=ticket_evidence(s))


def _nvrtc_builtins(s: dict, lib: str, so: str) -> Hit:
    """NVRTC's own words for its builtins library (nvrtc.toml): not found, or found but another
    release's (corrupted): the builtins of NVRTC's own version must be first on the loader's path."""
    found = s.get("key") == "builtins-corrupted"
    what = (f"NVRTC found a {so} it cannot use (another CUDA release's copy under that name, or one cut short)"
            if found else f"NVRTC cannot open {so}, the builtins library of its own release")
    return Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"): every kernel compiled at run time "
                       f"fails. The {so} of the CUDA the program was built with must be on the loader's path "
                       "(conda's and pip's CUDA libraries are not, unless their folder is on LD_LIBRARY_PATH)",
               fix=loader_path_fix(lib, so), evidence={**told_evidence(s), "library": so})


# The NVIDIA PyPI wheel that ships each library cuda.pathfinder looks for, read in the wheels' own file lists
# (folded from the x-gpu-libs branch): CUDA 13 wheels put it in nvidia/cu13/lib (nvidia-cuda-nvrtc 13.0.88:
# nvidia/cu13/lib/libnvrtc.so.13; nvidia-cublas 13.1.1.3, nvidia-cufft 12.0.0.61, nvidia-curand 10.4.0.35,
# nvidia-cusolver 12.0.4.66, nvidia-cusparse 12.6.3.3, nvidia-nvjitlink 13.4.92, nvidia-cuda-cupti 13.0.85
# likewise), the CUDA 12 ones in nvidia/<package>/lib (nvidia-cuda-nvrtc-cu12 12.8.93: nvidia/cuda_nvrtc/lib).
_CU13_WHEELS = {"libnvrtc": "nvidia-cuda-nvrtc==13.*", "libcublas": "nvidia-cublas==13.*", "libcublasLt": "nvidia-cublas==13.*",
                "libnvblas": "nvidia-cublas==13.*", "libcufft": "nvidia-cufft", "libcufftw": "nvidia-cufft",
                "libcurand": "nvidia-curand", "libcusolver": "nvidia-cusolver", "libcusolverMg": "nvidia-cusolver",
                "libcusparse": "nvidia-cusparse", "libnvJitLink": "nvidia-nvjitlink==13.*", "libcupti": "nvidia-cuda-cupti==13.*"}
_CU12_WHEELS = {"libnvrtc": "nvidia-cuda-nvrtc-cu12"}


def _pathfinder_not_found(f: FactView, s: dict, lib: str, so: str) -> Hit:
    """cuda.pathfinder's DynamicLibNotFoundError (CuPy 14, cuda.core, numba-cuda): it searched the NVIDIA
    wheels' folders in site-packages itself, so the library's wheel is not installed there; the folders
    it listed under the message (libraries:cuda-pathfinder-searched-folder) say which CUDA's wheels this
    environment takes its libraries from (nvidia/cu13/lib: CUDA 13's)."""
    searched = str(s.get("text", "")).split('Failure finding "', 1)[-1].split('"', 1)[0] or so
    folders = [str(x.get("folder")) for x in ticket_all(f, "libraries:cuda-pathfinder-searched-folder") if x.get("folder")]
    cu13 = any(x.rstrip("/").endswith("nvidia/cu13/lib") for x in folders)
    cu12 = any("/nvidia/" in x and "/cu13/" not in x and x.rstrip("/").endswith("/lib") for x in folders)
    where = f" (it listed {', '.join(folders[:3])}{' ...' if len(folders) > 3 else ''})" if folders else ""
    lines = []
    wheel13, wheel12 = _CU13_WHEELS.get(lib), _CU12_WHEELS.get(lib)
    if wheel12 and (cu12 or not cu13):
        lines.append(f"pip install '{wheel12}'   # CUDA 12's {lib}, into the environment that runs the program")
    if wheel13 and (cu13 or not cu12):
        lines.append(f"pip install '{wheel13}'   # CUDA 13's {lib} (site-packages/nvidia/cu13/lib), into the environment "
                     "that runs the program")
    lines.append(f"python -c \"from cuda.pathfinder import load_nvidia_dynamic_lib as l; print(l('{lib[3:]}').abs_path)\"   "
                 "# cuda.pathfinder's own search, once the library is installed")
    lines.append(loader_path_fix(lib, so).splitlines()[0])
    lines.append(f"ls /usr/local/cuda*/lib64/ 2>/dev/null | grep {lib}   # or a CUDA toolkit that has it: export "
                 "CUDA_HOME=<that toolkit's folder> (cuda.pathfinder searches CUDA_PATH, then CUDA_HOME)")
    return Hit(message=f"cuda.pathfinder found none of {searched} (line {s.get('line')}: \"{told_text(s)}\"){where}: the "
                       f"NVIDIA wheel that ships {lib} is not installed in this environment, and no CUDA toolkit on the "
                       "loader's path, in $CONDA_PREFIX or under CUDA_PATH/CUDA_HOME has it",
               fix="\n".join(lines), evidence={**told_evidence(s), "library": so, "searched_folders": folders or None})


def _shipped_under_another_name(f: FactView, so: str):
    """An ls -l line in the paste showing `so` with a longer version (libcudart.so.12.0 for
    libcudart.so.12), where no listed line shows `so` itself: the file the program wants, shipped
    without the link named for it. None where the listing shows the name asked for, or no listing."""
    listed = ticket_all(f, "libraries:ls-listed-versioned-library")
    if any(x.get("file") == so for x in listed):
        return None
    return next((x for x in listed if str(x.get("file") or "").startswith(so + ".")), None)


def _framework_library_missing(f: FactView, told: list):
    """TensorFlow's or JAX's own words for a CUDA library they cannot load, with their own fix.
    TensorFlow: only where it found the GPU and skipped it ("Cannot dlopen some GPU libraries"): its
    DsoLoader lines and "Could not find cuda drivers" are also what every machine without an NVIDIA
    GPU prints, and a machine where TensorFlow is only imported beside torch. The library is the
    one the DsoLoader line names (the loader's own text on that line is the same failure, read once)."""
    skipped = next((s for s in told if s.get("id") == "tensorflow:cannot-dlopen-gpu-libraries"), None)
    found = None
    if skipped is None:
        # TensorFlow listed the GPU ("Found device 0 with properties"), then its DsoLoader failed on a
        # CUDA library: the skip follows (a paste cut before it says the same)
        found = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "tensorflow:found-device-properties"), None)
        after = [s for s in told if found is not None and s.get("family") == "tensorflow" and s.get("line", 0) > found["line"]
                 and s.get("id") != "tensorflow:could-not-find-cuda-drivers"]
        skipped = after[0] if after else None
    if skipped is not None:
        named = [s for s in told if s.get("family") == "tensorflow" and s.get("id") != "tensorflow:cannot-dlopen-gpu-libraries"
                 and "could-not-find" not in str(s.get("key"))]
        lib = ", ".join(dict.fromkeys(_dso_file(s) for s in named))
        which = f" ({lib} could not be opened, line {named[0].get('line')})" if named else ""
        if skipped.get("id") == "tensorflow:cannot-dlopen-gpu-libraries":
            said = f"line {skipped.get('line')}: \"{told_text(skipped)}\""
        else:
            said = f"the GPU listed on line {found.get('line')}, the library failing after it on line {skipped.get('line')}"
        return Hit(message=f"TensorFlow found the GPU but cannot load the CUDA libraries it was built for{which}, so it "
                           f"registers no GPU and runs on the CPU ({said})",
                   fix=f"{TF_CUDA_CHECK}\n{TF_CUDA_FIX}",
                   evidence={**told_evidence(named[0] if named else skipped), "libraries": lib or None})
    old = _old_dso_loader_failure(f, told)
    if old is not None:
        return old
    jax = next((s for s in told if s.get("family") == "jax"), None)
    if jax is not None:
        return Hit(message=f"JAX's CUDA plugin cannot load {jax.get('library') or 'a CUDA library'} (line {jax.get('line')}: "
                           f"\"{told_text(jax)}\"): JAX falls back to the CPU",
                   fix=JAX_CUDA_FIX, evidence=told_evidence(jax))
    return None


# The DsoLoader's words before TensorFlow 2.1 (knowledge/messages/tensorflow.toml): 0.x to 1.13 "Couldn't
# open CUDA library <file>", 1.14 to 2.0 "Could not dlopen library '<file>'". 0.x to 1.13 print no
# "Cannot dlopen some GPU libraries".
_OLD_DSO_WORDS = ("Couldn't open CUDA library ", "Could not dlopen library '")
_OPENED = ("tensorflow:opened-cuda-library", "tensorflow:opened-dynamic-library")


def _old_dso_loader_failure(f: FactView, told: list):
    """An old TensorFlow's DsoLoader failing on a CUDA library it needs (cuDNN, cuBLAS, cuFFT, cuRAND,
    the runtime) where the same log shows it opening the NVIDIA driver's own library (libcuda.so.1,
    nvcuda.dll): the driver is installed, so this is a GPU machine on which TensorFlow cannot use the
    GPU. Without the driver's library opened it stays silent: TensorFlow GPU builds print the same
    lines on machines without a GPU."""
    failed = [s for s in told if s.get("family") == "tensorflow" and any(w in str(s.get("text", "")) for w in _OLD_DSO_WORDS)]
    if not failed:
        return None
    driver = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _OPENED
                   and str(s.get("library") or "").startswith(("libcuda.", "nvcuda."))), None)
    if driver is None:
        return None
    s = failed[0]
    files = list(dict.fromkeys(_dso_file(x) for x in failed))
    windows = files[0].endswith(".dll")
    stem = files[0].split(".so", 1)[0] if not windows else files[0].split("_", 1)[0].split(".", 1)[0]
    if windows:
        fix = (f"where {files[0]}   # in the Command Prompt that starts python: no answer means no folder on PATH holds it\n"
               "pip show tensorflow tensorflow-gpu   # the release: the CUDA and cuDNN versions it was built for are in "
               "the tested build configurations (tensorflow.org/install/source_windows)")
    else:
        fix = (f"ldconfig -p | grep {stem}; echo \"$LD_LIBRARY_PATH\"   # the copies of {stem} the loader can find, and "
               "the path TensorFlow searched\n"
               f"find / -xdev -name '{stem}.so*' 2>/dev/null   # where {stem} is installed, if anywhere (none: install the "
               "version this TensorFlow was built for)\n"
               f"d=$(find / -xdev -name '{stem}.so*' 2>/dev/null | head -1) && [ -n \"$d\" ] && "
               "export LD_LIBRARY_PATH=\"$(dirname \"$d\")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\"   # its folder on the "
               "loader's path (nothing found: nothing set), in the shell or job script that starts python\n"
               "pip show tensorflow tensorflow-gpu 2>/dev/null | grep -E '^(Name|Version)'   # the release: the CUDA and "
               "cuDNN versions it was built for are in the tested build configurations (tensorflow.org/install/source)")
    return Hit(message=f"TensorFlow cannot open {', '.join(files)} (line {s.get('line')}: \"{told_text(s)}\"), although it "
                       f"opened the NVIDIA driver's {driver.get('library')} (line {driver.get('line')}): the library is not "
                       "installed, or not on the loader's search path"
                       + (" (PATH on Windows)" if windows else " (LD_LIBRARY_PATH, ldconfig)")
                       + ", so TensorFlow cannot use the GPU for what needs it",
               fix=fix, evidence={**told_evidence(s), "libraries": ", ".join(files), "driver_library": driver.get("library")})


def _dso_file(s: dict) -> str:
    """The file a DsoLoader line names: libcudnn.so.8 on Linux, cudnn64_8.dll on Windows."""
    key, version = str(s.get("key")), s.get("version")
    if key.startswith("lib"):
        return f"{key}.so" + (f".{version}" if version else "")
    return f"{key}_{version}.dll" if version else f"{key}.dll"


_CUDNN_FIX = ("python -c 'import torch; print(torch.__version__, torch.backends.cudnn.version())'   # the cuDNN torch loads\n"
              "ldconfig -p | grep libcudnn; echo \"$LD_LIBRARY_PATH\"   # the libcudnn copies the loader can find")


# The frameworks' own cuDNN checks (knowledge/messages/xla.toml, jax.toml): cuDNN's version is this rule's
# in every framework; the other CUDA libraries are cuda-library-version-mismatch's (rules/tf_jax.py).
_FRAMEWORK_CUDNN = ("xla:cudnn-version-mismatch", "jax:outdated-cudnn", "jax:found-cudnn-older-than-built",
                    "jax:cudnn-9-10-0-backward-compatibility", "jax:cudnn-multi-gpu-matmul-issue")


def cudnn_number(n: object) -> str:
    """cuDNN's CUDNN_VERSION as a release: major*1000+minor*100+patch up to 8.x (8907 = 8.9.7),
    major*10000+minor*100+patch from 9 (91000 = 9.10.0); anything else as given."""
    text = str(n or "")
    if not text.isdigit():
        return text
    v = int(text)
    if v >= 90000:
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    if 1000 <= v < 9000:
        return f"{v // 1000}.{v // 100 % 10}.{v % 100}"
    return text


def _release(text: str) -> tuple:
    return tuple(int(p) for p in str(text).split(".") if p.isdigit())


def _framework_cudnn(f: FactView) -> Iterator[Hit]:
    told = [s for s in catalogued(f, "cudnn-version-mismatch") if s.get("id") in _FRAMEWORK_CUDNN]
    stack = stack_of_ticket(f)
    if told:
        s = told[0]
        found, built, minimum = s.get("found"), s.get("compiled") or s.get("built"), s.get("minimum")
        versions = ((f": cuDNN {cudnn_number(found)}" + (f" ({found})" if cudnn_number(found) != str(found) else "") + " loaded")
                    if found else "")
        if found and built:
            versions += f", built against {cudnn_number(built)}" + (f" ({built})" if cudnn_number(built) != str(built) else "")
        if found and minimum:
            versions += f", the minimum it supports {minimum}"
        if s.get("family") == "jax" or stack == "jax":
            who, fix = "JAX", JAX_CUDA_FIX
        elif stack == "tensorflow":
            who, fix = "TensorFlow", f"{TF_CUDA_CHECK}\n{TF_CUDA_FIX}"
        else:
            who, fix = "the framework (TensorFlow or jaxlib)", f"{JAX_CUDA_FIX}\n# TensorFlow instead: {TF_CUDA_FIX}"
        if s.get("id") == "jax:cudnn-9-10-0-backward-compatibility":
            said = "loaded cuDNN 9.10.0, whose binary compatibility is broken, and refuses it"
        elif s.get("id") == "jax:cudnn-multi-gpu-matmul-issue":
            said = (f"refuses cuDNN {cudnn_number(s.get('found'))} beside cuBLASLt 12.9+ on several GPUs "
                    "(wrong matmul results before cuDNN 9.10.1)")
        else:
            said = f"loaded a cuDNN older than it supports{versions}"
        yield Hit(message=f"{who} {said} (line {s.get('line')}: \"{told_text(s)}\"): an older copy shadows the one its "
                          "install brought, so cuDNN cannot be used",
                  fix=fix, evidence=told_evidence(s))
        return
    yield from _dnn_not_found_with_versions(f)


def _dnn_not_found_with_versions(f: FactView) -> Iterator[Hit]:
    """TensorFlow's "DNN library is not found" with the TensorFlow and cuDNN versions stated in the ticket."""
    symptoms = f.get("ticket.symptoms") or []
    dnn = next((s for s in symptoms if s.get("id") == "xla:dnn-library-not-found"), None)
    tf = next((s for s in symptoms if s.get("id") == "prose:tensorflow-version-said"), None)
    said = next((s for s in symptoms if s.get("id") == "prose:cudnn-version-said"), None)
    if dnn is None or tf is None or said is None:
        return
    version = str(tf.get("tensorflow") or "")
    build = tf_tested_build(version)
    if build is None:
        return
    want, have = _release(build["cudnn"]), _release(str(said.get("cudnn")))
    evidence = told_evidence(dnn)
    evidence.update({"tensorflow.version": version, "tensorflow.tested_cudnn": build["cudnn"],
                     "tensorflow.tested_cuda": build["cuda"], "cudnn.said": said.get("cudnn")})
    tested = (f"TensorFlow {build['version']} was built and tested with cuDNN {build['cudnn']} and CUDA {build['cuda']} "
              "(tensorflow.org/install/source#gpu)")
    fix = (f"{TF_CUDA_CHECK}\n"
           "ldconfig -p | grep libcudnn; echo \"$LD_LIBRARY_PATH\"   # every libcudnn the loader can find, first on the path first\n"
           f"# put the cuDNN {build['cudnn']} library first: export LD_LIBRARY_PATH=<its lib folder>:$LD_LIBRARY_PATH, "
           "or install TensorFlow's own tested pair (conda install -c conda-forge cudatoolkit=" + build["cuda"] +
           " cudnn=" + build["cudnn"] + ")")
    if have and (have[0] != want[0] or have[:2] < want[:2]):
        yield Hit(message=f"{tested}; the cuDNN {said.get('cudnn')} stated on line {said.get('line')} is "
                          f"{'another major' if have[0] != want[0] else 'an older minor'}, so TensorFlow cannot "
                          f"use it: \"DNN library is not found\" (line {dnn.get('line')})",
                  fix=fix, evidence=evidence)
        return
    yield Hit(message=f"TensorFlow found no usable cuDNN (line {dnn.get('line')}: \"{told_text(dnn)}\") although "
                      f"{tested} and the cuDNN {said.get('cudnn')} stated on line {said.get('line')} fits it: "
                      "TensorFlow loads another libcudnn than that one (an older copy first on the library path), or none",
              severity="warning", fix=fix, evidence=evidence)


# PaddlePaddle's own cuDNN check (knowledge/messages/paddle.toml): logged only where the cuDNN loaded is older
# than the build's; a retelling with equal versions states no mismatch, so the two numbers are compared here.
_PADDLE_VERSIONS = ("paddle:cudnn-older-than-built", "paddle:cuda-and-cudnn-major-older")


def paddle_release(text: object) -> tuple:
    """A version as Paddle printed it ("8.4", "7  .5", "8"): 2.x builds against cuDNN 9 printed
    CUDNN_VERSION / 100 as "90.1" for 9.1 and "91.0" for 9.10 (device_context.cc's / 10 and % 10)."""
    parts = [p for p in "".join(str(text or "").split()).split(".") if p.isdigit()]
    if not parts:
        return ()
    if len(parts) == 2 and int(parts[0]) >= 90:
        n = int(parts[0]) * 10 + int(parts[1])
        return (n // 100, n % 100)
    return tuple(int(p) for p in parts)


def _paddle_cudnn_older(s: dict):
    found, built = paddle_release(s.get("found")), paddle_release(s.get("compiled"))
    if not found or not built or found >= built[:len(found)]:
        return None
    said = ".".join(map(str, found)), ".".join(map(str, built))
    other = "another major" if found[0] != built[0] else "an older minor"
    return Hit(message=f"PaddlePaddle was built with cuDNN {said[1]} and loaded cuDNN {said[0]} ({other}; line "
                       f"{s.get('line')}: \"{told_text(s)}\"): an older libcudnn is found first (a conda or system "
                       "cuDNN, an old copy on LD_LIBRARY_PATH or PATH), and cuDNN calls can fail (CUDNN_STATUS_BAD_PARAM, "
                       "wrong results)",
               fix=(f"python -c 'import paddle; print(paddle.version.cuda(), paddle.version.cudnn())'   # the build's CUDA and cuDNN ({said[1]})\n"
                    "ldconfig -p | grep libcudnn; echo \"$LD_LIBRARY_PATH\"   # every libcudnn the loader can find, first on the path first\n"
                    f"# put a cuDNN {built[0]}.x no older than {said[1]} first on LD_LIBRARY_PATH (PATH on Windows), or install "
                    f"the Paddle wheel built for the cuDNN you have"),
               evidence={**told_evidence(s), "cudnn.built": said[1], "cudnn.loaded": said[0]})


@rule("SW044", "cudnn-version-mismatch", "error", "the cuDNN loaded is not a version the framework supports", impact=8,
      also={"warning": "TensorFlow found no DNN library while the cuDNN the ticket names fits its tested configuration: another libcudnn is loaded"})
def cudnn_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a framework's own refusal of the cuDNN it loaded: TensorFlow's and jaxlib's
        stream executor ("Loaded runtime CuDNN library: X but source was compiled with: Y"), JAX's
        CUDA plugin ("Outdated cuDNN installation found" with the version JAX was built against,
        its minimum and the installed one, decoded: 8907 is 8.9.7, 91000 is 9.10.0; jax 0.4.14 to
        0.4.25's "Found cuDNN version X, but JAX was built against version Y"; its refusal of cuDNN
        9.10.0 and of cuDNN < 9.10.1 beside cuBLASLt 12.9 on several GPUs), Torch7's cudnn.torch
        bindings ("These bindings are for CUDNN 5.x ..., while the loaded CuDNN is version: N"), Caffe2's
        ("cuDNN compiled (6021) and runtime (7003) versions mismatch"), and
        torch's "cuDNN version N is not compatible with devices with SM < 7.5", PaddlePaddle's "The installed
        Paddle is compiled with CUDNN 8.4, but CUDNN version in your machine is 8.2" (and its Linux
        refusal "compiled with CUDA12/cuDNN9,but CUDA/cuDNN version in your machine is ..."), fired only
        where the loaded version is the older (a retelling with equal versions is no finding). And TensorFlow's "DNN
        library is not found" where the paste also states the TensorFlow and cuDNN versions: compared
        with TensorFlow's tested build configurations (knowledge/tensorflow_gpu_builds.toml), a cuDNN
        of another major or an older minor is the cause; a matching one means TensorFlow loads another
        libcudnn than the one named (a warning). The division: cuDNN's version is this rule's in every
        framework; the other CUDA libraries a framework checks (the CUDA runtime, cuBLAS, cuFFT,
        cuSPARSE, cuPTI) are cuda-library-version-mismatch's, and torch's "cuDNN version
        incompatibility" is duplicate-libraries' (a second libcudnn shadowing torch's own). "DNN library
        is not found" alone names no version and is no finding: a bad input shape raises it too.

    Why it matters:
        cuDNN's API and kernels change between major versions, and a framework needs a cuDNN of its
        build's major and no older minor: cuDNN cannot be initialised, JAX falls back to the CPU or
        fails, TensorFlow's first convolution fails. cuDNN 9.11 dropped the GPUs below compute
        capability 7.5. The library loaded is usually not the one the framework's install brought: an
        older copy on LD_LIBRARY_PATH, a system or conda cuDNN, torch's pinned nvidia-cudnn wheel.

    How to fix:
        JAX: unset LD_LIBRARY_PATH and reinstall with pip install -U "jax[cuda12]", which brings the
        nvidia-cudnn wheel it was built for. TensorFlow 2.14+: pip install -U "tensorflow[and-cuda]";
        older TensorFlow: put the cuDNN of its tested configuration first on LD_LIBRARY_PATH. Torch7:
        the bindings' branch for the loaded cuDNN's major; torch on an SM < 7.5 GPU: a torch build
        whose bundled cuDNN still supports it.

    References:
        - https://github.com/jax-ml/jax/blob/cec06d116c05f0d52adfceee3d3b730fdbcb0ce5/jax_plugins/cuda/__init__.py (_check_cuda_versions)
        - https://www.tensorflow.org/install/source#gpu (tested build configurations)
        - https://github.com/soumith/cudnn.torch/blob/e85ed2299c3f48431117a325cc50ca22d767e70e/ffi.lua (the version check)
        - https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix
        - https://github.com/rgommers/pixi-dev-scipystack/issues/1 (JAX: outdated cuDNN 8907 under a 9100 minimum)
        - https://github.com/apapiu/guided-diffusion-keras/issues/8 (DNN library is not found: TensorFlow pointed at another cuDNN)
        - https://github.com/soumith/cudnn.torch/issues/359 (an NVIDIA maintainer: the R6 branch of the bindings for cuDNN 6)
    """
    framework = next(_framework_cudnn(f), None)
    if framework is not None:
        yield framework
        return
    for s in catalogued(f, "cudnn-version-mismatch"):
        if s.get("id") in _FRAMEWORK_CUDNN:
            continue
        if s.get("id") in _PADDLE_VERSIONS:
            hit = _paddle_cudnn_older(s)
            if hit is None:
                continue
            yield hit
            return
        if s.get("family") in ("cudnn", "paddle"):
            # cuDNN's own status (VERSION_MISMATCH, 9's SUBLIBRARY_VERSION_MISMATCH) or Paddle's missing
            # cuDNN symbol: two cuDNN installs mixed, or a cuDNN of another version than the build's
            what = ("PaddlePaddle's build calls a cuDNN function the libcudnn loaded lacks"
                    if s.get("family") == "paddle" else "cuDNN's libraries loaded are of different versions")
            yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"): a libcudnn of another version than "
                              "the one the program was built with (or two cuDNN installs mixed) is loaded",
                      fix="ldconfig -p | grep libcudnn; echo \"$LD_LIBRARY_PATH\"   # the libcudnn copies the loader can "
                          "find: put the cuDNN the program was built for first on LD_LIBRARY_PATH, remove the other",
                      evidence=told_evidence(s))
            return
        if s.get("id") in ("cudnn_checks:cudnn-torch-bindings-version", "cudnn_checks:cudnn-torch-bindings-minimum"):
            yield _cudnn_torch_bindings(s)
            return
        if s.get("id") == "cudnn_checks:caffe2-compiled-runtime-mismatch":
            yield _caffe2_cudnn(s)
            return
        yield Hit(message=f"torch loaded cuDNN {s.get('found')} (line {s.get('line')}: \"{told_text(s)}\"), which does not "
                          "support this GPU (compute capability below 7.5)",
                  fix=f"{_CUDNN_FIX}\n# install a torch whose bundled cuDNN supports SM < 7.5: "
                      "https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix",
                  evidence=told_evidence(s))
        return


def _caffe2_cudnn(s: dict) -> Hit:
    """Caffe2's CheckCuDNNVersions refused the libcudnn loaded: another cuDNN than the build's comes first."""
    built, loaded = cudnn_number(s.get("compiled")), cudnn_number(s.get("runtime"))
    return Hit(message=f"Caffe2 was compiled with cuDNN {built} and the libcudnn loaded at run time is {loaded} (line "
                       f"{s.get('line')}: \"{told_text(s)}\"): another cuDNN install comes first on the loader's path",
               fix=(f"ldconfig -p | grep libcudnn; echo \"$LD_LIBRARY_PATH\"   # the libcudnn copies the loader can find: "
                    f"put the folder of cuDNN {built} first on LD_LIBRARY_PATH, or remove the other\n"
                    f"# or rebuild Caffe2 against cuDNN {loaded}, the one installed"),
               evidence={**told_evidence(s), "cudnn.compiled": built, "cudnn.runtime": loaded})


def _cudnn_torch_bindings(s: dict) -> Hit:
    """Torch7's cudnn.torch refused the libcudnn it loaded: master's R5 bindings take 5.x only ("CUDNN
    5.x (5005 <= ...)"), each release branch R2-R7 a minimum ("version 6002 or above"). The fix is the
    bindings' branch of the loaded cuDNN's major, or a cuDNN of the bindings' major on CUDNN_PATH."""
    found = str(s.get("found") or "")
    wanted = str(s.get("wanted") or "")
    minimum = s.get("id") == "cudnn_checks:cudnn-torch-bindings-minimum"
    # cuDNN's version number: major*1000 + minor*100 + patch (4007 is 4.0.7); R2's bindings check 20 (cuDNN 2)
    major = found[0] if len(found) == 4 else ""
    want_major = (wanted[0] if len(wanted) == 4 else wanted[:1]) if minimum else "5"
    what = f"version {wanted} or above" if minimum else f"cuDNN {wanted}"
    branch = (f"git clone -b R{major} https://github.com/soumith/cudnn.torch && cd cudnn.torch && luarocks make "
              f"cudnn-scm-1.rockspec   # the bindings' branch of the loaded cuDNN's major (R{major} for cuDNN {major})"
              if major in ("4", "5", "6", "7") else
              "git clone -b R7 https://github.com/soumith/cudnn.torch && cd cudnn.torch && luarocks make cudnn-scm-1.rockspec   "
              "# the bindings' branch of the loaded cuDNN's major (R6 for cuDNN 6, R7 for 7)")
    return Hit(message=f"cudnn.torch's bindings are for {what}, and the libcudnn loaded is version {found} "
                       f"(line {s.get('line')}): the bindings cannot drive another cuDNN major",
               fix=("ldconfig -p | grep libcudnn   # which cuDNN versions the loader can find\n" + branch + "\n"
                    f"export CUDNN_PATH=/usr/local/cuda/lib64/libcudnn.so.{want_major}   # or keep these bindings and point "
                    f"them at a cuDNN {want_major} library (R6, R7 and master read CUDNN_PATH; R4, R5: its folder first on "
                    "LD_LIBRARY_PATH)"),
               evidence=told_evidence(s))


@rule("SW041", "torch-build-broken", "warning", "a CUDA build of torch built without cuDNN (a local build)", impact=6)
def torch_build_broken(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node (--deep, where torch is imported), a CUDA build of torch whose
        torch.backends.cudnn.version() is None: torch's cuDNN module (torch._C._cudnn) is absent,
        which happens only when torch was compiled without cuDNN (USE_CUDNN off, or no cuDNN
        found when a local build was configured). PyTorch's own CUDA wheels always carry it.

    Why it matters:
        A source build configured without cuDNN imports and reports CUDA as available, but every
        layer PyTorch would run through cuDNN (convolutions, RNNs, batch norm) falls back to
        torch's own slower kernels or fails where a model asks for cuDNN; reporters of crashes in
        model initialisation found their custom build lacked it.

    How to fix:
        Install PyTorch's CUDA wheel for this node's driver instead of the local build, or rebuild
        with cuDNN found (CUDNN_ROOT or CUDNN_INCLUDE_DIR and CUDNN_LIB_DIR at configure time) and
        check torch.backends.cudnn.version() afterwards.

    References:
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/backends/cudnn/__init__.py (_cudnn None without cuDNN)
        - https://github.com/pytorch/pytorch#from-source (building from source, cuDNN)
        - https://github.com/stefanknegt/Probabilistic-Unet-Pytorch/issues/2
    """
    t = f["torch"]
    if not isinstance(t, dict) or t.get("build") != "cuda" or t.get("depth") != "deep" or "cudnn" not in t:
        return   # only an imported torch says what it was compiled with
    if t.get("cudnn") is None and "cudnn" not in (t.get("errors") or {}):
        yield Hit(message=f"torch {t.get('version')} is a CUDA build (CUDA {t.get('cuda')}) compiled without cuDNN: "
                          "torch.backends.cudnn.version() is None, so convolutions and RNNs cannot use cuDNN",
                  fix=("python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), "
                       "torch.__file__)'   # None: built without cuDNN\n"
                       "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128   "
                       "# PyTorch's CUDA wheel, which carries cuDNN, in place of the local build (a variant this driver supports)"),
                  evidence={"torch.version": t.get("version"), "torch.cuda": t.get("cuda"), "torch.cudnn": None})
