"""The resolver that names the build a node runs (hpcdoctor.wheels), across driver, GPU, OS and CPU
eras, and the corrected wheel and driver entries, each against its source. Verdicts are asserted on
real pastes and recorded nodes where there is one."""

from __future__ import annotations

import pytest

from conftest import NODES, report_of
from rulekit import PASTES, facts, fired, recorded_paste_facts
from hpcdoctor.knowledge import wheels

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
    # Volta left cu128 in 2.11: RELEASE.md "For Release 2.11" in pytorch/pytorch#175253 and the RFC
    # pytorch/pytorch#172352 (primary, read 2026-11-23).
    for v in ("2.8.0+cu128", "2.9.1+cu128", "2.10.0+cu128"):
        assert wheels.arch_supported("7.0", wheels.wheel_arch_list(v)["arch"]), v
    assert not wheels.arch_supported("7.0", wheels.wheel_arch_list("2.11.0+cu128")["arch"])
    # torch 2.12 has no cu128 wheels at all (pytorch/pytorch#182849 removed the 12.8.1 row).
    assert wheels.wheel_arch_list("2.12.0+cu128") is None


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
    # 2.15: RFC pytorch/pytorch#190385 (drop cu126) is still open; Windows 2.6-2.8 not tied to a branch;
    # nightly/source ROCm builds and the TheRock-based +rocm7.14 wheels are not the listed wheels.
    assert wheels.wheel_arch_list("2.15.0+cu130") is None
    assert wheels.wheel_arch_list("2.8.0+cu128", os_name="windows") is None
    # Windows 2.6-2.8: the stored .ci/pytorch/windows/*.bat versions are not tied to a release branch
    # (and cuda128.bat @07619f94 disagrees with the 2.7.1+cu128 wheel read in CorridorKey#141).
    assert wheels.wheel_arch_list("2.6.0+cu124", os_name="windows") is None
    assert wheels.wheel_arch_list("2.7.1+cu128", os_name="windows") is None
    # aarch64 cu126/cu128 of 2.9 and 2.10: no build_cuda.sh tied to those branches was found.
    assert wheels.wheel_arch_list("2.9.1+cu126", cpu="aarch64") is None
    assert wheels.wheel_arch_list("2.10.0+cu128", cpu="aarch64") is None
    assert wheels.wheel_arch_list("2.5.0.dev20240821+rocm6.2") is None
    assert wheels.wheel_arch_list("2.12.0+rocm7.14.0") is None


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
    ("535.104.05", "7.0", "x86_64", "cu126"),                 # cu126 carries Volta to 2.14, cu128 to 2.10
    ("535.104.05", "8.6", "x86_64", "cu126"),                 # 12.x on 535: cu126 goes to 2.14, cu128 stops at 2.11
    ("570.86.10", "8.9", "x86_64", "cu126"),
    ("580.65.06", "9.0", "x86_64", "cu132"),                  # 13.2 runs on 580 by minor-version compatibility
    ("580.65.06", "10.0", "x86_64", "cu132"),
    ("570.86.10", "12.0", "x86_64", "cu128"),                 # Blackwell on a 12.x driver: cu128, the 2.11 wheels
    ("580.65.06", "9.0", "aarch64", "cu132"),
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


def test_volta_on_aarch64_has_no_build_and_windows_gets_a_windows_one():
    # RELEASE.md aarch64 table: no build carries anything below Ampere(8.0).
    assert not wheels.resolve("7.0", "580.65.06", "linux", "aarch64")["ok"]
    # RELEASE.md's x86 table is "for Linux x86 and Windows builds": a 560.94 Windows driver runs 12.x.
    r = wheels.resolve("8.6", "560.94", "windows", "x86_64")
    assert r["ok"] and r["tag"] == "cu126", r


def test_conda_env_gets_pip_inside_it():
    r = wheels.resolve("9.0", "580.65.06", installer="conda")
    assert r["command"].startswith("pip install") and "138506" in r["text"]


