"""compile-toolchain-missing on real public pastes and recordings (tests/fixtures/pastes/SOURCES.md):
pip and distutils without gcc, a Docker build's FileNotFoundError, Triton's and Inductor's compiler
lookups, CMake and GNU make with no compiler on PATH, and the shells' "command not found"; silent
where the compiler ran and the build failed for another reason."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, compiler, who", [
    ("docker-python-180-unable-to-execute-gcc.txt", "gcc", "pip/setuptools"),
    ("http-parser-30-unable-to-execute-gcc-unquoted.txt", "gcc", "pip/setuptools"),
    ("miniature-19-docker-build-filenotfound-gcc.txt", "gcc", "a Python build step"),
    ("make-4.3-compiler-not-on-path.txt", "gcc", "make"),
])
def test_a_build_that_could_not_start_its_compiler_is_an_error(paste, compiler, who):
    (f,) = fired("compile-toolchain-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and f"the {compiler} compiler is not on this node's PATH" in f.message and who in f.message
    assert "module avail gcc" in f.fix and "build-essential" in f.fix


def test_cmake_finding_no_compiler_names_the_language():
    (f,) = fired("compile-toolchain-missing", recorded_paste_facts("cmake-3.25-no-compiler-on-path.txt"))
    assert "no C compiler is on this node's PATH" in f.message and "CMake" in f.message


@pytest.mark.parametrize("paste, who", [
    ("ml-cross-entropy-5-triton-no-c-compiler.txt", "Triton"),
    ("torch-2.13-compile-no-cxx.txt", "torch.compile (Inductor)"),
])
def test_torch_compile_and_triton_without_a_compiler_get_cc_and_cxx(paste, who):
    (f,) = fired("compile-toolchain-missing", recorded_paste_facts(paste))
    assert who in f.message and "export CC=$(command -v gcc) CXX=$(command -v g++)" in f.fix


@pytest.mark.parametrize("line", [
    # bash 5.2.15, dash 0.5.12, zsh 5.9, fish 3.6.0 and tcsh 6.24 running gcc with PATH=/nonexistent
    # on the development VM (the same recordings as shell.toml's nvcc entry)
    "/usr/bin/bash: line 1: gcc: command not found",
    "/usr/bin/dash: 1: gcc: not found",
    "zsh:1: command not found: gcc",
    "fish: Unknown command: gcc",
    "gcc: Command not found.",
])
def test_a_shell_that_finds_no_compiler_is_read(line):
    (f,) = fired("compile-toolchain-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line + "\n")}))
    assert "the gcc compiler is not on this node's PATH" in f.message and "the shell" in f.message


def test_silent_where_the_compiler_ran_and_a_header_was_missing():
    # "command 'x86_64-linux-gnu-gcc' failed with exit status 1": gcc ran and stopped on portaudio.h
    assert not fired("compile-toolchain-missing", recorded_paste_facts("scrapy-2115-gcc-exit-status-header-missing.txt"))


def test_silent_on_another_command_not_found():
    line = "/tmp/slrec/jobs/job.sh: line 3: torchrun: command not found\n"   # shell.toml's own example
    assert not fired("compile-toolchain-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line)}))


_SET_U = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_u"


@pytest.mark.parametrize("paste, program, package", [
    ("isolate-29-cc1plus-error-trying-to-exec.txt", "cc1plus", "sudo apt-get install g++"),       # GCC 4.x
    ("llama-cpp-6727-cannot-execute-cc1plus.txt", "cc1plus", "sudo dnf install gcc-c++"),        # GCC 4.8+
])
def test_gcc_driver_without_the_languages_compiler_proper_names_its_package(paste, program, package):
    (f,) = fired("compile-toolchain-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and f"could not start {program}, its C++ compiler proper" in f.message
    assert package in f.fix and f"gcc -print-prog-name={program}" in f.fix


def test_set_u_fortran_front_end_missing(tmp_path):
    from rulekit import paste_facts
    (f,) = fired("compile-toolchain-missing", paste_facts(tmp_path, (_SET_U / "bundler-sfm-58-gfortran-not-installed.txt").read_text()))
    assert f.severity == "error" and "f951, its Fortran compiler proper" in f.message and "apt-get install gfortran" in f.fix
    (f,) = fired("compile-toolchain-missing", paste_facts(tmp_path, (_SET_U / "lsmlib-13-no-fortran-compiler.txt").read_text()))
    assert f.severity == "warning" and "gfortran" in f.message and "consistent with" in f.message


def test_silent_on_a_missing_fortran_runtime_library():
    # ld's "cannot find -lgfortran": the compiler ran; a library is missing (another rule's fault)
    from rulekit import told_paste_facts
    assert not fired("compile-toolchain-missing", told_paste_facts("openblas-1879-cannot-find-lgfortran.txt"))
