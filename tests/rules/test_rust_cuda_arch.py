"""framework-missing-arch for a non-Python CUDA program: a Rust CUDA binding's NoBinaryForGpu (the
driver's CUDA_ERROR_NO_BINARY_FOR_GPU) on a public paste (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_rusts_no_binary_for_gpu_is_the_programs_missing_arch():
    (f,) = fired("framework-missing-arch", recorded_paste_facts("rust-gpu-tools-79-fatbin-lacks-k80-arch.txt"))
    assert "NoBinaryForGpu is the driver's CUDA_ERROR_NO_BINARY_FOR_GPU" in f.message and "Tesla K80" in f.message
    assert f.fix.startswith("nvidia-smi --query-gpu=name,compute_cap") and "cuobjdump --list-elf" in f.fix


def test_hips_enum_name_is_not_rusts():
    # hipErrorNoBinaryForGpu holds the words inside a longer name: not this entry
    text = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n"
    ids = {s["id"] for s in find_messages(text)}
    assert "frameworks:rust-cuda-no-binary-for-gpu" not in ids
    assert not fired("framework-missing-arch", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
