"""nccl-shm-unusable's docker hint: NCCL's bare "unhandled system error" in a container whose
/dev/shm is docker's default (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_unhandled_system_error_in_docker_is_a_warning_with_shm_size():
    (f,) = fired("nccl-shm-unusable", recorded_paste_facts("xorbits-inference-2836-docker-shm-too-small.txt"))
    assert f.severity == "warning" and "64 MB" in f.message and "[x] docker" in f.message
    assert "--shm-size" in f.fix and "NCCL_DEBUG=INFO" in f.fix


def test_silent_where_the_container_already_has_a_larger_shm():
    # the reporter ran with ipc=host and --shm-size and it still failed: docker's default is not the cause
    assert fired("nccl-shm-unusable", recorded_paste_facts("vllm-10523-shm-size-set-still-fails.txt")) == []
