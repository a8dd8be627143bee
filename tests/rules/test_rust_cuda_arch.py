"""framework-missing-arch for a non-Python CUDA program: a Rust CUDA binding's NoBinaryForGpu (the
driver's CUDA_ERROR_NO_BINARY_FOR_GPU, read by cuda_rust.toml) on a public paste (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_rusts_no_binary_for_gpu_is_the_programs_missing_arch():
    (f,) = fired("framework-missing-arch", recorded_paste_facts("rust-gpu-tools-79-fatbin-lacks-k80-arch.txt"))
    assert "Tesla K80, compute capability 3.7" in f.message and "NoBinaryForGpu" in f.message, f.message
    assert f.fix.startswith("nvidia-smi --query-gpu=name,compute_cap") and "cuobjdump --list-elf" in f.fix


def test_hips_enum_name_is_not_rusts():
    # hipErrorNoBinaryForGpu holds the words inside a longer name: not this entry
    text = "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\n"
    ids = {s["id"] for s in find_messages(text)}
    assert not any(i.startswith("cuda_rust:") for i in ids), ids
    assert not fired("framework-missing-arch", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
