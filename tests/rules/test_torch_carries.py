"""Whose kernel image is missing: torch's (torch-missing-arch) or an extension's (framework-missing-arch).
Where a paste names the torch release (and its CUDA variant) and the GPU, and torch's own official
wheels of that release carry the GPU (NVIDIA's binary compatibility within a major: sm_50 runs on 5.2,
sm_80 on 8.6), "no kernel image" is the extension's. Real tickets of set V; the sentences marked
"constructed" fill the user's own wording with another GPU or release, to test the other branches."""

from __future__ import annotations

from pathlib import Path

from hpcdoctor.knowledge import wheels
from rulekit import fired, paste_facts, run_rule

V = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_v"


def v_facts(tmp_path, name: str):
    return paste_facts(tmp_path, (V / f"{name}.txt").read_text(encoding="utf-8"))


def test_torch_1_7_cu102_carries_a_titan_x_so_the_extension_lacks_it(tmp_path):
    g = v_facts(tmp_path, "mish-cuda-10-extension-built-without-sm52")
    assert run_rule("torch-missing-arch", g)[0] == []   # no finding (the rule is left unjudged: no torch report)
    (f,) = fired("framework-missing-arch", g)
    assert "not torch's" in f.message and "sm_50" in f.message, f.message
    # "TITAN X" is the Maxwell GTX TITAN X (5.2) or the Pascal TITAN X (6.1): both are said, and the
    # rebuild covers both, since torch 1.7's wheels run either.
    assert "5.2 or 6.1" in f.message, f.message
    assert f.fix.startswith('export TORCH_CUDA_ARCH_LIST="5.2;6.1"'), f.fix


def test_torch_1_11_cu113_carries_an_a6000_and_the_user_says_plain_torch_runs(tmp_path):
    g = v_facts(tmp_path, "torch-radon-34-extension-not-built-for-sm80")
    assert run_rule("torch-missing-arch", g)[0] == []
    (f,) = fired("framework-missing-arch", g)
    assert "8.6" in f.message and "sm_80" in f.message and "plain torch runs" in f.message, f.message
    assert 'TORCH_CUDA_ARCH_LIST="8.6"' in f.fix


def test_torch_whose_wheels_lack_the_gpu_stays_torch_missing_arch(tmp_path):
    # constructed: the mish-cuda user's sentence with an RTX 3090 (8.6); torch 1.7+cu102 carries no sm_8x.
    text = ("# RuntimeError: CUDA error: no kernel image is available for execution on the device\n\n"
            "Built with pytorch 1.7, cuda 10.2, RTX 3090, got this error.\n")
    g = paste_facts(tmp_path, text)
    assert not fired("framework-missing-arch", g)
    (f,) = fired("torch-missing-arch", g)
    assert "carry no code for compute capability 8.6" in f.message, f.message


def test_an_unknown_release_is_said_and_stays_torch_missing_arch(tmp_path):
    # constructed: torch 1.5, whose wheels' arch lists hpcdoctor has not read.
    text = ("# RuntimeError: CUDA error: no kernel image is available for execution on the device\n\n"
            "Built with pytorch 1.5, cuda 10.2, TITAN X, got this error.\n")
    g = paste_facts(tmp_path, text)
    assert not fired("framework-missing-arch", g)
    (f,) = fired("torch-missing-arch", g)
    assert "no arch list of torch 1.5" in f.message, f.message


def test_release_carries_reads_binary_compatibility_and_old_wheels():
    assert wheels.release_carries("5.2", "1.7.1", "10.2") is True      # sm_50 SASS runs on 5.2
    assert wheels.release_carries("8.6", "1.11.0", "11.3") is True     # sm_86 listed
    assert wheels.release_carries("8.6", "1.7", "10.2") is False       # no sm_8x in cu102
    assert wheels.release_carries("8.6", "1.7") is None                # cu110 has sm_80, cu102 not: the variant decides
    assert wheels.release_carries("3.5", "1.11.0") is False            # sm_37 does not run on 3.5
    assert wheels.release_carries("8.6", "1.5") is None                # not in the table
    assert not any("1.13" in w["torch"] for w in wheels.wheel_table())  # old wheels are never offered by the resolver


def test_a_shared_name_beside_another_gpu_decides_nothing(tmp_path):
    # constructed: the mish-cuda sentence naming a second GPU: which of the two ran is not known.
    text = ("# RuntimeError: CUDA error: no kernel image is available for execution on the device\n\n"
            "Built with pytorch 1.7, cuda 10.2, TITAN X and RTX 3090, got this error.\n")
    g = paste_facts(tmp_path, text)
    assert not fired("framework-missing-arch", g)
    (f,) = fired("torch-missing-arch", g)
    assert "5.2;6.1" not in f.fix
