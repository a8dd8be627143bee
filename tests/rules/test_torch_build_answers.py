"""torch-cpu-only from torch's own answers to "built with CUDA?" as a print, a REPL or a site's check
script shows them (knowledge/messages/prose.toml): recorded from a real CPU build, and a public ticket."""

from __future__ import annotations

from pathlib import Path

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import open_paste

SET_F = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_f"


def test_a_cpu_builds_own_answers_are_read():
    ids = {s["id"] for s in find_messages((PASTES / "vm-torch-cpu-build-answers.txt").read_text())}
    assert {"prose:torch-version-cuda-none", "prose:cuda-is-built-false"} <= ids
    (f,) = fired("torch-cpu-only", recorded_paste_facts("vm-torch-cpu-build-answers.txt"))
    # no GPU listing: a warning that names the build, without claiming the job asked for CUDA
    assert f.severity == "warning" and "torch.version.cuda is None" in f.message and "asked it for CUDA" not in f.message


def test_a_site_check_script_beside_nvidia_smi_is_an_error_with_the_build_to_install():
    # mila-docs#213 (set F, unsealed): "PyTorch built with CUDA: False" and nvidia-smi -q listing the GPU
    with open_paste([str(SET_F / "mila-docs-213-torch-built-without-cuda.txt")]) as (root, _r, _n):
        g = pipeline.gather(root, Options())
    (f,) = fired("torch-cpu-only", g)
    assert f.severity == "error" and "a check script prints that torch was built without CUDA" in f.message
    assert "1 GPU(s)" in f.message


def test_code_that_asks_the_question_is_not_an_answer():
    code = "if torch.version.cuda is None:\n    raise SystemExit\nassert torch.backends.cuda.is_built() == False\n"
    assert not [s for s in find_messages(code) if "torch-cpu-only" in (s.get("rules") or [])]
    # a collect_env of a CUDA build: judged, and silent
    assert not fired("torch-cpu-only", recorded_paste_facts("pytorch-51858-windows-gtx1050ti-cu117-healthy.txt"))
