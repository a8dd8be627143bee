"""torch-cpu-only from the user's own words that the torch installed is the CPU build (prose.toml
torch-cpu-build-said), on blind set D's real manga-translator ticket (Chinese text), and not on set
B's healthy control whose user has no GPU at all."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _ticket(tmp_path, corpus: str, name: str):
    return paste_facts(tmp_path, (FIXTURES / corpus / f"{name}.txt").read_text(encoding="utf-8"), name + ".txt")


def test_the_user_saying_torch_is_the_cpu_version_is_a_warning_to_check_the_build(tmp_path):
    (f,) = fired("torch-cpu-only", _ticket(tmp_path, "tickets_blind_d", "manga-translator-210-requirements-install-cpu-torch"))
    assert f.severity == "warning" and f.message.startswith("the user says torch is a CPU-only build")
    assert "torch.version.cuda" in f.fix


def test_a_cpu_only_torch_on_a_machine_without_a_gpu_is_no_fault(tmp_path):
    assert not fired("torch-cpu-only", _ticket(tmp_path, "tickets_blind_b", "neuralrgbd-24-cpu-torch-no-gpu-healthy"))
