"""Kokkos' device initialisation (knowledge/messages/kokkos.toml): its architecture refusals feed
framework-missing-arch, its GPU selection feeds the GPU-visibility rules; its performance warning and
the program's own errors are read but silent. Real pastes (fixtures/pastes, set V's ticket); the
messages with no public paste use Kokkos' format filled in, marked so."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, told_facts, told_paste_facts

V = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_v"


def test_set_v_probe_kernel_read_0_0_on_a_maxwell(tmp_path):
    text = (V / "kokkos-1944-built-for-wrong-gpu-arch.txt").read_text(encoding="utf-8")
    (f,) = fired("framework-missing-arch", paste_facts(tmp_path, text))
    assert f.severity == "error" and "probe kernel did not run" in f.message and "5.0" in f.message
    assert "Kokkos_ARCH_" in f.fix


def test_likely_mismatch_of_architecture_and_the_2x_form_on_pascal():
    (f,) = fired("framework-missing-arch", told_paste_facts("lammps-2086-kokkos-likely-mismatch-of-architecture.txt"))
    assert "no code for this GPU" in f.message
    (g,) = fired("framework-missing-arch", told_paste_facts("arborx-109-kokkos-compiled-for-0-0-on-6-1.txt"))
    assert "6.1" in g.message


def test_kokkos_3_1_reversed_minor_check_is_info():
    (f,) = fired("framework-missing-arch", told_paste_facts("kokkos-3026-kokkos-3-1-reversed-minor-check.txt"))
    assert f.severity == "info" and "kokkos/kokkos#3026" in f.message


def test_a_build_above_the_gpu_is_an_error():
    # constructed: Kokkos 4.6.01's format with an sm_80 build on a 7.5 GPU
    text = ("Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 8.0 on device with "
            "compute capability 7.5 is not supported by CUDA!\n")
    (f,) = fired("framework-missing-arch", told_facts(text))
    assert f.severity == "error" and "built for compute capability 8.0" in f.message


def test_the_performance_warning_is_silent():
    assert not fired("framework-missing-arch", told_paste_facts("kokkos-602-cuda-initialize-warning-3-5-on-3-7.txt"))


def test_kokkos_gpu_selection_feeds_the_visibility_rules():
    # constructed from core/src/impl/Kokkos_Core.cpp @ 4.6.01 (get_gpu, get_visible_devices)
    beyond = told_facts("Error: Requested GPU with id '1' but only 1GPU(s) available! Raised by Kokkos::initialize().\n")
    assert fired("gpu-index-beyond-visible", beyond)
    none = told_facts("Error: no GPU available for execution.\n Raised by Kokkos::initialize().\n")
    (f,) = fired("no-gpu-visible", none)
    assert f.severity == "info"