def test_site_index_and_extra_wheel_entries():
    # A release the table lacks (2.15), added by the site, becomes the newest pick.
    config = {"knowledge": {"index_url": "https://mirror.example.org/torch/",
                            "wheel": [{"torch": ">=2.15,<2.16", "cuda": "13.0", "arch": ["sm_90"]}]}}
    r = wheels.resolve("9.0", "580.65.06", config=config)
    assert r["index_url"] == "https://mirror.example.org/torch/cu130" and r["torch"] == ">=2.9,<2.16"


# --- the fixes on real pastes and the recorded H100 --------------------------------------------

def test_rtx5090d_on_cu126_is_told_the_cu128_build():
    # pytorch/pytorch#150733: sm_120 under 2.6.0+cu126; its driver (570+) runs cu128, not cu130.
    f = _fix(report_of("check", "--from", str(PASTES / "pytorch-150733-rtx5090d-cu126.txt")), "torch-missing-arch")
    assert "sm_120" in f["fix"] and "/whl/cu12" in f["fix"] and "/whl/cu118" not in f["fix"]


def test_driver_418_is_not_told_cu118():
    # pytorch/pytorch#43058: torch 1.6 cu102 on driver 418.67: no wheel in the table runs on 418.
    f = _fix(report_of("check", "--from", str(PASTES / "pytorch-43058-cuda102-driver418.txt")), "driver-too-old")
    assert "/whl/cu118" not in f["fix"] and ("driver >=" in f["fix"] or "compute capability" in f["fix"])


def test_windows_cpu_build_is_told_a_windows_wheel_its_driver_runs():
    # pytorch/pytorch#122924: Windows 11, RTX 4080 Laptop (sm_89), driver 551.86. RELEASE.md's table
    # is "for Linux x86 and Windows builds": 551.86 runs 12.x (>= 528.33 on Windows), not 13.x.
    # The paste has torch 2.2.2 with torchvision 0.17.2 and torchaudio 2.2.2 on Python 3.10: the nearest
    # release is 2.2 itself, whose Windows cu121 wheels carry sm_86 (runs 8.9); the companions move
    # with it (generate_release_matrix.py RELEASE_DICT 2.2.x -> 0.17.x, 2.2.x).
    f = _fix(report_of("check", "--from", str(PASTES / "pytorch-122924-windows-cpu-build-rtx4080.txt")), "torch-cpu-only")
    assert f["fix"].startswith('pip install --force-reinstall "torch>=2.2,<2.3" "torchvision>=0.17,<0.18" '
                               '"torchaudio>=2.2,<2.3" --index-url https://download.pytorch.org/whl/cu121'), f["fix"]
    assert "sm_89" in f["fix"] and "551.86" in f["fix"] and "Python version is unknown" not in f["fix"]


def test_h100_driver_535_gets_a_cuda12_build_not_cu118():
    # The node has 2.11.0+cu130 (cu13x needs 580): 535 runs any 12.x runtime, and the nearest release
    # is 2.11 itself, whose cu128 wheels carry sm_90; the node's torchvision/torchaudio move with it.
    (f,) = fired("driver-too-old", facts(H100, **{"nvidia.driver_version": "535.161.08", "torch.cuda_available": False}))
    assert f.fix.startswith('pip install --force-reinstall "torch>=2.11,<2.12" "torchvision>=0.26,<0.27" '
                            '"torchaudio>=2.11,<2.12" --index-url https://download.pytorch.org/whl/cu128'), f.fix
    assert "535.161.08" in f.fix and "cu118" not in f.fix


def test_h100_cpu_build_gets_cu130_and_conda_note():
    conda = {"pytorch": {"version": "2.5.1", "build": "cpu_mkl_py310_0", "channel": "pytorch"}}
    (f,) = fired("torch-cpu-only", facts(H100, **{"torch.build": "cpu", "torch.conda_list": conda}))
    assert "/whl/cu13" in f.fix and "conda remove pytorch" in f.fix


