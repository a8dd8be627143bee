"""rocblas-tensile-library-missing on public pastes of rocBLAS's own messages (tests/fixtures/pastes,
SOURCES.md there) and rocBLAS's format strings (knowledge/messages/rocblas.toml)."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages



def test_a_library_folder_rocblas_did_not_find_names_the_folder_and_the_path_variable():
    (f,) = fired("rocblas-tensile-library-missing", recorded_paste_facts("rocblas-1300-tensile-library-path.txt"))
    assert "no Tensile kernel library in /opt/rocm/rocblas/lib/rocblas/library" in f.message
    assert f.fix.startswith('ls "/opt/rocm/rocblas/lib/rocblas/library"')
    assert "export ROCBLAS_TENSILE_LIBPATH=" in f.fix and "apptainer exec --env" in f.fix


def test_the_glob_warning_and_the_older_error_give_one_finding():
    (f,) = fired("rocblas-tensile-library-missing", recorded_paste_facts("justxi-rocm-182-rocblas-no-paths-matched.txt"))
    assert "in /usr/lib64/library" in f.message


def test_a_listing_of_other_targets_says_the_build_lacks_the_gpu():
    (f,) = fired("rocblas-tensile-library-missing", recorded_paste_facts("amdmigraphx-3517-tensile-no-gfx1201.txt"))
    assert "target gfx1201" in f.message and "gfx908" in f.message and "does not support the GPU" in f.message
    assert "ROCBLAS_TENSILE_LIBPATH" not in f.fix   # no path would help


def test_a_file_that_would_not_load_is_another_release():
    (f,) = fired("rocblas-tensile-library-missing", recorded_paste_facts("rocmlibs-gfx1103-12-could-not-load-tensile.txt"))
    assert "could not load it" in f.message and "librocblas.so" in f.fix


def test_no_devices_found_is_hip_seeing_no_gpu_not_a_missing_library():
    g = recorded_paste_facts("alpaca-585-tensile-host-no-devices.txt")
    assert "rocblas:tensile-host-no-devices" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("rocblas-tensile-library-missing", g)


@pytest.mark.parametrize("text", [
    # rocBLAS's own format strings (tensile_host.cpp @ b520bc83), values filled in
    "rocBLAS warning: No Tensile solution found for XF32, fall back to FP32\n",
    "rocBLAS warning: hipBlasLT failed, falling back to tensile. \n",
    "2021-01-07 20:14:00.602095: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] "
    "Successfully opened dynamic library librocblas.so\n",
])
def test_rocblas_lines_that_are_not_a_missing_library_fire_nothing(text):
    assert not fired("rocblas-tensile-library-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def test_silent_on_a_node_without_a_paste():
    assert not fired("rocblas-tensile-library-missing", facts("h100-kvm-1gpu"))
