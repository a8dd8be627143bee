"""framework-missing-arch for PaddlePaddle's own warning that its wheel has no kernels for the GPU, on
set AI's real ticket (Paddle#58241: a Maxwell GPU, a wheel built for 70 75 80 86, comparisons wrong on
the GPU), and nothing from Paddle's ordinary device note alone."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts

NAME = "paddle-58241-maxwell-not-in-wheel-arch-list"


def test_the_wheels_arch_list_and_the_gpus_capability_are_named(tmp_path):
    text = (FIXTURES / "tickets_blind_ai" / f"{NAME}.txt").read_text(encoding="utf-8")
    (f,) = fired("framework-missing-arch", paste_facts(tmp_path, text, NAME + ".txt"))
    assert "PaddlePaddle wheel has no kernels for this Maxwell GPU (compute capability 5.0)" in f.message
    assert "built for 70 75 80 86" in f.message and "nvidia-smi --query-gpu=name,compute_cap" in f.fix


def test_paddles_device_note_alone_is_no_finding(tmp_path):
    text = (FIXTURES / "tickets_blind_ai" / f"{NAME}.txt").read_text(encoding="utf-8")
    kept = "\n".join(line for line in text.splitlines() if "not compatible with Paddle" not in line)
    assert not fired("framework-missing-arch", paste_facts(tmp_path, kept, "note.txt"))
