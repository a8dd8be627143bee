"""x86-build-flags-on-arm on set Q's paste and another public paste, and at info only where nothing names
the machine (a healthy control of set Q), through the real catalogue and paste path."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, option, machine", [
    ("hpipm-91-x86-avx-target-on-arm.txt", "-mavx", "Cortex-A57"),
    ("erlexec-175-mavx2-on-aarch64.txt", "-mavx2", "arm64"),
])
def test_an_x86_option_on_a_named_arm_machine_is_an_error(paste, option, machine):
    (f,) = fired("x86-build-flags-on-arm", recorded_paste_facts(paste))
    assert f.severity == "error" and option in f.message and machine in f.message
    assert f.fix.startswith("uname -m") and "-mcpu=native" in f.fix


def test_a_refusal_with_no_machine_named_is_only_a_hint():
    # Blosc.jl's build probes -mavx2 and prints cc1's refusal: harmless (the maintainer)
    (f,) = fired("x86-build-flags-on-arm", recorded_paste_facts("blosc-jl-30-avx2-probe-message-harmless-healthy.txt"))
    assert f.severity == "info" and "probes" in f.message


def test_an_arm_option_refused_is_not_an_x86_flag():
    # neatvnc#7 (verbatim line): -mfpu=neon is 32-bit Arm's option, refused by an aarch64 gcc: not this rule
    text = "gcc: error: unrecognized command line option '-mfpu=neon'\n"
    assert "target_options:gcc-unrecognized-option" in {s["id"] for s in find_messages(text)}
    assert not fired("x86-build-flags-on-arm", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def test_another_vendors_m_options_are_not_read_as_target_options():
    # recorded (tests/fixtures/pastes/gcc-12-gfortran-refuses-intel-options.txt): gfortran refusing
    # Intel's -module; -mp and -mkl are NVIDIA's and Intel's (knowledge/compiler_vendor_options.toml).
    for option in ("-module", "-mp", "-mkl", "-mkl=parallel"):
        ids = {s["id"] for s in find_messages(f"gfortran: error: unrecognized command-line option '{option}'\n")}
        assert "target_options:gcc-unrecognized-option" not in ids, (option, ids)
        assert "compiler_options:gcc-unrecognized-option" in ids, (option, ids)
    for option in ("-mavx2", "-mpopcnt", "-mmodule-like"):
        ids = {s["id"] for s in find_messages(f"gcc: error: unrecognized command-line option '{option}'\n")}
        assert "target_options:gcc-unrecognized-option" in ids, (option, ids)