def test_rocm_build_without_the_gpus_gfx():
    g = facts(H100, **{"torch.build": "rocm", "torch.cuda": None, "torch.hip": "6.4",
                       "torch.arch_list": ["gfx900", "gfx906", "gfx908", "gfx90a", "gfx1030", "gfx1100"],
                       "gpus": [{"index": 0, "vendor": "amd", "name": "AMD Instinct MI300X", "gfx_target": "gfx942"}]})
    (f,) = fired("torch-rocm-missing-gfx", g)
    # The fix names the newest official wheel carrying gfx942 (uv#18730: the rocm7.2 wheel's list).
    assert "gfx942" in f.message and "/whl/rocm7.2" in f.fix and "the official wheel" not in f.message
    g = facts(H100, **{"torch.build": "rocm", "torch.arch_list": ["gfx90a:xnack-", "gfx942"],
                       "gpus": [{"index": 0, "vendor": "amd", "name": "AMD Instinct MI300X", "gfx_target": "gfx942"}]})
    assert not fired("torch-rocm-missing-gfx", g)


# --- torch 2.12-2.14, aarch64 and Windows lists (RELEASE.md "PyTorch CUDA Support Matrix") -----
# Sources, read 2026-11-23: pytorch/pytorch#182849 (2.12 table), #194367 ("For Release 2.12, 2.13
# and 2.14"), #175253 (2.11), #164471 (2.9); RFCs #172663 (2.11 aarch64), #178665, #190355.

def test_torch212_to_214_ship_cu126_for_volta_and_cu13x_for_blackwell():
    # Tesla V100 (7.0): only cu126 carries it in 2.12-2.14; cu130/cu132 start at Turing.
    assert wheels.arch_supported("7.0", wheels.wheel_arch_list("2.14.0+cu126")["arch"])
    assert not wheels.arch_supported("7.0", wheels.wheel_arch_list("2.13.0+cu132")["arch"])
    # NVIDIA GeForce RTX 5090 (12.0) and B200 (10.0) are in the 13.0 and 13.2 wheels, not in cu126.
    for v in ("2.12.0+cu130", "2.13.1+cu132", "2.14.0+cu132"):
        arch = wheels.wheel_arch_list(v)["arch"]
        assert wheels.arch_supported("12.0", arch) and wheels.arch_supported("10.0", arch), v
    assert not wheels.arch_supported("12.0", wheels.wheel_arch_list("2.14.0+cu126")["arch"])


@pytest.mark.parametrize("cc,driver,expect", [
    ("9.0", "550.54.15", "cu126"),   # GH200 on a 12.x driver: the cu126 aarch64 build (8.0, 9.0) to 2.14
    ("9.0", "580.65.06", "cu132"),   # GH200 on 580: the 13.2 SBSA build
    ("10.0", "570.124.06", "cu128"), # GB200 on 570: only 2.11's cu128 aarch64 build (10.0, 12.0)
    ("11.0", "580.65.06", "cu132"),  # Jetson Thor: 11.0 only in the 13.x aarch64 builds
    ("12.1", "580.95.05", "cu132"),  # DGX Spark GB10 runs the sm_120 code of the aarch64 build
])
def test_aarch64_resolver_before_and_besides_cuda13(cc, driver, expect):
    r = wheels.resolve(cc, driver, "linux", "aarch64")
    assert r["ok"] and r["tag"] == expect, r


def test_aarch64_wheels_lack_turing_and_volta():
    # RELEASE.md aarch64 table: 12.6.3 | Ampere(8.0), Hopper(9.0): a T4 (7.5) on Graviton has no build.
    assert not wheels.arch_supported("7.5", wheels.wheel_arch_list("2.12.0+cu126", cpu="aarch64")["arch"])
    r = wheels.resolve("7.5", "580.65.06", "linux", "aarch64")
    assert not r["ok"] and "sm_75" in r["text"]


