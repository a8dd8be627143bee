"""framework-missing-arch, not torch-missing-arch, for CUDA's "no kernel image" raised by ggml's own
CUDA check (llama.cpp), on set AI's real paste (a DGX Spark recipe's llama.cpp server); torch's own
wording without ggml's place line stays torch-missing-arch's."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, run_rule

NAME = "qwen35-dgx-spark-3-llama-cpp-no-kernel-image"


def _text() -> str:
    return (FIXTURES / "tickets_blind_ai" / f"{NAME}.txt").read_text(encoding="utf-8")


def test_ggmls_check_makes_it_llama_cpps_build_and_the_fix_rebuilds_it(tmp_path):
    facts = paste_facts(tmp_path, _text(), NAME + ".txt")
    (f,) = fired("framework-missing-arch", facts)
    assert "ggml's (llama.cpp's) CUDA build has no code for this GPU" in f.message and "SCALE kernel" in f.message
    assert "-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native" in f.fix
    # torch-missing-arch finds nothing of its own here: it is not judged (no torch recorded), not fired
    findings, _skipped = run_rule("torch-missing-arch", facts)
    assert not findings


def test_the_same_words_without_ggmls_place_line_are_torchs(tmp_path):
    kept = "\n".join(line for line in _text().splitlines() if "current device:" not in line and "ggml" not in line)
    facts = paste_facts(tmp_path, kept, "torch.txt")
    assert fired("torch-missing-arch", facts)
    assert not fired("framework-missing-arch", facts)
