"""cmake-older-than-required and compiler-older-than-build-flags on real pastes (set Y's tickets,
copied to tests/fixtures/pastes with their URLs in SOURCES.md) and on the emitters' own formats
filled in where no public paste was used (each test says so)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


def test_cmake_minimum_required_newer_than_the_running_cmake():
    (f,) = fired("cmake-older-than-required", recorded_paste_facts("mumps-superbuild-20-cmake-older-than-required.txt"))
    assert f.severity == "error"
    assert "needs CMake 3.20 or newer and the cmake that ran is 3.19.7" in f.message
    assert "module avail cmake" in f.fix and "pip install --user 'cmake>=3.20'" in f.fix
    assert "CMakeLists" not in f.fix


def test_the_same_refusal_retyped_with_one_space():
    (f,) = fired("cmake-older-than-required", recorded_paste_facts("open-builder-124-cmake-3-5-older-than-required.txt"))
    assert "needs CMake 3.10 or newer and the cmake that ran is 3.5.1" in f.message


def test_policy_version_and_unknown_policy_from_cmakes_formats():
    # Kitware/CMake v4.4.2 cmPolicies.cxx and cmMakefile.cxx formats, filled in (no public paste used)
    text = ("CMake Error at CMakeLists.txt:2 (cmake_policy):\n  An attempt was made to set the policy version of CMake to \"3.27\" which is\n"
            "  greater than this version of CMake.  This is not allowed because the greater\n  version may have new policies not known to this CMake.\n")
    (f,) = fired("cmake-older-than-required", told_facts(text))
    assert "policy version 3.27" in f.message
    (g,) = fired("cmake-older-than-required", told_facts("  Policy \"CMP0148\" is not known to this version of CMake.\n"))
    assert "CMP0148" in g.message and "module avail cmake" in g.fix


def test_cmake_4_refusing_an_old_project_is_not_an_upgrade():
    # Kitware/CMake v4.4.2 cmPolicies.cxx line 334, under its CMake Error preamble (the emitter's text)
    text = ("CMake Error at CMakeLists.txt:1 (cmake_minimum_required):\n"
            "  Compatibility with CMake < 3.5 has been removed from CMake.\n")
    (f,) = fired("cmake-older-than-required", told_facts(text))
    assert "newer than the project" in f.message
    assert "-DCMAKE_POLICY_VERSION_MINIMUM=3.5" in f.fix and "module avail cmake" not in f.fix


def test_a_package_version_find_package_refuses_is_not_cmakes():
    text = "  Could not find a configuration file for package \"Boost\" that is compatible with requested version \"1.82\".\n"
    gathered = told_facts(text)
    assert any(s["id"] == "cmake_version:find-package-config-version-not-compatible"
               for s in gathered["facts"]["ticket"]["symptoms"])
    assert not fired("cmake-older-than-required", gathered)


def test_gfortran_9_refusing_allow_argument_mismatch():
    (f,) = fired("compiler-older-than-build-flags",
                 recorded_paste_facts("geopm-1218-gfortran-9-lacks-allow-argument-mismatch.txt"))
    assert "-fallow-argument-mismatch is accepted from GCC 10.1" in f.message
    assert f.fix.startswith("gfortran --version") and "module avail gcc" in f.fix


def test_x86_gcc_refusing_a_newer_cpu_name():
    # GCC 7's parenthesised form (as quoted in code index file id 57398268854)
    (f,) = fired("compiler-older-than-build-flags",
                 told_facts("cc1plus: error: bad value ('x86-64-v3') for '-march=' switch\n"))
    assert "-march=x86-64-v3 is accepted from GCC 11.1" in f.message


def test_a_typo_or_a_foreign_option_is_not_an_old_compiler():
    # GCC's testsuite (PR 77475): hasvel is a typo; Intel's -module is no GCC option at any release
    assert not fired("compiler-older-than-build-flags", told_facts("cc1: error: bad value 'hasvel' for '-march=' switch\n"))
    assert not fired("compiler-older-than-build-flags",
                     told_facts("gfortran: error: unrecognized command-line option '-module'; did you mean '-Mmodules'?\n"))


def test_an_x86_cpu_refused_on_arm_is_not_an_old_compiler():
    # aarch64.cc "unknown value %qs for %<-march%>" with znver3: x86-build-flags-on-arm's, not this rule's
    assert not fired("compiler-older-than-build-flags", told_facts("cc1: error: unknown value 'znver3' for '-march'\n"))
    (f,) = fired("compiler-older-than-build-flags", told_facts("cc1: error: unknown value 'neoverse-v2' for '-mcpu'\n"))
    assert "GCC 13.1" in f.message


def test_glibc_private_relocation_error_is_a_binary_built_on_a_newer_glibc():
    (f,) = fired("glibc-older-than-binary", recorded_paste_facts("mcx-39-glibc-private-binary-built-on-newer-libc.txt"))
    assert "GLIBC_PRIVATE" in f.message and "mcx" in f.message


def test_configure_names_the_program_it_did_not_find():
    (f,) = fired("required-program-not-installed", recorded_paste_facts("sf-1393-gdal-config-not-found-on-server.txt"))
    assert "gdal-config" in f.message and f.fix.startswith("command -v gdal-config")


def test_configure_without_a_missing_program_is_not_read():
    # cpuminer-gc3355#13's words (set Y healthy control): the user's CFLAGS, no program looked up
    text = ("checking for gcc... gcc\nchecking whether the C compiler works... no\n"
            "configure: error: in `/home/ruben/cpuminer-gc3355':\nconfigure: error: C compiler cannot create executables\n")
    assert not fired("required-program-not-installed", told_facts(text))
