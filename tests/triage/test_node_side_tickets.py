"""The node and scheduler side of triage (issue 24, set C): Slurm's refusals of a GPU request and
its drained nodes, read through knowledge/messages/slurm.toml. The Slurm pastes are real outputs
of a real Slurm 22.05.8 (fixtures/pastes/SOURCES.md says how each was made)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from

PASTES = FIXTURES / "pastes"


def symbols_of(name: str) -> dict:
    run = check_from(PASTES / f"{name}.txt")
    assert run["doc"] is not None, run["stderr"]
    return {f["symbol"]: f for f in run["doc"]["findings"]}


@pytest.mark.parametrize("name", ["slurm-22.05-no-grestypes-gpu-requests", "slurm-22.05-grestypes-gpu-node-without-gpus"])
def test_a_refused_gpu_request_is_the_request_not_the_node(name):
    found = symbols_of(name)
    hit = found["slurm-gpu-request-rejected"]
    assert "sinfo -o" in hit["fix"]
    assert not {"gpu-driver-unusable", "gpu-count-mismatch", "slurm-gres-count-mismatch"} & set(found)


def test_node_configuration_unavailable_needs_a_gpu_request_in_the_paste(tmp_path):
    # the same refusal for a job too large in CPUs or memory is not about GPUs
    lines = [l for l in (PASTES / "slurm-22.05-grestypes-gpu-node-without-gpus.txt").read_text().splitlines()
             if "Requested node configuration" in l]
    bare = tmp_path / "cpus.txt"
    bare.write_text("$ srun -n 64 true\n" + lines[0] + "\n")
    run = check_from(bare)
    assert run["doc"] is not None, run["stderr"]
    assert "slurm-gpu-request-rejected" not in {f["symbol"] for f in run["doc"]["findings"]}
    asked = tmp_path / "gpus.txt"
    asked.write_text("$ srun --gpus-per-node=1 true\n" + lines[0] + "\n")
    run = check_from(asked)
    assert "slurm-gpu-request-rejected" in {f["symbol"] for f in run["doc"]["findings"]}


def test_a_drained_node_that_reported_fewer_gpus():
    found = symbols_of("slurm-22.05-gres-count-reported-lower-drain")
    hit = found["slurm-gres-count-mismatch"]
    assert "reported 0 gres/gpu where slurm.conf configures 2" in hit["message"]
    assert "slurmd -G" in hit["fix"] and "state=resume" in hit["fix"]
    assert "slurm-gpu-request-rejected" not in found
