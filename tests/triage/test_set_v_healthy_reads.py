"""Set V's healthy controls that were refused as unreadable (issue 24: never refuse what was read):
Open MPI's fork warning and a GROMACS fatal error are read now, each without an alarm."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import alarms, report_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("path, read", [
    # Open MPI's fork warning in its older wording ("An MPI process has executed ..."), set V (unsealed)
    (FIXTURES / "tickets_blind_v" / "underworld2-223-openmpi-fork-warning-ignorable-healthy.txt", "openmpi opal_init:warn-fork"),
    # the older wording again, and the newer one ("A process has executed ...") above "Test Passed!"
    (FIXTURES / "pastes" / "montepython-21-openmpi-warn-fork-old-wording.txt", "openmpi opal_init:warn-fork"),
    (FIXTURES / "pastes" / "nccl-65-openmpi-warn-fork-harmless.txt", "openmpi opal_init:warn-fork"),
    # GROMACS's fatal-error block (errorformat.cpp): a user's input error, quoted back as GROMACS's
    (FIXTURES / "tickets_blind_v" / "gmx-tutorials-jpcb-1-met-terminus-choice-healthy.txt", "a GROMACS fatal error"),
])
def test_a_harmless_or_users_own_error_is_read_without_an_alarm(path, read):
    doc = report_of("check", "--from", str(path))
    assert any(read in r for r in doc["source"]["recognised"]), doc["source"]["recognised"]
    assert not alarms(path)


def test_the_fork_warning_says_how_to_silence_it():
    doc = report_of("check", "--from", str(FIXTURES / "pastes" / "nccl-65-openmpi-warn-fork-harmless.txt"))
    (line,) = [r for r in doc["source"]["recognised"] if "warn-fork" in r]
    assert "mpi_warn_on_fork 0" in line and "harmless unless the child uses MPI" in line
