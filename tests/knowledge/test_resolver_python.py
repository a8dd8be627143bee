"""Fixes that install: the build a fix names has wheels for the environment's Python, is the release
nearest the installed one, and moves torchvision/torchaudio with it. Verdicts on real pastes and a
recorded node; the release Python lists are pytorch/test-infra's generate_binary_build_matrix.py at
each release's go-live commit, the pairings PyTorch's release tooling (knowledge/torch_wheels.toml)."""

from __future__ import annotations

from conftest import report_of
from fixcheck import fix_problem
from rulekit import PASTES, fired, recorded_paste_facts

RTX5090D = "pytorch-150733-rtx5090d-cu126.txt"   # torch 2.6.0+cu126, Python 3.12.9, driver 570.124.04


def _missing_arch_fix(g):
    (f,) = fired("torch-missing-arch", g)
    assert fix_problem(f.fix, f.fix_lang) is None, f.fix
    return f.fix


def test_rtx5090d_paste_is_told_the_nearest_release_not_the_newest():
    # 2.6.0+cu126 carries no sm_120; 2.7's cu128 wheels are the first that do (moi90 table) and run
    # on 570.124.04 (12.x by minor-version compatibility); Python 3.12 has 2.7 wheels.
    doc = report_of("check", "--from", str(PASTES / RTX5090D))
    (f,) = [x for x in doc["findings"] if x["symbol"] == "torch-missing-arch"]
    assert f["fix"].startswith('pip install --force-reinstall "torch>=2.7,<2.8" '
                               "--index-url https://download.pytorch.org/whl/cu128"), f["fix"]
    assert "on driver 570.124.04" in f["fix"] and "Python version is unknown" not in f["fix"]


def test_rtx5090_on_python38_gets_a_new_environment_not_a_pip_line_with_no_wheel():
    # The case: every build that runs sm_120 is 2.7 or later, and cp38 wheels stop at 2.4
    # (2.5's release matrix starts at 3.9): pip install "torch>=2.7" would find nothing on 3.8.
    g = recorded_paste_facts(RTX5090D)
    g["facts"]["torch"]["python_version"] = "3.8.10"
    fix = _missing_arch_fix(g)
    assert fix.startswith('python3.9 -m venv ~/torch-py39 && ~/torch-py39/bin/pip install "torch>=2.7,<2.8" '
                          "--index-url https://download.pytorch.org/whl/cu128"), fix
    assert "Python 3.8 has no wheels" in fix and "3.9-3.13" in fix


def test_python39_on_driver_580_is_not_offered_the_310_only_releases():
    # The second case, without an installed torch to stay near (a warning pasted alone):
    # 580 runs CUDA 13, but 2.9 and later have no cp39 wheels; 2.7 and 2.8 (cu128) do.
    g = recorded_paste_facts(RTX5090D)
    g["facts"]["torch"].update(python_version="3.9.21", version=None)
    g["facts"]["nvidia"]["driver_version"] = "580.65.06"
    for gpu in g["facts"]["gpus"]:
        gpu["driver_version"] = "580.65.06"
    fix = _missing_arch_fix(g)
    assert '"torch>=2.7,<2.9" --index-url https://download.pytorch.org/whl/cu128' in fix, fix
    # The same node on Python 3.12 is offered the newest, CUDA 13.2 builds.
    g["facts"]["torch"]["python_version"] = "3.12.9"
    # (2.14's Python list is PyPI's file list of 2.14.0/2.14.1: cp310-cp314.)
    assert '"torch>=2.12,<2.15" --index-url https://download.pytorch.org/whl/cu132' in _missing_arch_fix(g)


def test_unknown_python_is_said_not_assumed():
    # torch's warning pasted alone: no Python version anywhere in it.
    doc = report_of("check", "--from", str(PASTES / "hellod035-leggedlab-26-rtx5090-torch-warning-only.txt"))
    (f,) = [x for x in doc["findings"] if x["symbol"] == "torch-missing-arch"]
    assert "Python version is unknown" in f["fix"] and "Python 3.10-3.14 only" in f["fix"], f["fix"]


def test_companions_move_with_torch_on_a_windows_paste():
    # pytorch/pytorch#51858 lists torch 2.0.1+cu117, torchvision and torchaudio on Python 3.9, driver
    # 535.98, GTX 1050 Ti: healthy, and silent.
    g = recorded_paste_facts("pytorch-51858-windows-gtx1050ti-cu117-healthy.txt")
    assert not fired("torch-missing-arch", g)
    # A CPU build of the same release on that node: the fix reinstalls 2.0 with its torchvision 0.15
    # and torchaudio 2.0 (pytorch/builder release/promote.sh @8f2fdc7e), not the newest torch alone.
    g["facts"]["torch"].update(build="cpu", version="2.0.1+cpu")
    (f,) = fired("torch-cpu-only", g)
    assert f.fix.startswith('pip install --force-reinstall "torch>=2.0,<2.1" "torchvision>=0.15,<0.16" '
                            '"torchaudio>=2.0,<2.1" --index-url https://download.pytorch.org/whl/cu118'), f.fix
    assert fix_problem(f.fix, f.fix_lang) is None


