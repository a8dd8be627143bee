"""Rules that read torch's and NCCL's own words where no report names the node's state: the
CPU-only build ("Torch not compiled with CUDA enabled"), CUDA's unknown error at start-up, and
NCCL's internal error. The pastes are real tickets of the blind work set
(tests/fixtures/tickets_blind_a/, scored before these rules existed), read in-process."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts

WORK_SET = FIXTURES / "tickets_blind_a"


def _ticket(tmp_path, name: str):
    return paste_facts(tmp_path, (WORK_SET / f"{name}.txt").read_text(encoding="utf-8"), name + ".txt")


def test_torch_not_compiled_with_cuda_without_a_gpu_listing_is_a_warning(tmp_path):
    (f,) = fired("torch-cpu-only", _ticket(tmp_path, "detectron2-460-torch-not-compiled-cuda"))
    assert f.severity == "warning" and "CPU-only build" in f.message and "torch.version.cuda" in f.fix


def test_torch_not_compiled_beside_a_listing_without_gpus_is_no_fault(tmp_path):
    g = _ticket(tmp_path, "detectron2-460-torch-not-compiled-cuda")
    g["facts"]["gpus"] = []  # as a report that lists the machine's GPUs, and none, gives it
    assert not fired("torch-cpu-only", g)


def test_cuda_unknown_error_at_start_up_is_the_drivers_state(tmp_path):
    (f,) = fired("gpu-driver-unusable", _ticket(tmp_path, "pytorch-159954-cuda-unknown-error-nvidia-uvm"))
    assert "nvidia_uvm" in f.message and "modprobe -r nvidia_uvm" in f.fix


def test_nccl_internal_error_without_its_cause_asks_for_the_debug_log(tmp_path):
    (f,) = fired("nccl-system-error", _ticket(tmp_path, "nccl-tests-219-internal-error-ifname-differs-title"))
    assert "'internal error'" in f.message and "NCCL_DEBUG=INFO" in f.fix


def test_a_lower_cased_retyped_message_is_still_read(tmp_path):
    (f,) = fired("shm-too-small", _ticket(tmp_path, "mmdetection-6993-bus-error-shm-no-docker"))
    assert "bus error" in f.message