def test_windows_lists_follow_release_md_without_ptx():
    # "+PTX available on linux builds only": the Windows cu130 list has no compute_120.
    assert not any(a.startswith("compute_") for a in wheels.wheel_arch_list("2.12.0+cu130", os_name="windows")["arch"])
    # Volta on Windows: cu128 through 2.10 (#164471), gone in 2.11 (#175253).
    assert wheels.arch_supported("7.0", wheels.wheel_arch_list("2.10.0+cu128", os_name="windows")["arch"])
    assert not wheels.arch_supported("7.0", wheels.wheel_arch_list("2.11.0+cu128", os_name="windows")["arch"])
    # An RTX 5090 on a Windows 572.16 driver (12.x only): the cu128 wheels, not cu13x (needs >= 580.88).
    r = wheels.resolve("12.0", "572.16", "windows", "x86_64")
    assert r["ok"] and r["tag"] == "cu128" and r["torch"].endswith("<2.12"), r


# --- Windows before 2.9: pytorch/builder windows/cudaNNN.bat at release/2.0 ... release/2.5 ----------
# Sources, read 2026-11-23: builder's TORCH_CUDA_ARCH_LIST per CUDA variant at each release branch
# (cuda117.bat @9f0fad92 release/2.0: 3.7+PTX;5.0;6.0;6.1;7.0;7.5;8.0;8.6; cuda118.bat adds 9.0;
# cuda121.bat/cuda124.bat: 5.0;6.0;6.1;7.0;7.5;8.0;8.6;9.0) and the Windows variants of each release in
# pytorch/test-infra's release matrices. compute_37 is not counted (torch's _check_cubins counts sm_
# entries only; malfet in pytorch/pytorch#153944: "CUDA-11.8 does not support Blackwell GPUs").


def test_windows_cu117_paste_is_judged_from_the_builder_list_and_stays_silent():
    # pytorch/pytorch#51858 (Windows 11 Pro, torch 2.0.1+cu117, GTX 1050 Ti = 6.1, driver 535.98): the
    # collect_env has no arch list; until the builder's cuda117.bat list was in knowledge the rule had
    # nothing to judge. The wheel carries sm_61 (Windows lists add 6.1): healthy, and judged.
    doc = report_of("check", "--from", str(PASTES / "pytorch-51858-windows-gtx1050ti-cu117-healthy.txt"))
    t = doc["facts"]["torch"]
    assert "arch_list" in t["from_knowledge"] and "sm_61" in t["arch_list"]
    assert not any(a.startswith("compute_") for a in t["arch_list"])
    assert not [x for x in doc["findings"] if x["symbol"] == "torch-missing-arch"]
    assert not [s for s in doc["skipped"] if "SW003" in str(s)]


def test_windows_cu117_wheel_on_an_rtx_50_fires_and_names_a_windows_cu128_build():
    # The same real Windows collect_env (pytorch#51858: 2.0.1+cu117, driver 535.98) with the GPU of
    # josStorer/RWKV-Runner#423, an "NVIDIA GeForce RTX 5070 Ti Laptop GPU" (sm_120), whose torch
    # warned "supports CUDA capabilities sm_37 sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 compute_37"
    # (this very list): torch-missing-arch, and the fix names the Windows cu128 wheels (2.9-2.11 on
    # Windows, RELEASE.md; the Linux cu128 range would start at 2.7).
    g = recorded_paste_facts("pytorch-51858-windows-gtx1050ti-cu117-healthy.txt")
    g["facts"]["gpus"][0].update(name="NVIDIA GeForce RTX 5070 Ti Laptop GPU", compute_capability="12.0")
    (f,) = fired("torch-missing-arch", g)
    assert "sm_120" in f.message and "2.0.1+cu117" in f.message
    # The paste's Python is 3.9: the Windows wheels that carry sm_120 (2.9-2.11, RELEASE.md) exist for
    # 3.10+ only (test-infra's release matrix for 2.9), so the fix is a new 3.10 environment, not a
    # pip line that finds no wheel.
    assert f.fix.startswith('py -3.10 -m venv torch-py310 && torch-py310\\Scripts\\python -m pip install '
                            '"torch>=2.9,<2.10" --index-url https://download.pytorch.org/whl/cu128'), f.fix
    assert "Python 3.9 has no wheels" in f.fix
    # The paste's own GPU (GTX 1050 Ti) under the same facts: silent.
    assert not fired("torch-missing-arch", recorded_paste_facts("pytorch-51858-windows-gtx1050ti-cu117-healthy.txt"))


