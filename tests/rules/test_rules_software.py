"""Software-stack rules on the recorded H100 node's stack (collect_env) and the real CPU torch."""

from __future__ import annotations

from rulekit import facts, fired, nvsmi_node, run_rule
from hpcdoctor.knowledge.wheels import arch_supported
from hpcdoctor.rules._builds import driver_supports

H100 = "h100-kvm-1gpu"


def test_arch_support_logic():
    assert arch_supported("9.0", ["sm_80", "sm_90"])
    assert arch_supported("8.6", ["sm_80"])            # same major, older minor: SASS runs
    assert arch_supported("12.0", ["sm_90", "compute_90"])  # PTX JIT forward
    assert not arch_supported("12.0", ["sm_50", "sm_60", "sm_70", "sm_80", "sm_86", "sm_90"])
    assert not arch_supported("8.6", ["sm_90a"]) and arch_supported("9.0", ["sm_90a"])
    assert not arch_supported("3.7", ["sm_50", "sm_60"])


def test_driver_support_logic():
    assert driver_supports("580.159.04", "13.0")[0]
    assert driver_supports("535.104.05", "12.4")[0]           # minor-version compatibility
    assert not driver_supports("470.82.01", "12.1")[0]
    assert not driver_supports("535.104.05", "13.0")[0]


def test_import_failed():
    g = facts(H100, **{"torch.import_error": "ImportError: libcudnn.so.9: cannot open shared object file"})
    (f,) = fired("torch-import-failed", g)
    assert "libcudnn.so.9" in f.message
    assert not fired("torch-import-failed", facts(H100))


def test_cpu_only_build_on_gpu_node():
    (f,) = fired("torch-cpu-only", facts(H100, **{"torch.build": "cpu", "torch.version": "2.11.0+cpu", "torch.cuda": None}))
    assert "CPU-only" in f.message and "download.pytorch.org/whl/cu" in f.fix
    assert not fired("torch-cpu-only", facts(H100))


def test_cpu_only_conda_build_string():
    g = facts(H100, **{"torch.conda_list": {"pytorch": {"version": "2.1.0", "build": "cpu_mkl_py310h8f5b7b4_100"}},
                       "torch.build": "cpu"})
    assert fired("torch-cpu-only", g)


def test_cpu_build_on_cpu_node_is_fine():
    g = facts("cpu-kvm-2core", **{"torch.installed": True, "torch.build": "cpu", "torch.version": "2.13.0+cpu"})
    assert not fired("torch-cpu-only", g)


def test_missing_arch():
    g = facts(H100, **{"torch.arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"]})
    (f,) = fired("torch-missing-arch", g)
    assert "sm_90" in f.message and "no kernel image" in f.message
    assert not fired("torch-missing-arch", facts(H100, **{"torch.arch_list": ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]}))


def test_driver_too_old():
    # A driver too old for the runtime: torch cannot initialise CUDA.
    g = facts(H100, **{"nvidia.driver_version": "535.161.08", "torch.cuda_available": False})
    (f,) = fired("driver-too-old", g)
    assert "CUDA 13.0" in f.message and "580.65.06" in f.message
    assert not fired("driver-too-old", facts(H100))  # 580.159.04 runs CUDA 13.0


def test_driver_too_old_silent_when_forward_compatibility_works():
    # torch initialised CUDA 13.0 on a 535 driver: the cuda-compat package is in use, not an error.
    g = facts(H100, **{"nvidia.driver_version": "535.161.08", "torch.cuda_available": True})
    assert not fired("driver-too-old", g)


def test_duplicate_libraries():
    libs = {"libnccl": ["/venv/lib/nvidia/nccl/lib/libnccl.so.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.1"],
            "libgomp": ["/venv/torch/lib/libgomp.so.1"], "libiomp5": ["/opt/intel/lib/libiomp5.so"]}
    found = fired("duplicate-libraries", facts(H100, **{"torch.loaded_libraries": libs}))
    assert len(found) == 2 and "libnccl" in found[0].message and "OpenMP" in found[1].message
    assert not fired("duplicate-libraries", facts(H100, **{"torch.loaded_libraries": {"libnccl": ["/a/libnccl.so.2"]}}))


