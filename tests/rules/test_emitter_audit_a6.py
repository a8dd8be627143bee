"""Issue 24 audit of gpu-memory-in-use and bf16-unsupported: emitters they did not read yet, each on a
real paste (tests/fixtures/pastes/SOURCES.md), with a near miss where the same words mean something else.
vLLM's "Error in memory profiling" (vllm/v1/worker/gpu_worker.py, vllm-ascend's NPU copy) and xFormers'
"bf16 is only supported on A100+ GPUs" (xformers/ops/fmha/common.py); sources in
knowledge/messages/frameworks.toml."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts, run_rule

PASTES = FIXTURES / "pastes"


def _facts(tmp_path, name):
    return paste_facts(tmp_path, (PASTES / name).read_text(encoding="utf-8"), name)


@pytest.mark.parametrize("name, before, after, device", [
    # vLLM 0.29's wording, figures in GiB, wrapped over three lines by the reporter
    ("vllm-56830-memory-profiling-free-memory-grew.txt", "82.94 GiB", "90.17 GiB", "GPU"),
    # vllm-ascend 0.7.1's wording, figures in bytes, beside a colocated GRPO trainer
    ("ms-swift-3241-vllm-memory-profiling-npu.txt", "58247258112 bytes", "58247516160 bytes", "NPU"),
])
def test_vllm_profiling_that_saw_memory_freed_names_a_co_tenant(tmp_path, name, before, after, device):
    (f,) = fired("gpu-memory-in-use", _facts(tmp_path, name))
    assert f.severity == "warning"
    assert f"{before} free on the {device} before it, {after} after" in f.message
    assert "another process sharing the" in f.message
    assert ("npu-smi info" in f.fix) == (device == "NPU") and ("nvidia-smi" in f.fix) == (device == "GPU")


def test_vllm_profiling_with_equal_figures_is_not_a_co_tenant(tmp_path):
    # XPU: before and after were the same (30.3 GiB); vLLM's strict comparison was the bug (PR #33358)
    findings, _ = run_rule("gpu-memory-in-use", _facts(tmp_path, "vllm-33358-xpu-memory-profiling-equal-figures.txt"))
    assert findings == []


@pytest.mark.parametrize("name, line", [
    ("x-flux-comfyui-24-xformers-bf16-a100-only.txt", 11),
    ("deepseek-vl2-119-xformers-bf16-a100-only.txt", 10),
    ("pulid-115-xformers-bf16-tesla-p40.txt", 9),
])
def test_xformers_bf16_refusal_is_bf16_unsupported(tmp_path, name, line):
    (f,) = fired("bf16-unsupported", _facts(tmp_path, name))
    assert f.message.startswith("xFormers' memory_efficient_attention refused bf16")
    assert "compute capability 8.0" in f.message and f"(line {line})" in f.message
    assert "torch.float16" in f.fix and "is_bf16_supported" not in f.message


def test_xformers_refusing_fp16_on_a_new_gpu_is_not_bf16(tmp_path):
    # the same "No operator found" listing, fp16 inputs on a capability 12.0 GPU: no bf16 asked for
    findings, _ = run_rule("bf16-unsupported", _facts(tmp_path, "comfyui-11602-xformers-fp16-gpu-too-new.txt"))
    assert findings == []


@pytest.mark.parametrize("name, line", [
    ("deepspeed-3947-triton-ptxas-bf16-sm80.txt", 4),          # Triton 2.x, "Feature '.bf16'"
    ("lightllm-1029-ptxas-cvt-bf16-sm80-v100.txt", 1),         # "cvt with .f32.bf16", on a V100
    ("llamafactory-7417-ptxas-cvt-bf16-f32.txt", 1),           # later ptxas' "cvt.bf16.f32"
])
def test_ptxas_refusing_bf16_for_the_gpu_is_bf16_unsupported(tmp_path, name, line):
    (f,) = fired("bf16-unsupported", _facts(tmp_path, name))
    assert f.message.startswith("ptxas, assembling a kernel") and f"(line {line})" in f.message
    assert "sm_80" in f.message and "torch.float16" in f.fix


def test_ptxas_refusing_volta_instructions_is_not_bf16(tmp_path):
    findings, _ = run_rule("bf16-unsupported", _facts(tmp_path, "triton-583-ptxas-mma-requires-sm70.txt"))
    assert findings == []


def test_ptxas_refusing_mma_inside_triton_is_a_gpu_too_old_for_triton(tmp_path):
    (f,) = fired("triton-gpu-too-old", _facts(tmp_path, "triton-583-ptxas-mma-requires-sm70.txt"))
    assert f.severity == "warning" and "'mma', which needs sm_70 (line 3)" in f.message
    assert "TORCH_COMPILE_DISABLE=1" in f.fix


@pytest.mark.parametrize("name", [
    "fastertransformer-250-nvcc-sm61-release-requires-sm70.txt",   # an nvcc build's target list, not Triton
    "deepspeed-3947-triton-ptxas-bf16-sm80.txt",                  # Triton on a 7.x GPU: bf16's, not Triton's floor
])
def test_ptxas_refusals_that_are_not_tritons_floor_stay_silent(tmp_path, name):
    findings, _ = run_rule("triton-gpu-too-old", _facts(tmp_path, name))
    assert findings == []
