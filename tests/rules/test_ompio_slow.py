"""ompi-ompio-slow-on-parallel-fs on public tickets (tests/fixtures/pastes, SOURCES.md there): a user
naming OMPIO beside slow or hanging MPI-IO is answered at info with ROMIO selected; silent where OMPIO
is only named."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste", ["puffin-87-ompio-slow-parallel-hdf5-on-shared-fs.txt",
                                   "ompi-9479-ompio-hangs-shared-file-lustre.txt"])
def test_slow_or_hanging_ompio_is_info_with_romio(paste):
    (f,) = fired("ompi-ompio-slow-on-parallel-fs", recorded_paste_facts(paste))
    assert f.severity == "info" and "OMPIO is Open MPI's default io component" in f.message
    assert "export OMPI_MCA_io=^ompio" in f.fix and f.fix.startswith("ompi_info")


def test_ompio_merely_selected_is_silent():
    # BLAST-WarpX/warpx#3264's Lassen job script line: OMPIO chosen, nothing said of speed
    text = "export OMPI_MCA_io=ompio\n"
    assert not fired("ompi-ompio-slow-on-parallel-fs", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert not fired("ompi-ompio-slow-on-parallel-fs", recorded_paste_facts("ndsl-184-mpi4py-suspicious-mpiexec.txt"))
