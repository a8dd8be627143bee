"""compiler-internal-error (SW102) on real pastes (tests/fixtures/pastes, SOURCES.md there) and on
the compilers' own format strings where no public paste was kept (each says so): an internal
compiler error is read as the compiler's bug, at info, and a compiler killed by the OOM killer is
left to the memory answer."""

from __future__ import annotations

import pytest

from conftest import report_of
from rulekit import PASTES, fired, recorded_paste_facts, told_facts


def test_nvfortran_internal_compiler_error_is_info_and_names_the_compiler():
    (f,) = fired("compiler-internal-error", recorded_paste_facts("libmbd-64-nvfortran-internal-compiler-error.txt"))
    assert f.severity == "info" and f.message.startswith("the NVIDIA HPC SDK compiler reported an internal compiler error")
    assert "not a fault of the node" in f.message and "module avail nvhpc" in f.fix


@pytest.mark.parametrize("text, who", [
    # GCC's DK_ICE prefix and fancy_abort's "in %s, at %s:%d" (https://github.com/NCAR/musica/issues/230)
    ("f951: internal compiler error: in matching_typebound_op, at fortran/interface.cc:4427\n", "GCC"),
    # clang's err_drv_command_signalled after a frontend crash (DiagnosticDriverKinds.td, filled in)
    ("clang++: error: unable to execute command: Segmentation fault (core dumped)\n"
     "clang++: error: clang frontend command failed due to signal (use -v to see invocation)\n", "clang/LLVM"),
    # Intel's classic compilers (https://github.com/libxsmm/libxsmm/issues/104)
    ("include/libxsmm.f: catastrophic error: Internal compiler error: segmentation violation signal raised "
     "Please report this error along with the circumstances in which it occurred in a Software Problem Report.\n",
     "the Intel compiler"),
    # ptxas 12.4's "Internal error: %s" (strings of the binary; the text numba's nvvm.py quotes)
    ("ptxas fatal   : Internal error: overlapping non-identical data\n", "CUDA's ptxas"),
    # nvcc's "'%s' died due to signal %d %s" for SIGSEGV (build.toml)
    ("nvcc error   : 'cicc' died due to signal 11 (Invalid memory reference)\n", "a tool nvcc ran"),
])
def test_each_compilers_internal_error_is_read_as_its_bug(text, who):
    (f,) = fired("compiler-internal-error", told_facts(text))
    assert f.severity == "info" and f.message.startswith(f"{who} reported an internal compiler error")


@pytest.mark.parametrize("text", [
    # the OOM killer's SIGKILL: host-memory-oom-killed answers it (build.toml)
    "clang: error: unable to execute command: Killed\n"
    "clang: error: clang frontend command failed due to signal (use -v to see invocation)\n",
    "c++: internal compiler error: Killed (program cc1plus)\n",
    "g++: fatal error: Killed signal terminated program cc1plus\n",
    "nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n",
    # an ordinary NVFORTRAN error about the user's source is read, and is no compiler bug
    "NVFORTRAN-S-0038-Symbol, indexa, has not been explicitly declared (hecmw_matrix_misc.F90)\n",
    # clang could not run a tool at all: not a crash
    "clang: error: unable to execute command: Executable \"ld\" doesn't exist!\n",
])
def test_a_killed_compiler_or_a_users_error_is_not_a_compiler_bug(text):
    assert not fired("compiler-internal-error", told_facts(text))


@pytest.mark.parametrize("paste, message", [
    ("libmbd-64-nvfortran-internal-compiler-error.txt", "nvhpc_messages:internal-compiler-error"),
    ("compact-bilinear-pooling-21-glog-cufft-2-vs-0.txt", "cufft:CUFFT_ALLOC_FAILED"),
    ("torchinfo-238-typedstorage-deprecated.txt", "torch_warnings:typed-storage-deprecated"),
    ("spack-15193-no-binary-for-cuda.txt", "spack:no-binary-installing-from-source"),
    ("dpgen-1374-cp2k-basis-set-not-found.txt", "cp2k:basis-set-not-found"),
])
def test_what_was_refused_before_is_read_and_never_an_alarm_about_the_node(paste, message):
    # W's healthy controls: a compiler bug, a job out of memory, a deprecation warning, a Spack
    # configuration and a CP2K input: each is read, none is an error or warning about the node
    gathered = recorded_paste_facts(paste)
    assert message in {s["id"] for s in gathered["facts"]["ticket"]["symptoms"]}
    doc = report_of("check", "--from", str(PASTES / paste))
    assert not [f for f in doc["findings"] if f["severity"] in ("error", "warning")]
