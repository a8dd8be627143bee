"""Users' words set H showed unread (set H was unsealed after its final sealed score): SIGILL retold
in lower case, and "installs the CPU version instead of CUDA" beside a conda PyTorch install. Each
on H's own paste, and silent where the words are CUDA's or the install is not PyTorch's."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, run_rule
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import open_paste

SET_H = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_h"
JETSON = "jetson-inference-1023-numpy-1-19-5-illegal-instruction-nano.txt"
HOIST = "hoistformer-3-conda-installs-cpu-torch.txt"


def _facts(name):
    with open_paste([str(SET_H / name)]) as (root, _r, _n):
        return pipeline.gather(root, Options())


def test_illegal_instruction_retold_is_a_sigill_hint():
    (f,) = fired("cpu-lacks-required-isa", _facts(JETSON))
    assert f.severity == "info" and "CPU-detection bug" in f.message


def test_cudas_illegal_instruction_is_not_a_sigill():
    line = next(ln for ln in (SET_H / JETSON).read_text().splitlines() if "illegal instruction" in ln)
    assert [s["id"] for s in find_messages(line) if s["id"] == "prose:illegal-instruction-said"]
    gpu = line.replace("illegal instruction", "an illegal instruction was encountered")
    assert not [s for s in find_messages(gpu) if s["id"] == "prose:illegal-instruction-said"]


def test_cpu_version_installed_beside_a_conda_pytorch_install():
    (f,) = fired("torch-cpu-only", _facts(HOIST))
    assert f.severity == "warning" and "PyTorch install gave the CPU build" in f.message


def test_the_words_alone_name_no_framework(tmp_path):
    line = next(ln for ln in (SET_H / HOIST).read_text().splitlines() if "instead of" in ln)
    findings, _skipped = run_rule("torch-cpu-only", paste_facts(tmp_path, line + "\n"))
    assert not findings


def test_a_gpu_written_without_its_space_is_named():
    from hpcdoctor.triage.known_text import find_gpu_names

    text = (SET_H / "tiny-cuda-nn-239-nvcc-11-3-rtx4090-compute-89.txt").read_text()
    assert [(g["gpu"], g["cc"]) for g in find_gpu_names(text)] == [("RTX 4090", "8.9")]
