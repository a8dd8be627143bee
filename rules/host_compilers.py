"""The host compiler nvcc hands the C++ side of a CUDA build to: one its CUDA release does not accept
(crt/host_config.h's #error lines, knowledge/messages/host_config.toml; the limits per release,
knowledge/cuda_host_compilers.toml)."""

from __future__ import annotations

import re
from typing import Iterator, List, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "nvcc-host-gcc-unsupported"
# The toolkit's own folder in the header's path (/usr/local/cuda-9.0/include/crt/host_config.h).
# Module trees spell it /opt/apps/cuda/12.4/bin/nvcc (apex#1833, llm-awq#220).
_CUDA_IN_PATH = re.compile(r"cuda[-/](\d{1,2}\.\d{1,2})/")
# torch's cpp_extension refuses a compiler older than its table's floor for the CUDA it builds with
# (torch.toml cpp-extension-host-compiler-too-old), a RuntimeError before nvcc runs; the floor in parentheses.
_TORCH_TOO_OLD = "torch:cpp-extension-host-compiler-too-old"
_TORCH_FLOOR = re.compile(r"minimum required version by CUDA [\d.]{1,8} \(([\d.]{1,12})\)")
_RISK = ("# last resort, at your own risk (host_config.h's words: it \"may cause compilation failure or incorrect run "
         "time execution\"): nvcc -allow-unsupported-compiler ...")


def _cmake_chose(f: FactView) -> Optional[dict]:
    """CMake's line naming the CUDA release it chose (cmake_cuda.toml), the last one pasted: a
    configure run again after a change prints the one that counts last."""
    lines = [s for s in f.get("ticket.symptoms") or []
             if s.get("id") in ("cmake_cuda:cuda-compiler-identification", "cmake_cuda:found-cuda-version") and s.get("version")]
    return lines[-1] if lines else None


def _releases() -> List[dict]:
    return knowledge.load("cuda_host_compilers")["release"]


def _first_accepting(key: str, wanted: int) -> Optional[dict]:
    """The first release of the table whose limit admits ``wanted`` (gcc_max >= wanted, clang_below > wanted)."""
    for r in _releases():
        if (r[key] >= wanted if key == "gcc_max" else r[key] > wanted):
            return r
    return None


def _gcc_limit(where) -> str:
    """The newest gcc the release in the header's or nvcc's path accepts, as the table says."""
    row = next((r for r in _releases() if where and r["cuda"] == where.group(1)), None)
    return (f"CUDA {row['cuda']} accepts gcc {row['gcc_max']} at the newest" if row else
            "the newest gcc per release: knowledge/cuda_host_compilers.toml, or the CUDA installation guide")


def _newer_release(key: str, limit: int, bound: str) -> str:
    """What the table says of the releases that accept the next compiler major."""
    wanted = limit + 1 if key == "gcc_max" else limit
    r = _first_accepting(key, wanted)
    if r is None:
        return f"no CUDA release in hpcdoctor's table (to {_releases()[-1]['cuda']}) accepts {bound} {wanted}"
    first = _releases()[0]
    if r is first:
        return f"CUDA {r['cuda']} and newer accept {bound} {wanted} (the table starts at {first['cuda']})"
    return f"CUDA {r['cuda']} is the first release to accept {bound} {wanted} ({r['source'].split(',')[0]})"


@rule("SW058", SYMBOL, "error", "nvcc refuses the host compiler: the C++ compiler is not one its CUDA release accepts",
      also={"warning": "nvcc and the gcc on PATH are a pair its CUDA release refuses (live)"},
      impact=6)
