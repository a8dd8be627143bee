"""collect_env text: the recorded H100 node's, and the same cut short or with Windows line ends."""

from __future__ import annotations

from conftest import NODES
from hpcdoctor.parse.collect_env import looks_like_collect_env, parse_collect_env

TEXT = (NODES / "h100-kvm-1gpu" / "cmd" / "collect_env.txt").read_text()


def test_full_report():
    p = parse_collect_env(TEXT)
    t = p["torch"]
    assert p["recognised"] and looks_like_collect_env(TEXT)
    assert t["version"] == "2.11.0+cu130" and t["cuda"] == "13.0" and t["hip"] is None
    assert t["cuda_available"] is True and t["driver_version"] == "580.159.04"
    assert t["gpu_models"] == ["NVIDIA H100 80GB HBM3"]
    assert t["system_cudnn"] == "9.14.0"
    assert t["pip"]["torch"] == "2.11.0" and t["pip"]["nvidia-nccl-cu13"] == "2.28.9"
    assert t["python_version"] == "3.12.3"
    assert "Model name:" in p["lscpu"] and "amx_bf16" in p["lscpu"]


def test_cut_off_anywhere():
    for cut in (40, 200, 900, len(TEXT) // 2):
        p = parse_collect_env(TEXT[:cut])
        if "PyTorch version: 2.11.0" in TEXT[:cut]:
            assert p["torch"]["version"] == "2.11.0+cu130"
        # Nothing past the cut is invented.
        if "Nvidia driver version" not in TEXT[:cut]:
            assert "driver_version" not in p["torch"]


def test_windows_line_endings():
    p = parse_collect_env(TEXT.replace("\n", "\r\n"))
    assert p["torch"]["driver_version"] == "580.159.04" and p["torch"]["gpu_models"] == ["NVIDIA H100 80GB HBM3"]


def test_not_collect_env():
    p = parse_collect_env("hello\nworld: yes\n")
    assert not p["recognised"] and not looks_like_collect_env("hello")