@pytest.mark.parametrize("gpu,cc,driver,expect", [
    # A CUDA 11.x Windows driver (>= 452.39, below 12.x's 528.33): before, no Windows build ran.
    ("NVIDIA GeForce GTX 1050 Ti", "6.1", "516.94", ("cu118", '"torch>=2.0,<2.6"')),
    ("Tesla K80", "3.7", "472.12", ("cu118", '"torch>=2.0,<2.6"')),     # only cu117/cu118 carry sm_37
    ("NVIDIA GeForce GTX 1080", "6.1", "535.98", ("cu126", '"torch>=2.9,<2.15"')),  # 12.x: the newest
])
def test_windows_resolver_reaches_the_builder_era_wheels(gpu, cc, driver, expect):
    r = wheels.resolve(cc, driver, "windows", "x86_64")
    assert r["ok"] and r["tag"] == expect[0] and expect[1] in r["command"], (gpu, r)


def test_windows_kepler_below_37_has_no_build():
    # GeForce GTX 780 (3.5): no Windows list carries sm_35 or older PTX that torch counts.
    r = wheels.resolve("3.5", "472.12", "windows", "x86_64")
    assert not r["ok"] and "sm_35 on Windows x86_64" in r["text"]


# --- ROCm wheels' gfx lists ([[rocm_wheel]]) ----------------------------------------------------
# Sources: PYTORCH_ROCM_ARCH in pytorch/builder manywheel/build_docker.sh (release/2.4) and in
# pytorch/pytorch .ci/docker/manywheel/build.sh, tied to releases by the PRs that changed it
# (#141667, #147761, #148562, #167299, #179653) and the release branch cuts; confirmed where pasted by
# torch.cuda.get_arch_list() of 2.4.1+rocm6.0, 2.5.1+rocm6.2, 2.7.1+rocm6.2.4, 2.7.1+rocm6.3 in
# astral-sh/uv#14086, of the rocm7.2 wheel in astral-sh/uv#18730, roc-obj-ls of the ROCm 6.2 wheels
# in pytorch/pytorch#132570 (secondary evidence from the wheels themselves).

@pytest.mark.parametrize("gpu,gfx,tag", [
    ("AMD Instinct MI300X", "gfx942", "rocm7.2"),
    ("AMD Instinct MI250X (LUMI-G)", "gfx90a:sramecc+:xnack-", "rocm7.2"),
    ("AMD Radeon RX 7900 XTX", "gfx1100", "rocm7.2"),
    ("AMD Instinct MI355X", "gfx950", "rocm7.2"),
    ("AMD Radeon RX 7600", "gfx1102", "rocm7.2"),   # ROCm/pytorch#2730's GPU: in the wheels since 2.7
])
def test_rocm_resolver_names_a_wheel_that_carries_the_gpu(gpu, gfx, tag):
    r = wheels.resolve_rocm(gfx)
    assert r["ok"] and r["tag"] == tag and r["command"].startswith('pip install --force-reinstall "torch>='), (gpu, r)


@pytest.mark.parametrize("gpu,gfx", [
    ("AMD Radeon RX 5700 XT", "gfx1010"),   # pytorch/pytorch#132570: roc-obj-ls finds no gfx1010
    ("AMD Radeon RX 6700 XT", "gfx1031"),   # same thread: 2.5.1+rocm6.2 needs HSA_OVERRIDE_GFX_VERSION
])
def test_rocm_resolver_says_no_official_wheel_carries_rdna1_or_gfx1031(gpu, gfx):
    r = wheels.resolve_rocm(gfx)
    assert not r["ok"] and f"PYTORCH_ROCM_ARCH={gfx}" in r["text"] and "/whl/rocm" not in r["text"], gpu


