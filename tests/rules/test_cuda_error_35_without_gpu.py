"""Set R's class of issue 24: CUDA error 35 where no GPU is there (cuda-build-on-node-without-gpu, not
driver-too-old), through the real catalogue and the paste path. Pastes are set R's and the public
ones in tests/fixtures/pastes/SOURCES.md; near misses from the same emitters stay silent."""

from __future__ import annotations


from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def _r(tmp_path, name):
    return paste_facts(tmp_path, (FIXTURES / "tickets_blind_r" / f"{name}.txt").read_text(encoding="utf-8"))


# -- CUDA error 35 where no GPU is there --------------------------------------------------------

def test_error_35_on_a_cpu_cluster_is_not_an_old_driver(tmp_path):
    gathered = _r(tmp_path, "paddle-14625-cuda-build-on-cpu-cluster")
    assert run_rule("driver-too-old", gathered)[0] == []
    (f,) = fired("cuda-build-on-node-without-gpu", gathered)
    assert f.severity == "warning" and "no NVIDIA driver is installed at all" in f.message and "\"CPU\"" in f.message
    assert "paddlepaddle-gpu" in f.fix and "nvidia-smi" in f.fix


def test_error_35_after_paddles_no_gpu_notice():
    gathered = recorded_paste_facts("paddle-12237-gpu-build-no-gpu-found-error-35.txt")
    assert run_rule("driver-too-old", gathered)[0] == []
    (f,) = fired("cuda-build-on-node-without-gpu", gathered)
    assert "Compiled with WITH_GPU, but no GPU found in runtime" in f.message


def test_error_35_with_nothing_said_of_the_gpu_stays_an_old_driver(tmp_path):
    gathered = _r(tmp_path, "cupy-9252-driver-older-than-cuda-runtime")
    assert not fired("cuda-build-on-node-without-gpu", gathered)
    assert [x.symbol for x in run_rule("driver-too-old", gathered)[0]] == ["driver-too-old"]
