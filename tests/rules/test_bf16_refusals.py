"""bf16-unsupported reading each framework's own refusal of bf16 (knowledge/messages/frameworks.toml):
accelerate's on a real ticket of blind set D, DeepSpeed's and torch.autocast's as their sources raise
them, each answered with that framework's fp16 setting."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, run_rule


def test_accelerates_refusal_is_answered_with_its_fp16_setting(tmp_path):
    name = "kohya-trainer-246-bf16-requires-supported-device"
    text = (FIXTURES / "tickets_blind_d" / f"{name}.txt").read_text(encoding="utf-8")
    (f,) = fired("bf16-unsupported", paste_facts(tmp_path, text, name + ".txt"))
    assert f.message.startswith("accelerate refused bf16") and 'Accelerator(mixed_precision="fp16")' in f.fix


def test_deepspeeds_and_autocasts_refusals_name_their_own_settings(tmp_path):
    (f,) = fired("bf16-unsupported", paste_facts(tmp_path, "ValueError: Type bf16 is not supported on your device.\n"))
    assert f.message.startswith("DeepSpeed refused bf16") and '"bf16": {"enabled": False}' in f.fix
    text = "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.\n"
    (f,) = fired("bf16-unsupported", paste_facts(tmp_path, text))
    assert f.message.startswith("torch.autocast refused bf16") and "dtype=torch.float16" in f.fix


def test_transformers_refusal_for_want_of_torch_is_not_the_gpus(tmp_path):
    text = "ValueError: Your setup doesn't support bf16/(cpu, tpu, neuroncore). You need torch>=1.10\n"
    findings, _skipped = run_rule("bf16-unsupported", paste_facts(tmp_path, text))
    assert not findings