def test_rx7600_was_not_in_the_rocm62_wheels_but_is_in_27():
    # gfx1102 reached the wheels with pytorch/pytorch#147761 (2025-02-24): 2.5.1+rocm6.2 lacks it,
    # 2.7.1+rocm6.3 carries it.
    assert "gfx1102" not in wheels.wheel_arch_list("2.5.1+rocm6.2")["arch"]
    assert "gfx1102" in wheels.wheel_arch_list("2.7.1+rocm6.3")["arch"]


def test_pasted_rocm_collect_env_is_judged_against_the_wheels_list():
    # vllm-project/vllm#9713: 2.5.1+rocm6.2 on "AMD Radeon Graphics (gfx906:sramecc+:xnack-)", torch's
    # own list not pasted: the wheel's list comes from knowledge and carries gfx906 (healthy).
    doc = report_of("check", "--from", str(NODES.parent / "tickets" / "vllm-9713-rocm-gfx906-healthy.txt"))
    t = doc["facts"]["torch"]
    assert "gfx906" in t["arch_list"] and "arch_list" in t["from_knowledge"]
    assert not [x for x in doc["findings"] if x["symbol"] == "torch-rocm-missing-gfx"]
    assert not [s for s in doc["skipped"] if "SW008" in str(s)]


def test_rx6700xt_under_the_rocm62_wheel_is_told_there_is_no_official_wheel():
    # pytorch/pytorch#132570 (pkrasicki): RX 6700 XT (gfx1031) on torch 2.5.1+rocm6.2, list not pasted.
    listed = wheels.wheel_arch_list("2.5.1+rocm6.2")["arch"]
    g = facts(H100, **{"torch.build": "rocm", "torch.cuda": None, "torch.hip": "6.2.41133",
                       "torch.version": "2.5.1+rocm6.2", "torch.arch_list": listed,
                       "torch.from_knowledge": ["arch_list"],
                       "gpus": [{"index": 0, "vendor": "amd", "name": "AMD Radeon RX 6700 XT", "gfx_target": "gfx1031"}]})
    (f,) = fired("torch-rocm-missing-gfx", g)
    assert "the official wheel torch 2.5.1+rocm6.2" in f.message and "PYTORCH_ROCM_ARCH=gfx1031" in f.fix
    # The same wheel on an RX 7900 XTX (gfx1100) is fine.
    g["facts"]["gpus"] = [{"index": 0, "vendor": "amd", "name": "AMD Radeon RX 7900 XTX", "gfx_target": "gfx1100"}]
    assert not fired("torch-rocm-missing-gfx", g)


def test_cpu_only_torch_on_an_mi300x_node_is_told_a_rocm_wheel():
    g = facts(H100, **{"torch.build": "cpu", "torch.cuda": None,
                       "gpus": [{"index": 0, "vendor": "amd", "name": "AMD Instinct MI300X", "gfx_target": "gfx942"}]})
    (f,) = fired("torch-cpu-only", g)
    assert "/whl/rocm7.2" in f.fix and "gfx942" in f.fix


