"""gromacs-built-without-cuda and lammps-package-not-built on real pastes (tests/fixtures/pastes/SOURCES.md):
GROMACS's OpenCL build failing on an A100 (gromacs_py#22, set W), LAMMPS's ML-QUIP style not in the binary
(QUIP#614) and KOKKOS asked for GPUs without a GPU backend (lammps#3584); near misses: a style LAMMPS does
not know at all (lammps#4596) and a KOKKOS GPU build run without g N (lammps#4944). Where no public paste
was found for a wording, the test fills in the emitter's own format string and says so."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts



def test_an_opencl_gromacs_failing_on_an_a100_is_a_build_without_cuda():
    (f,) = fired("gromacs-built-without-cuda", recorded_paste_facts("gromacs-py-22-opencl-nbnxn-a100.txt"))
    assert f.severity == "error" and "NVIDIA A100-SXM4-40GB" in f.message and "without CUDA" in f.message
    assert "-DGMX_GPU=CUDA" in f.fix and "'gromacs=*=*cuda*'" in f.fix


def test_the_set_w_ticket_fires_it():
    (f,) = fired("gromacs-built-without-cuda", recorded_paste_facts("../tickets_blind_w/gromacs-py-22-conda-gromacs-opencl-build-on-a100.txt"))
    assert "Failed to compile NBNXN kernels" in f.message


def test_nb_gpu_on_a_build_without_gpu_support(tmp_path):
    # GROMACS decidegpuusage.cpp's own text as its fatal-error box wraps it (no public paste found)
    text = ("Inconsistency in user input:\nNonbonded interactions on the GPU were requested with -nb gpu,\n"
            "but the GROMACS binary has been built without GPU support. Either run without\n"
            "selecting GPU options, or recompile GROMACS with GPU support enabled\n")
    (f,) = fired("gromacs-built-without-cuda", paste_facts(tmp_path, text))
    assert "no GPU support" in f.message


def test_an_opencl_build_refusing_a_volta(tmp_path):
    # device_management_ocl.cpp's format, filled for a V100 (no public paste found)
    text = ("  #0: name: Tesla V100-SXM2-16GB, vendor: NVIDIA Corporation, device version: OpenCL 3.0 CUDA, "
            "status: incompatible (please use CUDA build for NVIDIA Volta GPUs or newer)\n")
    (f,) = fired("gromacs-built-without-cuda", paste_facts(tmp_path, text))
    assert "Volta or newer" in f.message


def test_gmx_version_without_cuda_beside_an_nvidia_gpu(tmp_path):
    # binaryinformation.cpp's line, filled (no public paste found), and a GPU the user names
    text = "My node has an NVIDIA A100 but mdrun never uses it. gmx --version says:\nGPU support:        disabled\n"
    (f,) = fired("gromacs-built-without-cuda", paste_facts(tmp_path, text))
    assert 'GPU support: disabled' in f.message


@pytest.mark.parametrize("text", [
    "GPU support:        disabled\n",                                         # no NVIDIA GPU in sight
    "My node has an NVIDIA A100. gmx --version says:\nGPU support:        CUDA\n",  # the right build
    "Failed to compile NBNXN kernels for GPU #gfx906\n",                       # an AMD device: OpenCL is its backend
])
def test_not_a_build_without_cuda_on_nvidia(text, tmp_path):
    assert not fired("gromacs-built-without-cuda", paste_facts(tmp_path, text))


@pytest.mark.parametrize("paste, package", [
    ("quip-614-lammps-ml-quip-not-enabled.txt", "ML-QUIP"),
])
def test_a_style_of_a_package_left_out(paste, package):
    (f,) = fired("lammps-package-not-built", recorded_paste_facts(paste))
    # a build choice (the QUIP reporter's own build), not a node fault: info, as set U labels it
    assert f.severity == "info" and f"without the {package} package" in f.message
    assert "Installed packages" in f.fix and f"PKG_{package}=on" in f.fix


def test_kokkos_asked_for_gpus_without_a_gpu_backend():
    (f,) = fired("lammps-package-not-built", recorded_paste_facts("lammps-3584-kokkos-no-gpu-backend.txt"))
    assert "without a GPU backend" in f.message and "Kokkos_ENABLE_CUDA=on" in f.fix


def test_a_suffix_without_its_package(tmp_path):
    # lammps.cpp post_create's own text (no public paste found)
    (f,) = fired("lammps-package-not-built", paste_facts(tmp_path, "ERROR: Using suffix gpu without GPU package installed (src/lammps.cpp:1040)\n"))
    assert "without the GPU package" in f.message and "PKG_GPU=on" in f.fix


@pytest.mark.parametrize("paste", [
    "lammps-4596-unrecognized-fix-style-gpu.txt",            # a style LAMMPS does not know: the old fix gpu
    "lammps-4944-kokkos-gpu-build-no-gpus-requested.txt",    # a KOKKOS GPU build run without g N
])
def test_not_a_missing_package(paste):
    assert not fired("lammps-package-not-built", recorded_paste_facts(paste))
