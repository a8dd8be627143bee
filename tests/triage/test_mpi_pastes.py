"""MPI launchers' and transports' own messages (issue 24: knowledge/messages/openmpi.toml,
slurm_mpi.toml, ucx.toml, mpich.toml) read end to end on real pastes (fixtures/pastes/SOURCES.md):
what the thread established fires with a command that runs, and a rank killed by a signal, which
names no cause by itself, raises no alarm."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from

PASTES = FIXTURES / "pastes"
ALARM = ("error", "warning")


def findings(name: str) -> dict:
    run = check_from(PASTES / name)
    assert run["doc"] is not None, run["stderr"]
    return {f["symbol"]: f for f in run["doc"]["findings"]}


@pytest.mark.parametrize("name, symbol, first_command", [
    ("grudge-227-openmpi-not-enough-slots-ci.txt", "mpi-not-enough-slots", "mpirun --display-allocation"),
    ("ompi-10940-srun-direct-launch-without-pmi.txt", "mpi-srun-without-pmi", "srun --mpi=list"),
    ("geos-chem-822-srun-mpi-pmix-plugin-missing.txt", "mpi-srun-without-pmi", "srun --mpi=list"),
    ("executorlib-761-slurm-pmix-cannot-load-library.txt", "mpi-srun-without-pmi", "srun --mpi=list"),
    ("ucx-8684-ibv-create-cq-memlock-64kb.txt", "mpi-memlock-limit", "docker run --ulimit memlock=-1"),
    ("baselines-325-openmpi-binding-overload-4-cores.txt", "mpi-binding-overload", "lscpu"),
])
def test_the_threads_diagnosis_fires_with_a_runnable_command(name, symbol, first_command):
    got = findings(name)
    assert got[symbol]["severity"] == "error"
    assert got[symbol]["fix"].startswith(first_command)


@pytest.mark.parametrize("name", ["ompi-2661-mpirun-rank-killed-signal9.txt", "jukebox-155-hydra-bad-termination-signal9.txt",
                                  "prrte-671-binding-overload-zero-cpus.txt"])
def test_a_rank_killed_by_a_signal_raises_no_alarm(name):
    got = findings(name)
    assert not [s for s, f in got.items() if f["severity"] in ALARM], got