def test_site_rocm_wheel_entry_overrides_and_bad_ones_are_refused(tmp_path):
    from hpcdoctor import config

    good = tmp_path / "site.toml"
    good.write_text('[knowledge]\n[[knowledge.rocm_wheel]]\ntorch = ">=2.13,<2.14"\nrocm = "7.2"\n'
                    'gfx = ["gfx90a", "gfx942", "gfx1031"]\nsource = "get_arch_list() of our 2.13.0+rocm7.2"\n')
    c = config.load(str(good))
    # The site's own build carries the RX 6700 XT that no official wheel in knowledge does.
    r = wheels.resolve_rocm("gfx1031", c)
    assert r["ok"] and r["torch"] == ">=2.13,<2.14" and r["tag"] == "rocm7.2"
    assert "gfx1031" in wheels.rocm_wheel_gfx_list("2.13.0+rocm7.2", c)["arch"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[knowledge]\n[[knowledge.rocm_wheel]]\ntorch = ">=2.13"\nrocm = "7.2"\ngfx = ["gfx942"]\n')
    with pytest.raises(config.ConfigError, match="bad.toml:2: torch needs a lower and an upper bound"):
        config.load(str(bad))


# --- ROCm lists sourced from the build scripts (2.4-2.13): verdicts on real GPUs ---------------

def _rocm_torch(version, gpus):
    """A pasted collect_env's torch (the wheel's name, its list taken from knowledge) on these GPUs."""
    listed = wheels.wheel_arch_list(version)
    assert listed, f"{version} should be a known official wheel"
    return facts(H100, **{"torch.build": "rocm", "torch.cuda": None, "torch.hip": None, "torch.version": version,
                          "torch.arch_list": listed["arch"], "torch.from_knowledge": ["arch_list"], "gpus": gpus})


def _gpu(name, gfx):
    return [{"index": 0, "vendor": "amd", "name": name, "gfx_target": gfx}]


_MI300X_PASTE = []


def _mi300x_gpus():
    # The 8x MI300X of huggingface/dell-ai's recorded `amd-smi static --json` (ROCm 7.2.1), as the
    # paste reader gives them: tests/fixtures/public/amd/delai_8xMI300X_amd-smi_static_json_root.json.
    if not _MI300X_PASTE:
        doc = report_of("check", "--from", str(NODES.parent / "public" / "amd" / "delai_8xMI300X_amd-smi_static_json_root.json"))
        _MI300X_PASTE.extend(doc["facts"]["gpus"])
    return _MI300X_PASTE


@pytest.mark.parametrize("version", [
    "2.4.1+rocm6.1",    # builder manywheel/build_docker.sh @a4b440ec (release/2.4): gfx942 for ROCm >= 6.0
    "2.5.1+rocm6.1",    # pytorch .ci/docker/manywheel/build.sh @1fca82d: same block
    "2.6.0+rocm6.2.4",  # after pytorch/pytorch#141667: gfx942 unconditional
    "2.8.0+rocm6.3",
    "2.9.1+rocm6.4",
    "2.10.0+rocm7.0",
    "2.11.0+rocm7.1",
    "2.13.0+rocm7.2",
])
def test_real_mi300x_paste_is_carried_by_every_newly_sourced_rocm_wheel(version):
    """MI300X (gfx942) from a real amd-smi paste under each newly sourced official ROCm wheel: SW008
    stays silent. Sources: PYTORCH_ROCM_ARCH in pytorch/builder manywheel/build_docker.sh @a4b440ec
    (release/2.4) and pytorch/pytorch .ci/docker/manywheel/build.sh (#141667 onwards: gfx942 always)."""
    gpus = _mi300x_gpus()
    assert len(gpus) == 8 and {g["gfx_target"] for g in gpus} == {"gfx942"}
    assert not fired("torch-rocm-missing-gfx", _rocm_torch(version, gpus))


def test_rx7600_gfx1102_was_not_in_26_but_is_in_28():
    """RX 7600 (gfx1102, the GPU of ROCm/pytorch#2730): gfx1102 entered PYTORCH_ROCM_ARCH with
    pytorch/pytorch#147761 (merged 24 February 2025), after the 2.6 cut (11 December 2024) and the
    2.6.0 release: 2.6.0+rocm6.2.4 lacks it (SW008 fires and names a wheel that has it), 2.8.0+rocm6.4
    carries it."""
    gpu = _gpu("AMD Radeon RX 7600", "gfx1102")
    (f,) = fired("torch-rocm-missing-gfx", _rocm_torch("2.6.0+rocm6.2.4", gpu))
    assert "the official wheel torch 2.6.0+rocm6.2.4" in f.message and "gfx1102" in f.message
    assert "/whl/rocm" in f.fix and "PYTORCH_ROCM_ARCH=" not in f.fix
    assert not fired("torch-rocm-missing-gfx", _rocm_torch("2.8.0+rocm6.4", gpu))
    # gfx1101 (RX 7800 XT) came earlier, with #141667 (merged 4 December 2024): 2.6 carries it.
    assert not fired("torch-rocm-missing-gfx", _rocm_torch("2.6.0+rocm6.1", _gpu("AMD Radeon RX 7800 XT", "gfx1101")))


@pytest.mark.parametrize("name,gfx", [
    # Strix Halo, "Radeon 8060S Graphics": ROCm/legacy-rocm-build#5668 ("HIP error: invalid device
    # function" on an AI Max+ 395) and docling-project/docling-serve#342 (rocminfo "Name: gfx1151").
    ("AMD Radeon 8060S Graphics", "gfx1151"),
    ("AMD Instinct MI355X", "gfx950"),
])
def test_gfx950_and_strix_halo_need_torch_210(name, gfx):
    """gfx950/gfx1150/gfx1151 entered every ROCm wheel with pytorch/pytorch#167299 (merged 7 November
    2025, before the 2.10 cut of 10 December 2025); 2.8 and 2.9 ship ROCm 6.3/6.4 only, below the
    ROCm 7.0 check that guarded them before: 2.9.1+rocm6.4 fires, 2.10.0+rocm7.0 is silent."""
    (f,) = fired("torch-rocm-missing-gfx", _rocm_torch("2.9.1+rocm6.4", _gpu(name, gfx)))
    assert "the official wheel torch 2.9.1+rocm6.4" in f.message
    assert "/whl/rocm7." in f.fix and f"carry {gfx}" in f.fix
    assert not fired("torch-rocm-missing-gfx", _rocm_torch("2.10.0+rocm7.0", _gpu(name, gfx)))


def test_radeon_780m_gfx1103_is_carried_from_213():
    """Radeon 780M iGPU (gfx1103, Phoenix; named so in ROCm/vllm#880): gfx1103 entered
    PYTORCH_ROCM_ARCH with pytorch/pytorch#179653 (landed by 17 April 2026, per #179788), after the
    2.11 release and before the 2.13 cut (9 June 2026). 2.11.0+rocm7.2 fires and its fix names the
    2.13 wheels, the first known to carry it; 2.13.0+rocm7.1 is silent."""
    gpu = _gpu("AMD Radeon 780M", "gfx1103")
    (f,) = fired("torch-rocm-missing-gfx", _rocm_torch("2.11.0+rocm7.2", gpu))
    assert '"torch>=2.13,<2.14"' in f.fix and "/whl/rocm7.2" in f.fix
    assert not fired("torch-rocm-missing-gfx", _rocm_torch("2.13.0+rocm7.1", gpu))


@pytest.mark.parametrize("version", ["2.12.0+rocm7.2", "2.12.1+rocm7.1", "2.14.0+rocm7.2", "2.14.0+rocm7.14"])
def test_unsourced_rocm_releases_are_not_guessed(version):
    """2.12 (gfx1103's #179653 landed between 8 and 17 April 2026, around the 15 April cut) and 2.14
    (script reworked for TheRock in July 2026, text not readable) have no primary source: their list
    is unknown, never borrowed from a neighbouring release."""
    assert wheels.wheel_arch_list(version) is None


def test_first_toolkit_reads_a_capability_or_nvcc_digits_alike():
    # cuda.toml [arch_min_toolkit]: one lookup for "8.9" (a GPU's capability) and "89"/"90a" (nvcc's sm_ digits)
    assert wheels.first_toolkit_for("8.9") == wheels.first_toolkit_for("89") == "11.8"
    assert wheels.first_toolkit_for("90a") == "12.0"
    assert wheels.first_toolkit_for("1.0") is None
