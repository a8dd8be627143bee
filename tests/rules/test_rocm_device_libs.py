"""rocm-device-libs-not-found on clang's own messages in real pastes (tests/fixtures/pastes, SOURCES.md there)
and on set N's ticket, which says it in words."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, recorded_paste_facts, told_facts

SET_N = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_n"



def test_clang_13_without_the_device_library_in_an_fhs_path_is_an_error():
    (f,) = fired("rocm-device-libs-not-found", recorded_paste_facts("llvm-55989-rocm-device-lib-fhs-path.txt"))
    assert f.severity == "error" and "clang found no ROCm device library (line 7:" in f.message
    assert f.fix.startswith("find / -xdev -name 'ocml.bc'") and "export HIP_DEVICE_LIB_PATH=" in f.fix


def test_the_users_own_words_are_only_info():
    # legacy-rocm-build#2051: a RISC-V ROCm build; the paste says it in words, clang's line is not there
    (f,) = fired("rocm-device-libs-not-found", told_facts((SET_N / "legacy-rocm-build-2051-device-libs-path-riscv.txt").read_text()))
    assert f.severity == "info" and "the user says hipcc does not find the ROCm device library" in f.message


def test_a_missing_rocm_installation_and_a_tensile_error_are_not_this():
    # clang 11's installation-wide message (hip#2086) and rocBLAS's run-time Tensile error are other facts
    assert not fired("rocm-device-libs-not-found", recorded_paste_facts("hip-2086-clang-11-no-rocm-installation.txt"))
    assert not fired("rocm-device-libs-not-found", recorded_paste_facts("rocmlibs-gfx1103-12-could-not-load-tensile.txt"))