def nvcc_host_gcc_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, the version checks of CUDA's crt/host_config.h stopping a compile:
        "#error -- unsupported GNU version! gcc versions later than 12 are not supported!", "--
        unsupported clang version! clang version must be less than 13 and greater than 3.2", and
        their Visual Studio, ICC, ICX, xlC, pgc++, Grace clang and macOS siblings (and the CUDA
        5-6.5 wording "gcc 4.9 and up are not supported!"); or nvcc's own refusals: "nvcc fatal :
        The version ('90000') of the host compiler ('Apple clang') is not supported", "Unsupported
        NVHPC compiler found. nvc++ is the only NVHPC compiler that is supported." (CC=nvc from an
        NVHPC environment, which torch's cpp_extension passes as -ccbin), "Unsupported host
        compiler '...'" (knowledge/messages/host_config.toml, every #error of CUDA 11.7 to 13.5). Live (warning):
        nvcc on PATH and the gcc on PATH that it would call are a pair its release refuses
        (knowledge/cuda_host_compilers.toml), unless NVCC_CCBIN or -ccbin in NVCC_PREPEND_FLAGS /
        NVCC_APPEND_FLAGS names another host compiler. torch's cpp_extension's own check, which stops a
        build before nvcc runs: "The current installed version of g++ (4.8.5) is less than the minimum
        required version by CUDA 11.8 (6.0.0)" (its "greater than the maximum" is a warning only, and
        nvcc's own check answers where it then refuses).

    Why it matters:
        nvcc compiles the host half of every .cu file with a C++ compiler (gcc, clang, cl.exe),
        and each CUDA release accepts only the compilers it was tested with: a newer distribution
        gcc (or an older CUDA picked up first on PATH, or by CMake) stops every CUDA build.

    How to fix:
        Run nvcc with a host compiler its release accepts (-ccbin, CMake's
        CMAKE_CUDA_HOST_COMPILER, a module or conda gcc of that version), or build with a newer
        CUDA toolkit that accepts the installed gcc (check which nvcc the build actually ran).
        nvcc's -allow-unsupported-compiler only skips the check, at the user's own risk.

    References:
        - https://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html#host-compiler-support-policy
        - https://docs.nvidia.com/cuda/cuda-compiler-driver-nvcc/index.html#compiler-bindir-directory-ccbin
        - https://cmake.org/cmake/help/latest/variable/CMAKE_CUDA_HOST_COMPILER.html
        - https://pypi.org/project/nvidia-cuda-crt/ (crt/host_config.h, CUDA 13; CUDA 11.7-12.9: nvidia-cuda-nvcc-cu11/-cu12)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        if not f.get("ticket.symptoms"):
            yield from _live(f)
        return
    s = told[0]
    who = "nvcc's host compiler check"
    # a title retells the message; the compiler's own line names the header's path, and so the toolkit
    same = [t for t in f.get("ticket.symptoms") or [] if t.get("id") == s.get("id")]
    s = next((t for t in same if _CUDA_IN_PATH.search(str(t.get("text", "")))), s)
    where = _CUDA_IN_PATH.search(str(s.get("text", "")))
    chosen = _cmake_chose(f)
    if where:
        ran = f"the CUDA {where.group(1)} toolkit's nvcc"
    elif chosen:
        ran = (f"the nvcc CMake chose (CUDA {chosen['version']}, line {chosen.get('line')}: "
               f"\"{told_text(chosen)}\")")
    else:
        ran = "the nvcc that ran"
    check = ("nvcc --version; which -a nvcc; ls -d /usr/local/cuda*   # which CUDA the build ran (an older one first on "
             "PATH, or the one CMake found) and which others are installed")
    if s.get("gcc_max"):
        limit = int(s["gcc_max"])
        about = (f"{ran} accepts gcc {limit} at the newest and the host gcc is newer "
                 f"(line {s.get('line')}: \"{told_text(s)}\"); {_newer_release('gcc_max', limit, 'gcc')}")
        fix = (f"{check}\n"
               f"gcc --version; ls /usr/bin/g++-* 2>/dev/null; module avail gcc 2>&1 | head   # a gcc {limit} or older here\n"
               f"nvcc -ccbin /usr/bin/g++-{limit} ...   # plain nvcc (nvcc 13.5 also reads NVCC_CCBIN=/usr/bin/g++-{limit})\n"
               f"cmake -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-{limit} ..   # CMake; with a module: module load gcc/{limit} "
               f"and pass its g++; conda: conda install -c conda-forge gxx={limit}\n"
               "cmake -DCMAKE_CUDA_COMPILER=/usr/local/cuda-X.Y/bin/nvcc ..   # or a newer installed CUDA that accepts this "
               "gcc (plain builds: export PATH=/usr/local/cuda-X.Y/bin:$PATH CUDA_HOME=/usr/local/cuda-X.Y)\n"
               f"{_RISK}")
    elif s.get("id") == "host_config:gcc-header-rejected-in-cuda-build":
        gcc = int(s["gcc"])
        first = _first_accepting("gcc_max", gcc)
        since = f"CUDA {first['cuda']}" if first else "no CUDA release in hpcdoctor's table"
        who = "the host compiler"
        about = (f"gcc {gcc}'s own C++ header failed inside the CUDA build (line {s.get('line')}: \"{told_text(s)}\"): "
                 f"{ran} is older than this gcc ({since} is the first to accept gcc {gcc}), its version check bypassed, "
                 "and its front end rewrote the header into code gcc rejects")
        fix = (f"{check}\n"
               f"ls /usr/bin/g++-* 2>/dev/null; module avail gcc 2>&1 | head   # a gcc {gcc - 1} or older for this nvcc\n"
               f"cmake -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-{gcc - 1} ..   # CMake; plain nvcc: -ccbin /usr/bin/g++-{gcc - 1}\n"
               f"export NVCC_WRAPPER_DEFAULT_COMPILER=/usr/bin/g++-{gcc - 1}   # Kokkos builds: the host compiler its "
               "nvcc_wrapper hands nvcc\n"
               f"cmake -DCMAKE_CUDA_COMPILER=/usr/local/cuda-X.Y/bin/nvcc ..   # or a CUDA that accepts gcc {gcc} "
               f"({since} or newer)")
    elif s.get("clang_below"):
        limit = int(s["clang_below"])
        about = (f"{ran} accepts clang below {limit} and the host clang is {limit} or newer "
                 f"(line {s.get('line')}: \"{told_text(s)}\"); {_newer_release('clang_below', limit, 'clang')}")
        fix = (f"{check}\n"
               f"clang --version; ls /usr/bin/clang++-* 2>/dev/null   # a clang {limit - 1} or older here\n"
               f"nvcc -ccbin /usr/bin/clang++-{limit - 1} ...   # or -ccbin g++ (a gcc this CUDA accepts)\n"
               f"cmake -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/clang++-{limit - 1} ..\n"
               f"{_RISK}")
    elif s.get("gcc_refused"):
        # CUDA 4 to 6.5's header ("gcc 4.5 and up are not supported!"): nvcc of those releases has no
        # -allow-unsupported-compiler (CUDA 11's), so only another gcc or another CUDA gets past it.
        refused = str(s["gcc_refused"])
        major, _, minor = refused.partition(".")
        # the release just below the refused one: Debian's and RHEL's g++-4.4 beside a default 4.5
        older = f"{major}.{int(minor) - 1}" if minor.isdigit() and int(minor) > 0 else ""
        about = (f"{ran} (an old CUDA, 4 to 6.5 by the header's wording) refuses gcc {refused} and newer, and the host "
                 f"gcc is one of them (line {s.get('line')}: \"{told_text(s)}\")")
        fix = (f"{check}\n"
               f"ls /usr/bin/gcc-* /usr/bin/g++-* 2>/dev/null; module avail gcc 2>&1 | tail -5   # a gcc older than "
               f"{refused} here\n"
               + (f"nvcc -ccbin /usr/bin/g++-{older} ...   # the newest gcc it accepts, where installed; or build with "
                  "a newer CUDA, whose header accepts this gcc" if older else
                  "# then pass that gcc's folder to nvcc -ccbin, or build with a newer CUDA, whose header accepts this gcc"))
    elif s.get("id") == _TORCH_TOO_OLD:
        floor = _TORCH_FLOOR.search(str(s.get("text", "")))
        need = f" {floor.group(1)} at the oldest" if floor else " a newer one"
        cuda = f" for CUDA {s['cuda']}" if s.get("cuda") else ""
        compiler = s.get("compiler") or "the host compiler"
        who = "torch's cpp_extension compiler check"
        about = (f"the host {compiler} {s.get('version') or ''} is older than torch's table accepts{cuda}: it needs{need} "
                 f"(line {s.get('line')}: \"{told_text(s)}\"); torch stops before nvcc runs")
        fix = ("which -a c++ g++ gcc; echo \"CXX=${CXX:-unset}\"; g++ --version | head -1   # torch's cpp_extension runs $CXX, "
               "else c++\n"
               "module avail gcc 2>&1 | tail -5   # a newer gcc on a cluster: module load it (CentOS/RHEL 7: "
               "scl enable devtoolset-11 bash)\n"
               "export CC=gcc CXX=g++   # after loading the newer gcc, so that torch runs it; then rerun the build")
    elif s.get("id") == "host_config:nvcc-nvhpc-not-nvcpp":
        about = (f"{ran} was handed an NVIDIA HPC SDK compiler other than nvc++ as its host compiler (line {s.get('line')}: "
                 f"\"{told_text(s)}\"): torch's cpp_extension (and builds like it) pass $CC to nvcc as -ccbin, and an "
                 "NVHPC environment often sets CC=nvc, its C compiler")
        fix = ("echo \"CC=$CC CXX=$CXX\"; nvcc --version; gcc --version   # the CC a torch extension build hands nvcc as "
               "-ccbin, and the gcc beside it\n"
               f"export CC=gcc CXX=g++   # GNU compilers, if this CUDA release accepts that gcc ({_gcc_limit(where)}); "
               "then rerun the build\n"
               "export CC=nvc++   # or keep NVHPC's: nvc++ is the one NVHPC compiler nvcc accepts as its host compiler")
    else:
        about = f"{ran} refuses the host compiler (line {s.get('line')}: \"{told_text(s)}\")"
        fix = (f"{check}\n"
               "gcc --version; clang --version; ls /usr/bin/g++-* /usr/bin/clang++-* 2>/dev/null   # host compilers here: "
               "pass one this CUDA release accepts with nvcc -ccbin (CMake: -DCMAKE_CUDA_HOST_COMPILER), per the CUDA "
               "installation guide's host compiler table\n"
               f"{_RISK}")
    yield Hit(message=f"{who} stopped the build: {about}", fix=fix, evidence=told_evidence(s))


