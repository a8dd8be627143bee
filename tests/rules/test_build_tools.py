"""ninja-missing and mpi-devel-missing on real pastes: the public tickets (tests/fixtures/pastes,
SOURCES.md there) and the build tools' own output recorded on the project's VM (Meson 1.12.1,
CMake 3.25.1 and GCC 12.2.0 run where ninja, make or mpi.h were absent)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts


@pytest.mark.parametrize("paste, who", [
    ("xlstm-76-ninja-not-installed.txt", "torch's C++ extension build"),
    ("unifiedparsing-12-ninja-required-jit-extension.txt", "torch's C++ extension build"),
    ("meson-1.12-no-ninja-on-path.txt", "Meson"),
    ("cmake-3.25-ninja-generator-no-ninja.txt", "CMake's Ninja generator"),
])
def test_each_build_systems_words_for_no_ninja(paste, who):
    (f,) = fired("ninja-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and f.message.startswith(f"{who} stops because it cannot run ninja")
    assert f.fix.startswith("command -v ninja && ninja --version") and "pip install ninja" in f.fix


def test_cmake_without_make_is_not_ninjas():
    # the same CMake message for the "Unix Makefiles" generator is make's absence
    gathered = recorded_paste_facts("cmake-3.25-makefiles-generator-no-make.txt")
    assert any(s["id"] == "buildsys:cmake-no-build-program" for s in gathered["facts"]["ticket"]["symptoms"])
    assert not fired("ninja-missing", gathered)


def test_a_failed_ninja_build_is_not_a_missing_ninja():
    # ninja ran and a compiler under it failed: ninja is there
    assert not fired("ninja-missing", recorded_paste_facts("m3dm-16-ninja-build-stopped-no-kill.txt"))



def test_torchs_fallback_warning_is_info_and_its_sycl_and_dlink_refusals_errors():
    # the formats of torch 2.13.0 cpp_extension.py lines 777-781, 814 and 846-849, filled in
    warn = ("UserWarning: Attempted to use ninja as the BuildExtension backend but we could not find ninja.. "
            "Falling back to using the slow distutils backend.\n")
    (f,) = fired("ninja-missing", told_facts(warn))
    assert f.severity == "info" and "one file at a time" in f.message
    for text in ("AssertionError: ninja is required to build sycl extensions.\n",
                 "AssertionError: With dlink=True, ninja is required to build cuda extension my_ext._C.\n"):
        (f,) = fired("ninja-missing", told_facts(text))
        assert f.severity == "error"


@pytest.mark.parametrize("paste, severity, words", [
    ("summertime-72-mpi4py-without-mpi-headers.txt", "error", "no mpicc wrapper and no mpi.h"),
    ("gcc-12-mpi-h-missing.txt", "error", "no mpicc wrapper and no mpi.h"),
    ("summarize-from-feedback-12-mpi4py-without-mpicc.txt", "info", "installing mpi4py failed"),
])
def test_mpi_development_files_missing(paste, severity, words):
    (f,) = fired("mpi-devel-missing", recorded_paste_facts(paste))
    assert f.severity == severity and words in f.message
    assert f.fix.startswith("command -v mpicc && mpicc -show") and "MPICC=" in f.fix and "libopenmpi-dev" in f.fix


def test_mpi4pys_link_failure_and_absent_wrapper_are_warnings():
    # mpi4py 4.1.2 conf/mpidistutils.py errmsg.format("link") and conf/mpiconfig.py line 350, filled in
    (f,) = fired("mpi-devel-missing", told_facts("error: Cannot link MPI programs. Check your configuration!!!\n"))
    assert f.severity == "warning" and "could not link" in f.message
    (f,) = fired("mpi-devel-missing", told_facts("warning: mpicc='/opt/mpi/bin/mpicc' not found\n"))
    assert f.severity == "warning" and "/opt/mpi/bin/mpicc" in f.message


def test_silent_where_mpi_is_installed_or_the_header_is_another():
    # mpi4py built and running under another MPI's launcher: the development files were there
    assert not fired("mpi-devel-missing", recorded_paste_facts("ndsl-184-mpi4py-suspicious-mpiexec.txt"))
    assert not fired("mpi-devel-missing", recorded_paste_facts("gcc-12-python-h-missing.txt"))
    # another package's failed build says nothing of MPI
    assert not fired("mpi-devel-missing", told_facts("ERROR: Failed building wheel for flash-attn\n"))
