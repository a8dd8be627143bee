"""gfortran-argument-mismatch on set Q's paste and another public paste of the same class, and silent on
the same words as warnings (tests/fixtures/pastes/SOURCES.md), through the real catalogue."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste, quoted", [
    ("mf-lbm-15-gfortran10-argument-mismatch.txt", "(INTEGER(1)/INTEGER(4))"),
    ("camb-96-gfortran10-rank-mismatch-dgesdd.txt", "(scalar and rank-1)"),
])
def test_a_mismatch_between_two_calls_is_the_gcc10_error(paste, quoted):
    (f,) = fired("gfortran-argument-mismatch", recorded_paste_facts(paste))
    assert f.severity == "error" and quoted in f.message and "-fallow-argument-mismatch" in f.message
    assert "-fallow-argument-mismatch" in f.fix and "mpi_f08" in f.fix


def test_the_same_words_as_a_warning_are_silent():
    # built with -fallow-argument-mismatch: gfortran warns and the build goes on
    assert not fired("gfortran-argument-mismatch", recorded_paste_facts("butterflypack-12-rank-mismatch-warning.txt"))