def _live(f: FactView) -> Iterator[Hit]:
    """nvcc on PATH and the gcc it would call, a pair its release's host_config.h refuses."""
    hc = f["host_compilers"]   # unknown: not judged
    nvcc, gcc = hc.get("nvcc"), hc.get("gcc")
    if not isinstance(nvcc, dict) or not isinstance(gcc, dict) or hc.get("ccbin"):
        return
    if "ccbin" in str(hc.get("nvcc_flags") or "") or "allow-unsupported-compiler" in str(hc.get("nvcc_flags") or ""):
        return   # the flags name another host compiler, or skip the check: nothing to judge from gcc's version
    release = str(nvcc.get("release"))
    row = next((r for r in _releases() if r["cuda"] == release), None)
    if row is None or int(gcc["major"]) <= row["gcc_max"]:
        return   # a release the table does not hold is not judged; a gcc it accepts is fine
    newer = _newer_release("gcc_max", int(gcc["major"]) - 1, "gcc")
    limit = row["gcc_max"]
    yield Hit(message=f"nvcc on PATH ({hc.get('nvcc_path')}) is CUDA {release}, which accepts gcc {limit} at the newest, "
                      f"and the gcc on PATH is {gcc['version']}: every CUDA source build here (nvcc, torch extensions, "
                      f"CMake's CUDA) stops at host_config.h's \"unsupported GNU version\"; {newer}",
              severity="warning",
              fix=(f"ls /usr/bin/g++-* 2>/dev/null; module avail gcc 2>&1 | head   # a gcc {limit} or older here\n"
                   f"export NVCC_CCBIN=/usr/bin/g++-{limit}   # nvcc 13.5 reads it; older nvcc: nvcc -ccbin /usr/bin/g++-{limit}, "
                   f"CMake: -DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-{limit}\n"
                   "module avail cuda 2>&1 | head   # or a newer CUDA that accepts this gcc\n"
                   f"{_RISK}"),
              evidence={"host_compilers.nvcc.release": release, "host_compilers.gcc.version": gcc["version"],
                        "gcc_max": limit})
