"""torch-cuda-build-on-amd: the mirror of torch-rocm-build-on-nvidia, on a recorded node's facts with
its GPU made AMD, and on a public ticket (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

AMD = {"gpus.0.vendor": "amd", "gpus.0.name": "AMD Instinct MI210"}


def test_a_cuda_build_on_an_amd_node():
    g = facts("h100-kvm-1gpu", **AMD)
    assert g["facts"]["torch"]["build"] == "cuda"
    (f,) = fired("torch-cuda-build-on-amd", g)
    assert f.severity == "error" and "is a CUDA build" in f.message and "AMD Instinct MI210" in f.message
    assert "--index-url https://download.pytorch.org/whl/rocm7.2" in f.fix


def test_the_same_build_on_its_nvidia_gpu_or_a_rocm_build_on_amd_is_silent():
    assert not fired("torch-cuda-build-on-amd", facts("h100-kvm-1gpu"))
    assert not fired("torch-cuda-build-on-amd", facts("h100-kvm-1gpu", **AMD, **{"torch.build": "rocm"}))


def test_an_amd_gpu_and_a_job_on_the_cpu_in_the_users_words_is_the_usual_cause():
    (f,) = fired("torch-cuda-build-on-amd", recorded_paste_facts("invokeai-7251-rocm-image-ships-cuda-torch.txt"))
    assert f.severity == "info" and "AMD (ROCm)" in f.message and "torch.version.hip" in f.fix


def test_either_statement_alone_fires_nothing():
    told = lambda text: facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text), "gpus": []})
    assert not fired("torch-cuda-build-on-amd", told("### GPU vendor\n\nAMD (ROCm)\n\n### GPU model\n\nRX 7900 XTX\n"))
    assert not fired("torch-cuda-build-on-amd", told("the container is using the cpu instead of the gpu\n"))
