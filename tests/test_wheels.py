"""The resolver that names the build a node runs (hpcdoctor.wheels), across driver, GPU, OS and CPU
eras, and the corrected wheel and driver entries, each against its source. Verdicts are asserted on
real pastes and recorded nodes where there is one."""

from __future__ import annotations

import pytest

from conftest import NODES, report_of
from rulekit import facts, fired
from hpcdoctor import wheels

PASTES = NODES.parent / "pastes"
H100 = "h100-kvm-1gpu"


def _fix(doc, symbol):
    (f,) = [x for x in doc["findings"] if x["symbol"] == symbol]
    return f


# --- corrected entries, each with its source --------------------------------------------------

def test_torch27_cu128_has_no_volta():
    # moi90/pytorch_compute_capabilities (2.7.0 cu128 binaries): sm_75..sm_120, sm_70 dropped.
    arch = wheels.wheel_arch_list("2.7.1+cu128")["arch"]
    assert not wheels.arch_supported("7.0", arch) and wheels.arch_supported("12.0", arch)


def test_torch28_to_210_cu128_carry_volta_again_and_211_drops_it():
    # .ci/manywheel/build_cuda.sh 00c7a380 (12.8: 7.0;...), RELEASE.md "For Release 2.9 and 2.10";
    # Volta left cu128 in 2.11 (RELEASE.md as quoted in issue 12).
    for v in ("2.8.0+cu128", "2.9.1+cu128", "2.10.0+cu128"):
        assert wheels.arch_supported("7.0", wheels.wheel_arch_list(v)["arch"]), v
    assert not wheels.arch_supported("7.0", wheels.wheel_arch_list("2.11.0+cu128")["arch"])


def test_torch27_shipped_cu118_with_kepler():
    # build_cuda.sh 11.8 (...;3.7;9.0); 2.7.0 cu118 binaries list sm_37 (moi90 table).
    assert "sm_37" in wheels.wheel_arch_list("2.7.0+cu118")["arch"]
    assert wheels.wheel_arch_list("2.8.0+cu118") is None


def test_aarch64_cu130_list_differs_from_x86():
    # build_cuda.sh with 13.0: aarch64 adds 11.0 and filters 7.5 and 8.6 out.
    arm = wheels.wheel_arch_list("2.10.0+cu130", cpu="aarch64")["arch"]
    x86 = wheels.wheel_arch_list("2.10.0+cu130")["arch"]
    assert "sm_110" in arm and "sm_75" not in arm and "sm_75" in x86 and "sm_110" not in x86


@pytest.mark.parametrize("cuda,own", [("12.3", "545.23.06"), ("12.5", "555.42.02"), ("13.1", "590.44.01"),
                                       ("13.2", "595.45.04")])
def test_new_toolkit_drivers_run_through_minor_compatibility(cuda, own):
    # NVIDIA CUDA 13.2 Update 2 release notes, Table 3 (GA rows), read 2026-11-22.
    ok, why = wheels.driver_supports("580.65.06" if cuda.startswith("13") else "535.104.05", cuda)
    assert ok is True and own in why and "minor-version compatibility" in why
    assert own not in wheels.driver_supports(own, cuda)[1]


def test_unsourced_releases_are_unknown_not_guessed():
    assert wheels.wheel_arch_list("2.13.0+cu130") is None
    assert wheels.wheel_arch_list("2.10.0+cu128", os_name="windows") is None


def test_cuda110_ga_driver_and_windows_before_cuda11():
    # NVIDIA release notes table: 11.0.2 GA >= 450.51.05 (450.36.06 was the 11.0.1 RC); Windows 10.2 >= 441.22.
    from hpcdoctor import knowledge

    assert knowledge.load("cuda")["release_driver"]["11.0"] == "450.51.05"
    assert wheels.required_driver("10.2", windows=True) == "441.22"
    assert wheels.driver_supports("431.60", "10.2", windows=True)[0] is False
    assert wheels.driver_supports("441.22", "10.2", windows=True)[0] is True


# --- the resolver across eras ----------------------------------------------------------------

@pytest.mark.parametrize("driver,cc,cpu,expect", [
    ("384.81", "7.0", "x86_64", "driver >= 525.60.13"),       # CUDA 9 driver: nothing runs
    ("410.48", "7.5", "x86_64", "driver >= "),
    ("418.67", "6.1", "x86_64", ">= 450.80.02 runs the CUDA 11.8"),
    ("450.80.02", "3.7", "x86_64", "cu118"),                  # K80: only cu118 carries sm_37
    ("470.82.01", "6.0", "x86_64", "cu118"),                  # 11.x only on 470
    ("525.60.13", "5.0", "x86_64", "cu126"),
    ("535.104.05", "7.0", "x86_64", "cu126"),                 # cu126 carries Volta to 2.11, cu128 to 2.10
    ("535.104.05", "8.6", "x86_64", "cu128"),
    ("570.86.10", "8.9", "x86_64", "cu128"),
    ("580.65.06", "9.0", "x86_64", "cu130"),
    ("580.65.06", "10.0", "x86_64", "cu130"),
    ("570.86.10", "12.0", "x86_64", "cu128"),
    ("580.65.06", "9.0", "aarch64", "cu130"),
])
def test_resolver_eras(driver, cc, cpu, expect):
    r = wheels.resolve(cc, driver, "linux", cpu)
    assert expect in (r.get("tag") or "") or expect in r["text"], r