def test_conda_and_pip_copies_of_the_cuda_libraries():
    # Library-list entries as collect_env prints them (conda's channel column; pip via conda is pypi_0).
    conda = {"cudatoolkit": {"version": "11.3.1", "build": "h2bc3f7f_2", "channel": "defaults"},
             "nvidia-nccl-cu12": {"version": "2.20.5", "build": "pypi_0", "channel": "pypi"}}
    pip = {"torch": "2.3.1", "nvidia-cuda-runtime-cu12": "12.1.105", "nvidia-nccl-cu12": "2.20.5"}
    (hit,) = fired("duplicate-libraries", facts(H100, **{"torch.conda_list": conda, "torch.pip": pip}))
    assert "cudatoolkit 11.3.1 from conda" in hit.message and "nvidia-cuda-runtime-cu12 12.1.105 from pip" in hit.message
    # nccl seen by conda as pip's own install is one copy, and conda's cudatoolkit alone is fine.
    del pip["nvidia-cuda-runtime-cu12"]
    assert not fired("duplicate-libraries", facts(H100, **{"torch.conda_list": conda, "torch.pip": pip}))


def test_torch_installed_twice():
    installs = [{"version": "2.4.0", "location": "/home/u/.local/lib/python3.11/site-packages"},
                {"version": "2.11.0", "location": "/venv/lib/python3.11/site-packages"}]
    (f,) = fired("duplicate-libraries", facts(H100, **{"torch.installs": installs}))
    assert "2 places" in f.message


def test_tf32_quiet_from_torchs_default_alone():
    assert "float32_matmul_precision" in facts(H100)["facts"]["torch"]["from_knowledge"]
    assert not fired("tf32-disabled", facts(H100))


def test_tf32_disabled_when_the_setting_was_read():
    (f,) = fired("tf32-disabled", facts(H100, **{"torch.from_knowledge": []}))
    assert "highest" in f.message and f.fix.startswith('torch.set_float32_matmul_precision("high")')
    assert not fired("tf32-disabled", facts(H100, **{"torch.from_knowledge": [],
                                                      "torch.float32_matmul_precision": "high"}))


def test_tf32_disabled_when_a_paste_shows_fp32_work():
    line = ("You are using a CUDA device ('NVIDIA H100 80GB HBM3') that has Tensor Cores. To properly utilize them, "
            "you should set `torch.set_float32_matmul_precision('medium' | 'high')` which will trade-off precision")
    from hpcdoctor.triage.messages import find_messages

    (f,) = fired("tf32-disabled", facts(H100, **{"ticket.symptoms": find_messages(line)}))
    assert "highest" in f.message


def test_tf32_silent_on_pre_ampere(tmp_path):
    g = nvsmi_node("datakit_8x_v100s-pcie-32gb.xml", tmp_path)
    g["facts"]["torch"] = {"installed": True, "build": "cuda", "version": "2.4.0", "float32_matmul_precision": "highest"}
    assert not fired("tf32-disabled", g)


def test_bf16_unsupported_on_v100(tmp_path):
    g = nvsmi_node("datakit_8x_v100s-pcie-32gb.xml", tmp_path, env={"ACCELERATE_MIXED_PRECISION": "bf16"})
    (f,) = fired("bf16-unsupported", g)
    assert "fp16" in f.fix
    g = nvsmi_node("datakit_8x_v100s-pcie-32gb.xml", tmp_path / "b", env={"ACCELERATE_MIXED_PRECISION": "fp16"})
    assert not fired("bf16-unsupported", g)


def test_bf16_fpmath_on_cpu_without_bf16(tmp_path):
    from rulekit import cpuinfo_facts

    g = cpuinfo_facts("linux-rocky8-a64fx", tmp_path)
    g["facts"]["env"] = {"vars": {"DNNL_DEFAULT_FPMATH_MODE": "BF16"}}
    (f,) = fired("bf16-unsupported", g)
    assert "a64fx" in f.message
    g["facts"]["env"] = {"vars": {}}
    assert not fired("bf16-unsupported", g)


def test_software_rules_skip_when_torch_unknown():
    g = facts(H100, torch=None)
    g["unknown"]["torch"] = "the torch probe did not finish within 10s"
    findings, skipped = run_rule("torch-cpu-only", g)
    assert not findings and "did not finish" in skipped[0]["reason"]
