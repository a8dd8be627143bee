"""mpi-wrapper-wraps-other-compiler and mpi-built-without-fortran on real public pastes, pastes recorded
on the development VM (GCC 12.2.0, Intel MPI 2021.19's wrapper scripts) and blind set V's tickets of
the class, through the real catalogue and paste path; near misses (a compiler's own option refused, a
typo, linker options, a configure/CMake probe) stay silent or at most a hint."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts
from hpcdoctor.rules.mpi_wrappers import owners

V = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_v"


@pytest.mark.parametrize("paste, option, vendor", [
    ("gcc-12-gfortran-refuses-intel-options.txt", "-module", "Intel"),       # recorded: gfortran 12
    ("gcc-12-refuses-intel-xhost.txt", "-xHost", "Intel"),                   # recorded: "language Host not recognized"
    ("phantom-722-gfortran-refuses-intel-flags.txt", "--showme:compile", "Open MPI"),
    ("fmm3d-20-gfortran-refuses-qopenmp.txt", "-qopenmp", "Intel"),
    ("charm-1745-gcc-refuses-intel-xmic-avx512.txt", "-xMIC-AVX512", "Intel"),
    ("horses3d-1-gfortran-refuses-nvidia-mp.txt", "-mp", "NVIDIA"),
])
def test_a_compiler_refusing_another_vendors_option_is_a_warning(paste, option, vendor):
    (f,) = fired("mpi-wrapper-wraps-other-compiler", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"{option} is an option of" in f.message and vendor in f.message
    assert f.fix.startswith("mpif90 --showme:command") or f.fix.startswith("mpicc --showme:command")
    assert "-show" in f.fix


def test_v_ticket_intel_flags_through_a_gfortran_wrapper():
    # blind set V, OP-DSL/OPS#131: Makefile.intel's -module reached gfortran (the wrapper wraps gfortran)
    (f,) = fired("mpi-wrapper-wraps-other-compiler", recorded_paste_facts(str(V / "ops-131-mpif90-wraps-gfortran-not-ifort.txt")))
    assert f.severity == "warning" and "-module" in f.message and "Intel" in f.message
    assert "OMPI_FC=ifx" in f.fix and "I_MPI_F90=ifx" in f.fix


@pytest.mark.parametrize("paste, option", [
    ("cmsdist-1905-intel-ignores-gcc-options.txt", "-ffast-math"),             # icpc #10006: the build goes on
    ("papi-663-nvfortran-warns-unknown-gcc-switch.txt", "-ffixed-line-length-132"),  # nvfortran -Warning-
    ("psi4-2023-xhost-cmake-probe.txt", "-xHost"),                            # inside CMake's cmTC_ probe
])
def test_an_option_ignored_or_probed_is_only_a_hint(paste, option):
    (f,) = fired("mpi-wrapper-wraps-other-compiler", recorded_paste_facts(paste))
    assert f.severity == "info" and option in f.message and ("GCC" in f.message or "Intel" in f.message)


@pytest.mark.parametrize("paste, wrapper_fix", [
    ("fpm-1090-mpiifort-runs-missing-ifort.txt", "mpiifx -v"),                   # oneAPI 2025: no ifort
    ("impi-2021.19-mpiifort-without-ifort-bash.txt", "mpiifx -v"),               # recorded, bash
    ("impi-2021.19-mpiifort-without-ifort-dash.txt", "mpiifx -v"),               # recorded, dash's "eval: ifort: not found"
])
def test_intel_mpis_classic_wrappers_without_the_classic_compiler(paste, wrapper_fix):
    (f,) = fired("mpi-wrapper-wraps-other-compiler", recorded_paste_facts(paste))
    assert f.severity == "error" and "ifort is not on PATH" in f.message and "call mpiifx itself" in f.message
    assert wrapper_fix in f.fix and "I_MPI_F90=ifx" in f.fix


@pytest.mark.parametrize("paste, compiler", [
    ("openmpi-feedstock-34-mpicc-compiler-not-in-path.txt", "x86_64-conda_cos6-linux-gnu-cc"),  # Open MPI [no-compiler-found]
    ("fds-13994-mpiifx-ifx-not-found.txt", "ifx"),                                              # ifx not set up in CI
])
def test_a_wrapper_whose_compiler_is_not_on_path_is_an_error(paste, compiler):
    (f,) = fired("mpi-wrapper-wraps-other-compiler", recorded_paste_facts(paste))
    assert f.severity == "error" and f"runs {compiler}, which is not on PATH" in f.message
    assert "--showme:command" in f.fix and "I_MPI" in f.fix


@pytest.mark.parametrize("paste", [
    "gcc-12-gfortran-option-typo-near-miss.txt",        # -ffree-line-lenght-none: GCC's own option, misspelt
    "gacode-216-old-gfortran-own-option-near-miss.txt",  # gfortran 9 and GCC 10's -fallow-argument-mismatch
    "mpich-4417-gfortran-linker-options-near-miss.txt",  # --whole-archive, -soname: the linker's
    "pfunit-339-nvfortran-own-old-switch-near-miss.txt",  # nvfortran's own old -Mchkfpstk
    "fluidity-25-ifort-xhost-typo-near-miss.txt",        # ifort's '-Xhost' (its own -xHost miscased)
])
def test_a_compilers_own_option_refused_is_not_another_compiler(paste):
    assert not fired("mpi-wrapper-wraps-other-compiler", recorded_paste_facts(paste))


def test_the_cray_wrapper_name_ticket_is_healthy():
    # blind set V's healthy control: mpiifort is Intel MPI's name, Cray's wrapper is mpifort
    facts_ = recorded_paste_facts(str(V / "spack-stack-1308-cray-wrapper-is-mpifort-healthy.txt"))
    assert not fired("mpi-wrapper-wraps-other-compiler", facts_)
    assert not fired("mpi-built-without-fortran", facts_)


def test_whose_option_is_whose():
    assert owners("-module") == ["intel", "nvidia"]
    assert owners("-qopenmp") == ["intel"] and owners("-qsmp") == ["ibm_xl"]
    assert owners("-Mfree") == ["nvidia"] and owners("-MD") == []   # GCC's -M options are upper case
    assert owners("-fno-second-underscore") == ["gnu"] and owners("-ffree-line-length-none") == ["gnu"]
    assert owners("-ffree-line-lenght-none") == [] and owners("--whole-archive") == []


def test_v_ticket_openmpi_packaged_without_fortran():
    # blind set V, void-packages#13335: mpifort's data file names no compiler
    (f,) = fired("mpi-built-without-fortran", recorded_paste_facts(str(V / "void-packages-13335-openmpi-built-without-fortran.txt")))
    assert f.severity == "error" and "built without Fortran (or C++) support" in f.message
    assert f.fix.startswith("ompi_info") and "mpifort-wrapper-data.txt" in f.fix


def test_no_language_support_names_the_language(tmp_path):
    # no public paste found: Open MPI's [no-language-support] topic as show_help prints it, %s filled in
    # (open-mpi/ompi v5.0.10 opal/tools/wrappers/help-opal-wrapper.txt)
    text = ("$ mpifort hello.f90\n"
            "--------------------------------------------------------------------------\n"
            "Unfortunately, this installation of Open MPI was not compiled with\n"
            "Fortran support.  As such, the mpifort compiler is non-functional.\n"
            "--------------------------------------------------------------------------\n")
    (f,) = fired("mpi-built-without-fortran", paste_facts(tmp_path, text))
    assert "built without Fortran support" in f.message


def test_a_wrapper_missing_its_compiler_is_not_a_build_without_fortran():
    assert not fired("mpi-built-without-fortran", recorded_paste_facts("openmpi-feedstock-34-mpicc-compiler-not-in-path.txt"))
