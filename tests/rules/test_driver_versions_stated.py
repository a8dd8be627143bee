"""driver-too-old from the versions a ticket states, where no program's message names the fault:
the CUDA a build uses (torch.version.cuda in a REPL, a +cuXYZ wheel, conda's planned cudatoolkit)
against the driver the user or nvidia-smi's banner gives, through NVIDIA's minimum drivers
(knowledge/cuda.toml). Real pastes: tests/fixtures/pastes/SOURCES.md."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages


def test_conda_cudatoolkit_above_a_stated_driver_is_a_warning_with_the_toolkit_it_runs():
    (f,) = fired("driver-too-old", recorded_paste_facts("pytorch-11138-conda-cudatoolkit-92-with-driver-390.txt"))
    assert f.severity == "warning"
    assert "conda installs cudatoolkit 9.2" in f.message and "the driver is 390" in f.message
    assert "396.26" in f.message
    # the reporter's confirmed workaround: the newest toolkit driver 390 runs by NVIDIA's Table 3
    assert f.fix.startswith("conda install cudatoolkit=9.0")


def test_the_last_repl_answer_and_the_users_retyped_verdict():
    (f,) = fired("driver-too-old", recorded_paste_facts("pytorch-28195-torch-1-2-cu100-driver-too-old.txt"))
    assert f.severity == "warning"
    assert "torch.version.cuda answers 10.0 (line 23)" in f.message and "410.48" in f.message
    assert "my Nvidia version is too old" in f.message


def test_every_repl_answer_is_read_not_only_the_first_of_one_expression():
    text = open_paste_text("pytorch-28195-torch-1-2-cu100-driver-too-old.txt")
    answers = [s["cuda"] for s in find_messages(text) if s["id"] == "prose:torch-version-cuda-said"]
    assert answers == ["9.0", "10.0"]


def test_silent_where_the_stated_versions_fit():
    # torch 1.8.1+cu102 on driver 450.51.05: CUDA 10.2 needs 440.33
    findings, _ = run_rule("driver-too-old", recorded_paste_facts("pytorch-85332-cu102-on-driver-450-fits.txt"))
    assert findings == []


def test_a_driver_alone_or_a_build_alone_says_nothing():
    # mobileagent#60: nvidia-smi's banner (475.14) and no build named
    findings, _ = run_rule("driver-too-old", recorded_paste_facts(
        "../tickets_blind_b/mobileagent-60-torch-not-compiled-cuda-driver-475.txt"))
    assert findings == []


def open_paste_text(name):
    from pathlib import Path
    return (Path(__file__).parent.parent / "fixtures" / "pastes" / name).read_text(encoding="utf-8")
