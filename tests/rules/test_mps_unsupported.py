"""mps-unsupported-cuda-feature (GPU046) on set AG's PG-Strom paste, silent where MPS is shown without
a CUDA refusal and where the refusal comes without MPS (tests/fixtures/pastes/SOURCES.md), through the
real catalogue (knowledge/messages/mps.toml, cuda.toml, cuda_driver.toml)."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts


def test_module_load_refused_under_mps_names_dynamic_parallelism():
    (f,) = fired("mps-unsupported-cuda-feature", recorded_paste_facts("pg-strom-348-mps-no-dynamic-parallelism.txt"))
    assert f.severity == "error" and "CUDA_ERROR_NOT_SUPPORTED" in f.message
    assert "dynamic parallelism" in f.message and "stream callbacks" in f.message
    assert "echo quit | nvidia-cuda-mps-control" in f.fix and f.evidence["mps.message"] == "mps:server-process"


def test_mps_running_without_a_cuda_refusal_is_silent():
    assert not fired("mps-unsupported-cuda-feature",
                     recorded_paste_facts("k8s-device-plugin-762-mps-control-daemon-started.txt"))


def test_the_refusal_without_mps_is_silent(tmp_path):
    # PG-Strom's own format (cuda_program.c: "failed on %s:%s - %s") filled in: no public paste holds
    # the error without MPS beside it
    text = "ERROR:(cuda_program.c:1410) failed on cuModuleLoadData:CUDA_ERROR_NOT_SUPPORTED - operation not supported\n"
    assert not fired("mps-unsupported-cuda-feature", paste_facts(tmp_path, text))


def test_cuda_12_dynamic_parallelism_error_beside_the_mps_log(tmp_path):
    # the runtime's cudaGetErrorName for 811 and the MPS documentation's server.log line, filled in:
    # no public paste holds both
    text = ("[2013-08-05 13:00:09.269 Server 13929] New client 14781 connected\n"
            "CUDA error: cudaErrorCdpNotSupported\n")
    (f,) = fired("mps-unsupported-cuda-feature", paste_facts(tmp_path, text))
    assert "dynamic parallelism" in f.message