def test_a_release_without_a_sourced_pairing_is_passed_over_for_one_with():
    # The h100 node lists torchvision and torchaudio; with 2.8.0+cpu installed, 2.8 (no pairing found
    # in PyTorch's release tooling) is passed over for the nearest release whose pairing is known.
    from rulekit import facts

    g = facts("h100-kvm-1gpu", **{"torch.build": "cpu", "torch.version": "2.8.0+cpu", "torch.cuda": None})
    (f,) = fired("torch-cpu-only", g)
    assert '"torch>=2.10,<2.11" "torchvision>=0.25,<0.26" "torchaudio>=2.10,<2.11"' in f.fix, f.fix


# --- a wheel whose arch list knowledge lacks is "not judged", never silence ---------------------

def _edited_paste(tmp_path, name, *swaps):
    text = (PASTES.parent / name).read_text()
    for old, new in swaps:
        assert old in text
        text = text.replace(old, new)
    p = tmp_path / "paste.txt"
    p.write_text(text)
    return report_of("check", "--from", str(p))


def test_windows_27_cu126_on_an_rtx5090_is_not_judged(tmp_path):
    # The real Windows collect_env of pytorch/pytorch#51858 with the case: 2.7.0+cu126 on an
    # RTX 5090. Windows 2.6-2.8 lists are not sourced (torch_wheels.toml header): skipped, with why.
    doc = _edited_paste(tmp_path,
                        "pastes/pytorch-51858-windows-gtx1050ti-cu117-healthy.txt",
                        ("PyTorch version: 2.0.1+cu117", "PyTorch version: 2.7.0+cu126"),
                        ("GPU 0: NVIDIA GeForce GTX 1050 Ti", "GPU 0: NVIDIA GeForce RTX 5090"))
    assert not [x for x in doc["findings"] if x["symbol"] == "torch-missing-arch"]
    (s,) = [s for s in doc["skipped"] if s["symbol"] == "torch-missing-arch"]
    assert "2.7.0+cu126" in s["reason"] and "no sourced arch list" in s["reason"] and "Windows" in s["reason"], s
    assert doc["unknown"]["torch.arch_list"] == s["reason"].split(": ", 1)[1]


def test_mi300x_under_the_rocm57_wheel_is_judged_and_told_the_rocm60_one(tmp_path):
    # The real ROCm collect_env of vllm-project/vllm#8004 (MI210, Python 3.10) with the case:
    # an MI300X under 2.3.1+rocm5.7. pytorch/builder build_docker.sh at release/2.3 adds gfx942 for
    # ROCm >= 6.0 only: the rocm5.7 wheel lacks it, the 2.3 rocm6.0 wheel (the nearest) carries it.
    doc = _edited_paste(tmp_path, "tickets/vllm-8004-mi210-rocm62-healthy.txt",
                        ("PyTorch version: 2.5.0.dev20240821+rocm6.2", "PyTorch version: 2.3.1+rocm5.7"),
                        ("AMD Instinct MI210 (gfx90a:sramecc+:xnack-)", "AMD Instinct MI300X (gfx942:sramecc+:xnack-)"))
    (f,) = [x for x in doc["findings"] if x["symbol"] == "torch-rocm-missing-gfx"]
    assert "gfx942" in f["message"] and "the official wheel torch 2.3.1+rocm5.7" in f["message"]
    assert f["fix"].startswith('pip install --force-reinstall "torch>=2.3,<2.4" '
                               "--index-url https://download.pytorch.org/whl/rocm6.0"), f["fix"]


def test_mi300x_under_a_rocm_wheel_older_than_the_tables_is_not_judged(tmp_path):
    # The same paste with 2.1.2+rocm5.6, older than every [[rocm_wheel]] entry (2.2 on): skipped, with why.
    doc = _edited_paste(tmp_path, "tickets/vllm-8004-mi210-rocm62-healthy.txt",
                        ("PyTorch version: 2.5.0.dev20240821+rocm6.2", "PyTorch version: 2.1.2+rocm5.6"),
                        ("AMD Instinct MI210 (gfx90a:sramecc+:xnack-)", "AMD Instinct MI300X (gfx942:sramecc+:xnack-)"))
    assert not [x for x in doc["findings"] if x["symbol"] == "torch-rocm-missing-gfx"]
    (s,) = [s for s in doc["skipped"] if s["symbol"] == "torch-rocm-missing-gfx"]
    assert "2.1.2+rocm5.6" in s["reason"] and "no sourced arch list" in s["reason"], s


def test_a_known_wheel_is_still_judged_not_skipped(tmp_path):
    # The same Windows paste as shipped (2.0.1+cu117, whose builder list is sourced): judged, silent.
    doc = report_of("check", "--from", str(PASTES / "pytorch-51858-windows-gtx1050ti-cu117-healthy.txt"))
    assert not [s for s in doc["skipped"] if s["symbol"] == "torch-missing-arch"]
