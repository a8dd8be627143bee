"""library-devel-headers-missing (SW110) on real public pastes (tests/fixtures/pastes/SOURCES.md):
R's configure naming gmp.h, GCC's and Clang's missing include, pkgconf's missing module and CMake's
FindZLIB; silent where Python's, MPI's or CUDA's headers and libraries are missing (their own rules),
and on lines written in the emitters' formats for toolchain headers and libraries."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts


@pytest.mark.parametrize("paste, named, packages", [
    ("clusterr-26-gmp-headers-missing.txt", "the header gmp.h", ("libgmp-dev", "gmp-devel")),
    ("asset-5-gcc-zlib-h-missing.txt", "the header zlib.h", ("zlib1g-dev", "zlib-devel")),
    ("go-ethereum-1617-clang-gmp-h-not-found.txt", "the header gmp.h", ("libgmp-dev", "gmp-devel")),
    ("ohpc-1914-pkg-config-gsl-not-found.txt", "the pkg-config module gsl", ("libgsl-dev", "gsl-devel")),
    ("darkflameserver-37-cmake-zlib-include-dir-missing.txt", "CMake's package ZLIB (missing: ZLIB_INCLUDE_DIR)",
     ("zlib1g-dev", "zlib-devel")),
])
def test_a_missing_library_devel_file_names_the_packages(paste, named, packages):
    (f,) = fired("library-devel-headers-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and named in f.message
    deb, rpm = packages
    assert f"sudo apt-get install {deb}" in f.fix and f"sudo dnf install {rpm}" in f.fix
    assert "apt-file search " in f.fix and "dnf provides '" in f.fix and "module avail " in f.fix
    assert "conda search -c conda-forge " in f.fix


def test_the_configure_option_the_message_names_is_given_a_prefix():
    (f,) = fired("library-devel-headers-missing", recorded_paste_facts("clusterr-26-gmp-headers-missing.txt"))
    assert '--with-gmp-include="$CONDA_PREFIX/include"' in f.fix
    assert "apt-file search gmp.h" in f.fix and "dnf provides '*/gmp.h'" in f.fix


def test_pkg_config_gets_its_search_path_and_an_unknown_header_the_generic_lookup(tmp_path):
    (f,) = fired("library-devel-headers-missing", recorded_paste_facts("ohpc-1914-pkg-config-gsl-not-found.txt"))
    assert "PKG_CONFIG_PATH" in f.fix and "dnf provides 'pkgconfig(gsl)'" in f.fix
    (g,) = fired("library-devel-headers-missing", recorded_paste_facts("scrapy-2115-gcc-exit-status-header-missing.txt"))
    assert "portaudio.h" in g.message and "apt-file search portaudio.h" in g.fix and "sudo dnf install" not in g.fix
    # a library the table does not know may be the project's own file: a hint, not an error on the node
    assert g.severity == "info" and "submodule" in g.message and f.severity == "error"


# GNU ld 2.40's own format (recorded on the development VM with another library's name), filled in.
def test_ld_cannot_find_a_system_library(tmp_path):
    (f,) = fired("library-devel-headers-missing",
                 paste_facts(tmp_path, "/usr/bin/ld: cannot find -lnetcdf: No such file or directory\n"
                                       "collect2: error: ld returned 1 exit status\n"))
    assert "-lnetcdf" in f.message and "libnetcdf-dev" in f.fix and "netcdf-devel" in f.fix


@pytest.mark.parametrize("paste", [
    "gcc-12-python-h-missing.txt", "psenet-104-python27-python-h-missing.txt", "gcc-12-mpi-h-missing.txt",
    "mxnet-2656-ld-cannot-find-lcuda.txt",
    "openblas-1879-cannot-find-lgfortran.txt",
])
def test_python_mpi_cuda_libraries_and_gfortran_stay_with_their_own_rules(paste):
    assert not fired("library-devel-headers-missing", recorded_paste_facts(paste))


@pytest.mark.parametrize("text", [
    "x.c:1:10: fatal error: stdio.h: No such file or directory\ncompilation terminated.\n",
    "/usr/bin/ld: cannot find -lc: No such file or directory\n",
    "-- Could NOT find CUDA (missing: CUDA_DIR)\nmake: *** [all] Error 2\n",
    "-- Could NOT find PythonLibs (missing: PYTHON_LIBRARIES PYTHON_INCLUDE_DIRS)\n",
    "cc1: fatal error: main.c: No such file or directory\ncompilation terminated.\n",
])
def test_toolchain_files_and_other_owners_are_not_a_library_devel_package(tmp_path, text):
    assert not fired("library-devel-headers-missing", paste_facts(tmp_path, text))


# CUDA's headers are named with the component that installs them (the wheels' include/ folders).
def test_a_cuda_header_nvcc_did_not_find_is_the_toolkits_install(tmp_path):
    (f,) = fired("library-devel-headers-missing", recorded_paste_facts("mmdetection-71-cuda-runtime-h-missing.txt"))
    assert f.severity == "error" and "CUDA's runtime and driver API (cudart)" in f.message and "nvcc searches" in f.message
    assert "apt-file search '/cuda_runtime.h'" in f.fix and "nvidia-cuda-runtime-cu12" in f.fix


def test_a_cuda_header_a_plain_compile_did_not_find_is_a_hint(tmp_path):
    text = "src/gemm.cpp:3:10: fatal error: cublas_v2.h: No such file or directory\ncompilation terminated.\n"
    (f,) = fired("library-devel-headers-missing", paste_facts(tmp_path, text))
    assert f.severity == "info" and "a header of cuBLAS" in f.message and "CPATH" in f.fix


def test_a_projects_own_cuda_header_is_not_a_component(tmp_path):
    text = "kernels.cu:1:10: fatal error: cuda_helpers.h: No such file or directory\ncompilation terminated.\n"
    assert not fired("library-devel-headers-missing", paste_facts(tmp_path, text))
