"""mpi-run-as-root (rules/mpi_root.py): Open MPI 4.1.6's refusal recorded on an H100 (fixtures/emitters_gpu),
the 2.x-3.0 wording from a Docker user's ticket (nelson#236), and silence where mpirun ran as root with
--allow-run-as-root (nccl-tests#188; tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, tool", [("../emitters_gpu/h100-mpirun-as-root.txt", "mpirun"),
                                         ("nelson-236-mpiexec-run-as-root-docker.txt", "mpiexec")])
def test_refusal_to_run_as_root_is_an_error(paste, tool):
    (f,) = fired("mpi-run-as-root", recorded_paste_facts(paste))
    assert f.severity == "error" and f"{tool} has detected an attempt to run as root" in f.message
    assert "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1" in f.fix and "id -u" in f.fix


def test_the_refusal_is_not_read_as_a_gpu_that_works_only_for_root():
    # "Running as root is *strongly* discouraged" is Open MPI's banner, not a user's report of a device permission
    text = (PASTES.parent / "emitters_gpu" / "h100-mpirun-as-root.txt").read_text()
    assert [s["id"] for s in find_messages(text)] == ["openmpi:run-as-root-refused"]
    for symbol in ("gpu-device-permission-denied", "rocm-kfd-permission-denied"):
        findings, _ = run_rule(symbol, recorded_paste_facts("../emitters_gpu/h100-mpirun-as-root.txt"))
        assert findings == []


def test_silent_when_mpirun_runs_as_root_with_the_override():
    assert not fired("mpi-run-as-root", recorded_paste_facts("nccl-tests-188-mpirun-allow-run-as-root-openib.txt"))
