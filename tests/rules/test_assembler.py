"""assembler-too-old on real public pastes (tests/fixtures/pastes/SOURCES.md and set U): GNU as refusing
BMI2's shlx/shrx that gcc emitted for -march=native, with GNU's backquote or plain quotes; silent on an
old assembler refusing an old mnemonic (xz's movzw), which no newer extension explains."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts, told_paste_facts

SET_U = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_u"


@pytest.mark.parametrize("name, mnemonic", [
    ("cryptopp-495-assembler-too-old-for-march-native.txt", "shrx"),
    ("ra-5-outdated-assembler-on-node.txt", "shlx"),
])
def test_set_u_pastes_name_bmi2(tmp_path, name, mnemonic):
    (f,) = fired("assembler-too-old", paste_facts(tmp_path, (SET_U / name).read_text()))
    assert f.severity == "error" and f"does not know {mnemonic}" in f.message and "BMI2" in f.message
    assert "-mno-bmi2" in f.fix and "module avail binutils" in f.fix and "conda install -c conda-forge binutils" in f.fix


@pytest.mark.parametrize("paste", ["openblas-4374-shlx-centos6-old-binutils.txt",
                                   "gyre-11-shlx-ascii-quotes-march-native.txt"])
def test_other_threads_of_the_same_fault(paste):
    (f,) = fired("assembler-too-old", recorded_paste_facts(paste))
    assert "shlx" in f.message and "BMI2" in f.message and "predates" in f.message


def test_each_extension_is_named_with_its_release_where_gas_news_gives_one():
    # GNU as 2.40's own refusal format (tc-i386.c), the mnemonic of AMX-BF16 (gas/NEWS 2.36)
    (f,) = fired("assembler-too-old", told_facts("x.s:12: Error: no such instruction: `tdpbf16ps %tmm0,%tmm1,%tmm2'\n"))
    assert "AMX-BF16" in f.message and "binutils 2.36" in f.message and "-mno-amx-bf16" in f.fix
    (f,) = fired("assembler-too-old", told_facts("x.s:7: Error: bad register name `%zmm16'\n"))
    assert "AVX-512" in f.message and "%zmm16" in f.message


def test_silent_on_an_old_mnemonic_an_old_assembler_refuses():
    # the paste path refuses it (nothing in it is read): its messages, read as a ticket, fire nothing
    assert not fired("assembler-too-old", told_paste_facts("xz-121-movzw-old-binutils-not-newer-isa.txt"))


def test_silent_on_gas_told_a_narrower_march():
    # GNU as 2.40 on the development VM: the extension is known, the -march given to as lacks it
    assert not fired("assembler-too-old", told_facts("t.s:1: Error: `shlx' is not supported on `corei7'\n"))