def test_resolver_names_a_build_the_driver_runs_and_the_gpu_is_in():
    for driver in ("450.80.02", "470.82.01", "525.60.13", "535.104.05", "570.86.10", "580.65.06"):
        for cc in ("3.7", "5.0", "6.0", "6.1", "7.0", "7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"):
            r = wheels.resolve(cc, driver)
            if r["ok"]:
                assert wheels.driver_supports(driver, r["cuda"])[0] is True
                lo = r["torch"].split(",")[0][2:]
                assert wheels.arch_supported(cc, wheels.wheel_arch_list(f"{lo}.0+{r['tag']}")["arch"]), (cc, r)
                assert r["command"].startswith('pip install --force-reinstall "torch>=')


def test_volta_on_aarch64_and_windows_have_no_known_build():
    assert not wheels.resolve("7.0", "580.65.06", "linux", "aarch64")["ok"]
    r = wheels.resolve("8.6", "560.94", "windows", "x86_64")
    assert not r["ok"] and "Windows" in r["text"]


def test_conda_env_gets_pip_inside_it():
    r = wheels.resolve("9.0", "580.65.06", installer="conda")
    assert r["command"].startswith("pip install") and "138506" in r["text"]


def test_site_index_and_extra_wheel_entries():
    config = {"knowledge": {"index_url": "https://mirror.example.org/torch/",
                            "wheel": [{"torch": ">=2.12,<2.13", "cuda": "13.0", "arch": ["sm_90"]}]}}
    r = wheels.resolve("9.0", "580.65.06", config=config)
    assert r["index_url"] == "https://mirror.example.org/torch/cu130" and r["torch"] == ">=2.9,<2.13"


# --- the fixes on real pastes and the recorded H100 --------------------------------------------

def test_rtx5090d_on_cu126_is_told_the_cu128_build():
    # pytorch/pytorch#150733: sm_120 under 2.6.0+cu126; its driver (570+) runs cu128, not cu130.
    f = _fix(report_of("check", "--from", str(PASTES / "pytorch-150733-rtx5090d-cu126.txt")), "torch-missing-arch")
    assert "sm_120" in f["fix"] and "/whl/cu12" in f["fix"] and "/whl/cu118" not in f["fix"]


def test_driver_418_is_not_told_cu118():
    # pytorch/pytorch#43058: torch 1.6 cu102 on driver 418.67: no wheel in the table runs on 418.
    f = _fix(report_of("check", "--from", str(PASTES / "pytorch-43058-cuda102-driver418.txt")), "driver-too-old")
    assert "/whl/cu118" not in f["fix"] and ("driver >=" in f["fix"] or "compute capability" in f["fix"])


def test_windows_cpu_build_is_not_told_a_linux_wheel():
    # pytorch/pytorch#122924: Windows, RTX 4080 Laptop: no Windows list is sourced, so no index is named.
    f = _fix(report_of("check", "--from", str(PASTES / "pytorch-122924-windows-cpu-build-rtx4080.txt")), "torch-cpu-only")
    assert "download.pytorch.org" not in f["fix"] and "Windows x86_64" in f["fix"] and "sm_89" in f["fix"]


def test_h100_driver_535_gets_cu128_not_cu118():
    (f,) = fired("driver-too-old", facts(H100, **{"nvidia.driver_version": "535.161.08", "torch.cuda_available": False}))
    assert "/whl/cu128" in f.fix and "535.161.08" in f.fix


def test_h100_cpu_build_gets_cu130_and_conda_note():
    conda = {"pytorch": {"version": "2.5.1", "build": "cpu_mkl_py310_0", "channel": "pytorch"}}
    (f,) = fired("torch-cpu-only", facts(H100, **{"torch.build": "cpu", "torch.conda_list": conda}))
    assert "/whl/cu130" in f.fix and "conda remove pytorch" in f.fix


def test_rocm_build_without_the_gpus_gfx():
    g = facts(H100, **{"torch.build": "rocm", "torch.cuda": None, "torch.hip": "6.4",
                       "torch.arch_list": ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100"],
                       "gpus": [{"index": 0, "vendor": "amd", "name": "AMD Instinct MI300X", "gfx_target": "gfx942"}]})
    (f,) = fired("torch-rocm-missing-gfx", g)
    assert "gfx942" in f.message and "get_arch_list" in f.fix
    g = facts(H100, **{"torch.build": "rocm", "torch.arch_list": ["gfx90a:xnack-", "gfx942"],
                       "gpus": [{"index": 0, "vendor": "amd", "name": "AMD Instinct MI300X", "gfx_target": "gfx942"}]})
    assert not fired("torch-rocm-missing-gfx", g)
