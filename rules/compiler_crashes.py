"""A compiler that reports its own failure: an internal compiler error (ICE). GCC's "internal
compiler error:", clang's "command failed due to signal" and LLVM's "PLEASE submit a bug report",
the NVIDIA HPC SDK's NVFORTRAN-S-0000 "Internal compiler error.", Intel's "catastrophic error:
**Internal compiler error" and "internal error: NNNN_NNNN", ptxas's "Internal error", and a compiler
process that died of a signal other than SIGKILL (knowledge/messages/compiler_ice.toml,
nvhpc_messages.toml, build.toml). A bug of that compiler release met on this source file: the node
is not at fault, so the answer is info and says what to try."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "compiler-internal-error"

# A compiler killed by SIGKILL is the OOM killer's (build.toml, rule host-memory-oom-killed): clang
# then also prints "clang frontend command failed due to signal", which is no compiler bug.
_KILLED = frozenset(("build:gcc-killed-signal", "build:gcc-killed-old", "build:nvcc-tool-killed",
                     "build:clang-command-killed"))
# clang's "unable to execute command: <text>" is an ICE only where the text is a signal's name.
_SIGNAL_WORDS = ("segmentation fault", "aborted", "bus error", "illegal instruction", "floating point exception",
                 "trace/breakpoint trap")

_WHO = {
    "gcc": "GCC", "clang": "clang/LLVM", "nvhpc": "the NVIDIA HPC SDK compiler", "intel": "the Intel compiler",
    "ptxas": "CUDA's ptxas", "nvcc": "a tool nvcc ran",
}
_FIX = {
    "gcc": ("gcc --version; module avail gcc   # try another GCC release (module load gcc/<other>, spack find gcc)\n"
            "# compile only the file named above with lower optimisation: add -O1 (or -O0) to its compile line\n"
            "# report it: rerun that compile line with -freport-bug, and send the file it writes to "
            "https://gcc.gnu.org/bugs/ (or your distribution's tracker)"),
    "clang": ("clang --version; module avail llvm   # try another clang/LLVM release\n"
              "# compile only the file named above with -O1 (or -O0)\n"
              "# report it with the preprocessed source and run script clang saved (the paths under "
              "'PLEASE ATTACH THE FOLLOWING FILES TO THE BUG REPORT') to the URL it printed"),
    "nvhpc": ("nvfortran --version; module avail nvhpc   # try another NVIDIA HPC SDK release\n"
              "# compile only the file named in the message with -O1 (or -O0), or without -Mipa\n"
              "# report it to NVIDIA (https://forums.developer.nvidia.com/c/accelerated-computing/hpc-compilers/) "
              "with the file preprocessed: add -E to its compile line and keep the output"),
    "intel": ("icx --version; ifx --version; module avail intel   # try another Intel oneAPI release\n"
              "# compile only the file named above with -O1 (or -O0)\n"
              "# report it to Intel (https://community.intel.com/) with the file preprocessed: add -E (Fortran: -P) "
              "to its compile line"),
    "ptxas": ("ptxas --version; module avail cuda   # try another CUDA toolkit release (its ptxas)\n"
              "# lower ptxas's optimisation for that kernel: -Xptxas -O1 on the nvcc line\n"
              "# report it to NVIDIA (https://developer.nvidia.com/bugs) with the PTX: nvcc -ptx <file.cu>"),
    "nvcc": ("nvcc --version; module avail cuda   # try another CUDA toolkit release\n"
             "# compile only the file named above with -O1, and report it to NVIDIA "
             "(https://developer.nvidia.com/bugs) with the file preprocessed: nvcc -E"),
}


def _compiler(s: dict) -> str:
    sid = str(s.get("id", ""))
    if sid.startswith("nvhpc_messages:"):
        return "nvhpc"
    if sid in ("compiler_ice:gcc-ice", "compiler_ice:gcc-bug-report", "build:gcc-internal-signal"):
        return "gcc"
    if sid.startswith("compiler_ice:intel") or sid in ("compiler_ice:ifx-ice-5633", "compiler_ice:icc-internal-error-code", "compiler_ice:icc-internal-error-named"):
        return "intel"
    if sid == "compiler_ice:ptxas-internal-error":
        return "ptxas"
    if sid == "build:nvcc-tool-died-other-signal":
        return "nvcc"
    return "clang"


def _is_crash(s: dict) -> bool:
    if s.get("id") == "build:clang-command-failed-other":
        return str(s.get("reason", "")).strip().lower().startswith(_SIGNAL_WORDS)
    return True


@rule("SW102", SYMBOL, "info", "a compiler reported an internal compiler error: a compiler bug, not the node", impact=4)
def compiler_internal_error(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, a compiler's own report that it failed: GCC's "internal compiler
        error: in FUNCTION, at FILE:LINE" (or a signal name) and its "Please submit a full bug
        report", clang's "clang frontend command failed due to signal" and "unable to execute
        command: Segmentation fault", LLVM's "PLEASE submit a bug report to ... and include the
        crash backtrace", the NVIDIA HPC SDK's "NVFORTRAN-S-0000-Internal compiler error." (and
        its other internal-error numbers 7, 345, 366, 1204), Intel's "catastrophic error:
        **Internal compiler error: ...**", ifx's "error #5633" and icc's "internal error:
        101003_1112", ptxas's "Internal error", and nvcc's "'cicc' died due to signal 11".

    Why it matters:
        An internal compiler error is a bug of that compiler release, met on this source file
        (valid or not): it is no fault of the node, its GPU or its libraries, and rebuilding on
        another node with the same compiler fails the same way. A compiler killed by SIGKILL is
        left to host-memory-oom-killed: that one is the node's memory.

    How to fix:
        Try another release of the compiler (module avail), compile the one file with lower
        optimisation (-O1), and report the bug to the vendor with the preprocessed file.

    References:
        - https://github.com/gcc-mirror/gcc/blob/master/gcc/diagnostic.def (DK_ICE)
        - https://gcc.gnu.org/bugs/
        - https://github.com/llvm/llvm-project/blob/main/clang/include/clang/Basic/DiagnosticDriverKinds.td (err_drv_command_signalled)
        - https://github.com/flang-compiler/flang/blob/master/include/flang/Error/errmsg-in.n (message 0, Internal compiler error)
        - https://blog.hpc.qmul.ac.uk/compiler-errors/
    """
    symptoms = f.get("ticket.symptoms") or []
    if any(isinstance(s, dict) and s.get("id") in _KILLED for s in symptoms):
        return
    told = [s for s in catalogued(f, SYMBOL) if _is_crash(s)]
    if not told:
        return
    s = told[0]
    who = _compiler(s)
    said = (f"{_WHO[who]} reported an internal compiler error (line {s.get('line')}: \"{told_text(s)}\"): "
            "a bug of that compiler release on this source file, not a fault of the node")
    yield Hit(message=said, fix=_FIX[who], evidence=told_evidence(s))
