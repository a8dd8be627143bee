"""host-compiler-too-old and rocm-release-too-old on real pastes: set O's tickets, other public threads
(tests/fixtures/pastes/SOURCES.md), and GCC 12.2.0's own output recorded on the development VM."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts



@pytest.mark.parametrize("paste", [
    "../tickets_blind_o/pairtree-13-gcc-4-8-default-c-mode.txt",
    "../tickets_blind_o/gtc2vcf-22-gcc-4-8-too-old.txt",
    "cgfx5-9-gcc-4-8-5-for-loop-c99.txt",
])
def test_gcc_4_default_gnu89_is_an_old_compiler(paste):
    (f,) = fired("host-compiler-too-old", recorded_paste_facts(paste))
    assert f.severity == "error" and "only allowed in C99 mode" in f.message and "gnu89" in f.message
    assert "-std=gnu99" in f.fix and "module avail gcc" in f.fix and "scl enable" in f.fix


def test_gcc_5_wording_names_a_c90_mode_the_build_set():
    # GCC 12.2.0 on the development VM: gcc -std=gnu89 -c a.c (compiler_std.toml's example)
    (f,) = fired("host-compiler-too-old", told_facts(
        "a.c:1:23: error: ‘for’ loop initial declarations are only allowed in C99 or C11 mode\n"))
    assert "C90 mode" in f.message and "GCC 5 and later default to gnu11" in f.message


def test_a_cxx_feature_names_the_standard_it_needs():
    # cc1plus 12.2.0's format string filled in as it prints; and libstdc++ 4.8's #error text
    (f,) = fired("host-compiler-too-old", told_facts(
        "x.cpp:3:7: error: structured bindings only available with ‘-std=c++17’ or ‘-std=gnu++17’\n"))
    assert "C++17" in f.message and "-std=gnu++17" in f.fix
    (f,) = fired("host-compiler-too-old", told_facts(
        "/usr/include/c++/4.8.2/bits/c++0x_warning.h:32:2: error: #error This file requires compiler and library support "
        "for the ISO C++ 2011 standard. This support is currently experimental, and must be enabled with the -std=c++11 "
        "or -std=gnu++11 compiler options.\n"))
    assert "C++11" in f.message and "-std=gnu++11" in f.fix


def test_an_unknown_std_is_old_only_when_it_names_a_standard():
    (f,) = fired("host-compiler-too-old", told_facts("cc1plus: error: unrecognized command line option \"-std=c++17\"\n"))
    assert "C++17" in f.message and "predates" in f.message
    # GCC 12.2.0 on the development VM: a misspelt standard is not an old compiler
    assert not fired("host-compiler-too-old", told_facts(
        "gcc: error: unrecognized command-line option ‘-std=c++29’; did you mean ‘-std=c++20’?\n"))


def test_rocm_clang_without_offload_arch_is_an_old_rocm():
    (f,) = fired("rocm-release-too-old", recorded_paste_facts("../tickets_blind_o/hipfort-12-rocm-too-old-for-offload-arch.txt"))
    assert f.severity == "error" and "clang 10" in f.message and "3.5" in f.message
    assert "/opt/rocm/.info/version" in f.fix and "--amdgpu-target" in f.fix


def test_a_cxx_compiler_handed_offload_arch_is_not_an_old_rocm_nor_an_old_gcc():
    # MIOpen#1416: c++ (GCC) was given --offload-arch: the HIP compiler was not used at all
    gathered = recorded_paste_facts("miopen-1416-cxx-given-offload-arch.txt")
    assert not fired("rocm-release-too-old", gathered)
    assert not fired("host-compiler-too-old", gathered)


def test_the_kernels_own_gcc_check_in_a_vendor_tree():
    # an Android kernel tree (set AA): compiler-gcc.h's #error with aarch64-linux-android-gcc 4.9
    (f,) = fired("host-compiler-too-old", recorded_paste_facts("../tickets_blind_aa/kernel-xiaomi-sm8250-1-gcc-4-9-too-old.txt"))
    assert "minimum-compiler check" in f.message and "GCC 5.1 or newer" in f.message
    assert "${CROSS_COMPILE}gcc --version" in f.fix and "mrproper" in f.fix and "<" not in f.fix


def test_the_kernels_cc_version_check_names_both_versions():
    # scripts/cc-version.sh's echo lines, filled in (no public paste found)
    (f,) = fired("host-compiler-too-old", told_facts(
        "***\n*** C compiler is too old.\n***   Your GCC version:    4.8.5\n***   Minimum GCC version: 5.1.0\n***\n"))
    assert "its version: 4.8.5" in f.message and "GCC 5.1.0 or newer" in f.message


def test_another_projects_too_old_wording_is_not_the_kernels():
    assert not fired("host-compiler-too-old", told_facts("error: your compiler is too old for this project, sorry\n"))
