"""mpich.toml: MPICH's (and Intel MPI's) "Fatal error in <function>: <class>, error stack:",
one entry per MPI error class, on a real paste (tests/fixtures/pastes) and MPICH's format string."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

PASTES = Path(__file__).resolve().parents[1] / "fixtures" / "pastes"


def test_intel_mpis_fatal_error_is_read_beside_its_own_cause():
    found = {s["id"]: s for s in find_messages((PASTES / "fds-5853-intel-mpi-cma-needs-ptrace.txt").read_text())}
    assert found["mpich:MPI_ERR_OTHER"]["function"] == "PMPI_Testall"
    assert found["mpich:MPI_ERR_OTHER"]["rules"] == []
    assert "intel_mpi:dcp-cannot-read-remote-process" in found   # the line that names the cause keeps its rule


@pytest.mark.parametrize("key", ["MPI_ERR_OTHER", "MPI_ERR_NO_MEM", "MPI_ERR_SPAWN", "MPI_ERR_TRUNCATE", "MPI_ERR_COMM"])
def test_every_class_message_is_read_in_mpichs_format(key):
    fam = next(f for f in messages.families() if f.id == "mpich")
    entry = next(e for e in fam.entries if e.key == key)
    text = f"Fatal error in PMPI_Send: {entry.get('message')}, error stack:\nPMPI_Send(157): MPI_Send(...) failed\n"
    assert f"mpich:{key}" in {s["id"] for s in find_messages(text)}


def test_prose_about_a_fatal_error_is_not_read():
    assert not any(s["id"].startswith("mpich:") for s in find_messages("I hit a fatal error in my MPI loop, any idea?\n"))
