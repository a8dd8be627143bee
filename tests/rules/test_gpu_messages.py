"""The GPU rules that read pasted messages (rules/gpu_messages.py, and the pasted evidence of
GPU001, GPU002, GPU003, SW003, SW004, SW008), each on verbatim lines of real public threads, read
through the real paste path (hpcdoctor.triage.paste.open_paste, the message catalogues) in-process."""

from __future__ import annotations

import pytest

from rulekit import PASTES, facts, fired, paste_facts, recorded_paste_facts, run_rule
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages

# Verbatim excerpts (cut at line ends, never edited), with the thread each comes from.
FABRIC_TORCH_WARNING = (  # https://github.com/microsoft/lisa/issues/2823
    "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout /home/l****t/.local/lib/python3.6/"
    "site-packages/torch/cuda/__init__.py:80: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). "
    "Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 802: system "
    "not yet initialized (Triggered internally at  ../c10/cuda/CUDAFunctions.cpp:112.)\n"
    "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout   return torch._C._cuda_getDeviceCount() > 0\n"
    "2023-06-27 06:27:41.764[18188][DEBUG] lisa.env[generated_4].node[0].cmd[384].stdout gpu count: 0\n")
FABRIC_THC = (  # https://github.com/pytorch/pytorch/issues/35710
    "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp line=50 error=802 : "
    "system not yet initialized\n"
    "RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/conda/conda-bld/pytorch_1579022034529/work/"
    "aten/src/THC/THCGeneral.cpp:50\n")
FABRIC_JAX = (  # https://github.com/jax-ml/jax/issues/24866
    "(base) $ python3 -c \"import jax; jax.numpy.array(0)\"\n"
    "2024-11-12 15:37:25.005059: E external/xla/xla/stream_executor/cuda/cuda_driver.cc:152] failed call to cuInit: INTERNAL: "
    "CUDA error: Failed call to cuInit: CUDA_ERROR_SYSTEM_NOT_READY: system not yet initialized\n")
COMPAT_CUPY = (  # https://github.com/rapidsai/cusignal/issues/398
    "**cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorCompatNotSupportedOnDevice: forward compatibility was "
    "attempted on non supported HW**\n")
COMPAT_GEFORCE = (  # https://github.com/gpustack/gpustack/issues/1254 (its title, as the thread stores it)
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 804: forward compatibility was att\n")
XID79_JOURNAL = (  # https://gist.github.com/ZackMattor/34b6e600e6dc6a1a2b5cb3fc91a0d438
    "Sep 09 15:53:19 saturn kernel: NVRM: GPU at PCI:0000:10:00: GPU-072931a9-3c93-2239-0583-43798217258d | |\n"
    "Sep 09 15:53:19 saturn kernel: NVRM: Xid (PCI:0000:10:00): 79, pid=0, GPU has fallen off the bus. | |\n"
    "Sep 09 15:53:19 saturn kernel: NVRM: GPU 0000:10:00.0: GPU has fallen off the bus. | |\n")
GPU_LOST_SMI = (  # https://github.com/JosephKJ/OWOD/issues/81
    "**\"Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU\"**\n")
FALLEN_OLD_DRIVER = (  # https://pastebin.com/C4RfJB4y
    "- Sep 18 20:58:08 yuri-notebook kernel: [ 1936.510073] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n"
    "- Sep 18 20:58:08 yuri-notebook kernel: [ 1936.510087] NVRM: GPU at 0000:01:00.0 has fallen off the bus.\n")
XID119_GSP = (  # https://github.com/NVIDIA/NVSentinel/pull/1270
    "kernel: [16450076.435595] NVRM: Xid (PCI:0002:00:00): 119, pid=1582259, name=nvc:[driver], Timeout after 6s of waiting "
    "for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).\n")
XID13_AND_109 = (  # https://github.com/leptonai/gpud/pull/46 (dmesg --ctime)
    "> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
    "Exception on (GPC 7, TPC 7, SM 0): Illegal Instruction Parameter\n"
    "> [Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Global "
    "Exception on (GPC 7, TPC 7, SM 0): Multiple Warp Errors\n"
    "> [Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, "
    "errorString CTX SWITCH TIMEOUT, Info 0x58005\n")
XID32_SYSLOG = (  # https://gist.github.com/kohsuke/84ce815d0a8ad85ecaf6
    "Dec 23 23:30:56 rescue kernel: [ 179.437933] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000005 intr 00008000 | |\n")


def one(symbol: str, gathered):
    found = fired(symbol, gathered)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize("text", [FABRIC_TORCH_WARNING, FABRIC_THC, FABRIC_JAX], ids=["torch-warning", "thc", "jax"])
def test_error_802_in_any_wording_is_fabric_manager(tmp_path, text):
    hit = one("nvidia-fabric-manager", paste_facts(tmp_path, text))
    assert "Fabric Manager" in hit.message and "nvidia-fabricmanager" in hit.fix
    assert hit.evidence["message"] in ("cuda:cudaErrorSystemNotReady", "cuda_driver:CUDA_ERROR_SYSTEM_NOT_READY")


def test_error_802_in_the_gpu_operators_cuda_validator_is_fabric_manager():
    # NVIDIA/gpu-operator#1043: the validator's vectorAdd "Failed to allocate device vector A (error code %s)!"
    from rulekit import recorded_paste_facts
    (hit,) = fired("nvidia-fabric-manager",
                   recorded_paste_facts("gpu-operator-1043-cuda-validator-system-not-initialized-fabric-manager.txt"))
    assert "(cudaErrorSystemNotReady, line 8" in hit.message and hit.evidence["message"] == "cuda:cudaErrorSystemNotReady"
    said = find_messages("Failed to launch vectorAdd kernel (error code no kernel image is available for execution on the device)!\n")
    assert [s["id"] for s in said] == ["cuda:cudaErrorNoKernelImageForDevice"]


def test_error_804_is_not_called_fabric_manager_nor_802_forward_compat(tmp_path):
    assert fired("nvidia-fabric-manager", paste_facts(tmp_path, COMPAT_CUPY, "a.txt")) == []
    assert fired("cuda-forward-compat-unsupported", paste_facts(tmp_path, FABRIC_THC, "b.txt")) == []


@pytest.mark.parametrize("text", [COMPAT_CUPY, COMPAT_GEFORCE], ids=["cupy-name", "torch-truncated-title"])
def test_error_804_without_a_datacenter_gpu_drops_the_compat_library(tmp_path, text):
    hit = one("cuda-forward-compat-unsupported", paste_facts(tmp_path, text))
    assert "data-center GPUs only" in hit.message
    assert "grep -v '/compat'" in hit.fix and "LD_LIBRARY_PATH" in hit.fix


def test_error_804_beside_a_datacenter_gpu_restricts_the_visible_devices():
    # A recorded H100 node and the pasted 804: the H100 supports forward compatibility, so the
    # device CUDA refused is another one; CUDA's header says to hide it with CUDA_VISIBLE_DEVICES.
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(COMPAT_CUPY)})
    hit = one("cuda-forward-compat-unsupported", g)
    assert "another visible device" in hit.message and "CUDA_VISIBLE_DEVICES" in hit.fix


@pytest.mark.parametrize("text", [XID79_JOURNAL, GPU_LOST_SMI, FALLEN_OLD_DRIVER], ids=["xid79", "smi-lost", "old-nvrm"])
def test_a_gpu_lost_from_the_bus_is_read_in_every_wording(tmp_path, text):
    hit = one("gpu-fallen-off-bus", paste_facts(tmp_path, text))
    assert "reboot" in hit.fix and "drain" in hit.fix


def test_xid79_names_its_pci_address(tmp_path):
    hit = one("gpu-fallen-off-bus", paste_facts(tmp_path, XID79_JOURNAL))
    assert "(PCI:0000:10:00)" in hit.message and "Xid 79" in hit.message


def test_gsp_timeout_xid_needs_a_reset(tmp_path):
    hit = one("gpu-xid-reset-required", paste_facts(tmp_path, XID119_GSP))
    assert hit.evidence["xids"] == [119] and "nvidia-smi -r" in hit.fix


def test_dcgms_drain_and_reset_recovery_action_needs_a_reset(tmp_path):
    # no public paste holds it: NVIDIA/DCGM dcgmlib/dcgm_errors.h's DCGM_FR_GPU_RECOVERY_DRAIN_RESET format
    # string with values filled in (dcgm_diag.toml's example)
    text = "GPU 2 operating at reduced capacity due to a fault. Recovery action: 2 (DRAIN_AND_RESET).\n"
    hit = one("gpu-xid-reset-required", paste_facts(tmp_path, text))
    assert "DCGM_FR_GPU_RECOVERY_DRAIN_RESET" in hit.message and "nvidia-smi -r" in hit.fix
    # quiescing peer-to-peer traffic (DRAIN_P2P) is not a reset
    p2p = "GPU 2 requires peer-to-peer traffic to be quiesced. Recovery action: 3 (DRAIN_P2P).\n"
    assert not fired("gpu-xid-reset-required", paste_facts(tmp_path, p2p))


def test_application_xids_are_told_apart_from_reset_xids(tmp_path):
    g = paste_facts(tmp_path, XID13_AND_109)
    reset = one("gpu-xid-reset-required", g)
    app = one("gpu-xid-application-fault", g)
    assert reset.evidence["xids"] == [109]
    assert app.evidence["xids"] == [13] and "compute-sanitizer" in app.fix


def test_a_syslog_xid_32_is_an_application_fault_not_a_reset(tmp_path):
    g = paste_facts(tmp_path, XID32_SYSLOG)
    assert one("gpu-xid-application-fault", g).evidence["xids"] == [32]
    assert fired("gpu-xid-reset-required", g) == []
    assert fired("gpu-fallen-off-bus", g) == []


@pytest.mark.parametrize("symbol", ["nvidia-fabric-manager", "cuda-forward-compat-unsupported", "gpu-fallen-off-bus",
                                    "gpu-xid-reset-required", "gpu-xid-application-fault"])
def test_a_live_node_has_no_pasted_messages_and_these_rules_stay_silent(symbol):
    findings, skipped = run_rule(symbol, facts("h100-kvm-1gpu"))
    assert findings == [] and skipped == []


# Rules that judged live facts only, now reading the same condition from a pasted message.
SMI_NO_DRIVER = (  # https://github.com/ci-for-research/self-hosted-runners/issues/40
    "Nvidia driver (version 440) is already installed but when I run nvidia-smi command I get the following error.\n"
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver "
    "is installed and running.\n")
NVML_MISMATCH = (  # https://github.com/illinois-scicomp/machine-shop-maintenance/issues/60
    "idf2@koelsch:~$ nvidia-smi\n"
    "Failed to initialize NVML: Driver/library version mismatch\n")
NVML_MISMATCH_OLD_TEXT = (  # https://github.com/rapidsai/dask-cuda/issues/949 (its title)
    "pynvml.nvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version mismatch.\n")
CUDA_803 = (  # https://github.com/vllm-project/vllm/issues/15335 (its title)
    "[Bug]: RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda "
    "driver combination\n")
SMI_NO_LIBRARY = (  # https://github.com/NVIDIA/nvidia-docker/issues/1163
    "docker run --runtime=nvidia --rm nvidia/cuda:9.0-base nvidia-smi\n\n"
    "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display Driver is "
    "properly installed and present in your system.\n"
    "Please also try adding directory that contains libnvidia-ml.so to your system PATH.\n")
ECC_TORCH = (  # https://github.com/tloen/alpaca-lora/issues/123
    "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
ECC_TF = (  # https://github.com/nagadit/DeepFaceLab_Linux/issues/89
    "F tensorflow/stream_executor/lib/statusor.cc:34] Attempting to fetch value instead of handling error Internal: failed "
    "initializing StreamExecutor for CUDA device ordinal 0: Internal: failed call to cuDevicePrimaryCtxRetain: "
    "CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered\n")
XID63_REMAP = (  # https://raw.githubusercontent.com/stas00/ml-engineering/7bc7c3054eb93c277a4755c597ae0864d77a63f1/compute/accelerator/nvidia/debug.md
    "NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.\n")
NO_KERNEL_IMAGE_RTX3060 = (  # https://github.com/williamyang1991/DualStyleGAN/issues/67 (title, then the description)
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    ">>> torch.cuda.get_device_name(0)\n"
    "'NVIDIA GeForce RTX 3060'\n")
NO_KERNEL_IMAGE_PLAIN = (  # https://github.com/facebookresearch/detectron2/issues/235
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n")
NO_KERNEL_IMAGE_FRAMEWORK = (  # https://github.com/sgl-project/sglang/issues/831 (a framework's own wording)
    "RuntimeError: RMSNorm failed with error code no kernel image is available for execution on the device\n")
DRIVER_35_SAMPLES = (  # https://github.com/tensorflow/tensorflow/issues/990
    " CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
    "cudaGetDeviceCount returned 35\n"
    "-> CUDA driver version is insufficient for CUDA runtime version\n"
    "Result = FAIL\n")
DRIVER_35_CTRANSLATE2 = (  # https://github.com/SYSTRAN/faster-whisper/issues/363
    "    self.model = ctranslate2.models.Whisper(\n"
    "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n")
HIP_NO_CODE_OBJECT = (  # https://github.com/pytorch/pytorch/issues/73534
    "whether I install from source of via pip the error ```hipErrorNoBinaryForGpu: Unable to find code object for all "
    "current devices!``` is thrown when I try to use CUDA, even though C HIP code compiles and runs perfectly well. \n")


@pytest.mark.parametrize("text, said", [
    (SMI_NO_DRIVER, "not loaded"), (NVML_MISMATCH, "not the version"), (NVML_MISMATCH_OLD_TEXT, "not the version"),
    (CUDA_803, "not the version"), (SMI_NO_LIBRARY, "no NVIDIA driver libraries")],
    ids=["smi-no-driver", "nvml-mismatch", "nvml-mismatch-old-text", "cuda-803", "smi-no-library"])
def test_a_pasted_driver_failure_is_gpu_driver_unusable(tmp_path, text, said):
    hit = one("gpu-driver-unusable", paste_facts(tmp_path, text))
    assert said in hit.message


def test_a_version_mismatch_is_answered_with_a_reboot_not_a_modprobe(tmp_path):
    fix = one("gpu-driver-unusable", paste_facts(tmp_path, NVML_MISMATCH)).fix
    assert "reboot" in fix and "modprobe" not in fix


@pytest.mark.parametrize("text", [ECC_TORCH, ECC_TF], ids=["torch", "tensorflow-driver-api"])
def test_a_pasted_uncorrectable_ecc_error_is_read_without_gpu_facts(tmp_path, text):
    hit = one("ecc-uncorrectable-errors", paste_facts(tmp_path, text))
    assert "dcgmi diag" in hit.fix


def test_xid_63_is_a_pending_remap_at_warning_level(tmp_path):
    hit = one("row-remap-pending", paste_facts(tmp_path, XID63_REMAP))
    assert hit.severity == "warning" and "nvidia-smi -r" in hit.fix


def test_plain_no_kernel_image_with_the_gpu_named_gets_a_build_for_it(tmp_path):
    hit = one("torch-missing-arch", paste_facts(tmp_path, NO_KERNEL_IMAGE_RTX3060))
    assert "8.6" in hit.message and "pip install" in hit.fix


def test_plain_no_kernel_image_without_a_gpu_asks_for_the_arch_list(tmp_path):
    hit = one("torch-missing-arch", paste_facts(tmp_path, NO_KERNEL_IMAGE_PLAIN))
    assert "get_arch_list" in hit.fix


def test_a_frameworks_own_no_kernel_image_is_not_torchs(tmp_path):
    findings, _ = run_rule("torch-missing-arch", paste_facts(tmp_path, NO_KERNEL_IMAGE_FRAMEWORK))
    assert findings == []


@pytest.mark.parametrize("text", [DRIVER_35_SAMPLES, DRIVER_35_CTRANSLATE2], ids=["cuda-samples", "ctranslate2"])
def test_error_35_in_any_wording_is_driver_too_old(tmp_path, text):
    hit = one("driver-too-old", paste_facts(tmp_path, text))
    assert "nvidia-smi" in hit.fix


def test_hip_no_code_object_is_the_rocm_build_missing_the_gfx(tmp_path):
    g = paste_facts(tmp_path, HIP_NO_CODE_OBJECT)
    assert "rocminfo" in one("torch-rocm-missing-gfx", g).fix
    assert run_rule("torch-missing-arch", g)[0] == []


def test_each_new_rule_fires_on_its_own_message_and_on_no_other(tmp_path):
    g802, g804 = paste_facts(tmp_path, FABRIC_THC, "802.txt"), paste_facts(tmp_path, COMPAT_CUPY, "804.txt")
    g79, g119 = paste_facts(tmp_path, XID79_JOURNAL, "79.txt"), paste_facts(tmp_path, XID119_GSP, "119.txt")
    g32 = paste_facts(tmp_path, XID32_SYSLOG, "32.txt")
    assert fired("nvidia-fabric-manager", g802)
    assert not fired("nvidia-fabric-manager", g804)
    assert fired("cuda-forward-compat-unsupported", g804)
    assert not fired("cuda-forward-compat-unsupported", g79)
    assert fired("gpu-fallen-off-bus", g79)
    assert not fired("gpu-fallen-off-bus", g119)
    assert fired("gpu-xid-reset-required", g119)
    assert not fired("gpu-xid-reset-required", g79)
    assert fired("gpu-xid-application-fault", g32)
    assert not fired("gpu-xid-application-fault", g119)


def test_torchs_no_driver_warning_on_a_cpu_host_is_no_driver_fault(tmp_path):
    # https://github.com/HIT-SCIR/ltp/issues/468: a machine without a GPU; torch's warning is a fact there.
    text = ("UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that you have an "
            "NVIDIA GPU and installed a driver\n")
    findings, _ = run_rule("gpu-driver-unusable", paste_facts(tmp_path, text))
    assert findings == []


def test_a_pasted_xid_48_is_an_uncorrectable_ecc_error_and_its_64_a_faulty_gpu(tmp_path):
    # https://github.com/NVIDIA/gpu-operator/issues/1146 (syslog layout with the dmesg timestamp)
    text = ("Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, "
            "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x7fffa8860 "
            "partition 7, subpartition 1.\n"
            "Dec  2 11:38:47 worker4 kernel: [  219.471050] NVRM: Xid (PCI:0000:07:00): 64, pid='<unknown>', name=<unknown>, "
            "Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x00000000007fffa8).\n")
    g = paste_facts(tmp_path, text)
    assert "Xid 48" in one("ecc-uncorrectable-errors", g).message
    # Xid 64 (a row remap not recorded: NVIDIA's RMA thresholds) is gpu-hardware-faulty's (test_gpu_faults.py)
    assert "Xid 64" in one("gpu-hardware-faulty", g).message
    assert not fired("gpu-xid-reset-required", g)


@pytest.mark.parametrize("text", [
    # https://github.com/AILab-CVC/YOLO-World/issues/385
    "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n",
    # https://github.com/pytorch/pytorch/issues/2704 (the older runtime's wording)
    "RuntimeError: cuda runtime error (46) : all CUDA-capable devices are busy or unavailable at "
    "/opt/conda/conda-bld/pytorch_1502004572321/work/torch/lib/THC/generic/THCStorage.cu:66\n"], ids=["cuda11+", "old-thc"])
def test_error_46_in_both_wordings_points_at_the_compute_mode(tmp_path, text):
    hit = one("compute-mode-restricted", paste_facts(tmp_path, text))
    assert "compute_mode" in hit.fix


def test_busy_after_a_launch_failure_is_the_fault_not_the_compute_mode(tmp_path):
    # https://github.com/karpathy/neuraltalk2/issues/127: a kernel failed, and the GPU stayed busy until a
    # reboot (the reporter's GPU also drove the display); no compute mode was involved.
    text = ('### ## "THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-6961/cutorch/lib/THC/generic/THCStorage.c '
            'line=147 error=4 : unspecified launch failure"\n'
            'Sometimes the error message occurs after 50000 iterations, sometimes it occurs around 8000 iterations. '
            'After getting the "unspecified launch failure", I tried to run the train.lua script again. Then, I get the '
            'error message: "all CUDA-capable devices are busy or unavailable". I have to restart the computer to run '
            'the script again.\n')
    assert {"cuda:cudaErrorDevicesUnavailable", "cuda:cudaErrorLaunchFailure"} <= {s["id"] for s in find_messages(text)}
    findings, _skipped = run_rule("compute-mode-restricted", paste_facts(tmp_path, text))
    assert not findings


# The node's own kernel log (checks/kernel_log.py): the same Xid lines, read where the log is.


def _node_with_kernel_log(tmp_path, dmesg: tuple, journal: tuple = None):
    """The recorded H100 node with its kernel log recorded as (rc, stdout, stderr) of dmesg and of
    journalctl -k; None leaves a source unrecorded."""
    import json
    import shutil

    from conftest import NODES
    from hpcdoctor.sysroot import ReplaySysRoot

    node = tmp_path / "node"
    shutil.copytree(NODES / "h100-kvm-1gpu", node)
    index = json.loads((node / "cmd" / "index.json").read_text())
    from hpcdoctor.checks.kernel_log import SOURCES
    for n, (argv, rec) in enumerate(zip(SOURCES, (dmesg, journal))):
        if rec is not None:
            (node / "cmd" / f"klog{n}.txt").write_text(rec[1])
            index.append({"argv": argv, "rc": rec[0], "stdout": f"klog{n}.txt", "stderr": rec[2]})
    (node / "cmd" / "index.json").write_text(json.dumps(index))
    return pipeline.gather(ReplaySysRoot(node), Options())


DMESG_CLOSED = (1, "", "dmesg: read kernel buffer failed: Operation not permitted\n")  # util-linux's words


def test_a_gpu_that_fell_off_the_bus_is_found_in_the_nodes_own_kernel_log(tmp_path):
    g = _node_with_kernel_log(tmp_path, DMESG_CLOSED, (0, XID79_JOURNAL, ""))
    assert g["facts"]["kernel_log"]["source"].startswith("journalctl -k")
    hit = one("gpu-fallen-off-bus", g)
    assert "Xid 79" in hit.message and hit.evidence["kernel_log.line"] == 2


def test_an_application_xid_in_the_kernel_log_is_another_jobs_and_stays_out(tmp_path):
    # The PR quotes `dmesg --ctime` in a Markdown block quote: the output is its lines without "> ".
    dmesg = "".join(line[2:] + "\n" for line in XID13_AND_109.splitlines())
    g = _node_with_kernel_log(tmp_path, (0, dmesg, ""))
    assert [m["key"] for m in g["facts"]["kernel_log"]["messages"]]  # read...
    assert not fired("gpu-xid-application-fault", g)  # ...but not held against this job
    assert one("gpu-xid-reset-required", g)  # Xid 109 is the GPU's own: a reset


def test_a_kernel_log_nobody_may_read_is_unknown_with_both_reasons(tmp_path):
    g = _node_with_kernel_log(tmp_path, DMESG_CLOSED, (1, "", "No journal files were found.\n"))
    reason = g["unknown"]["kernel_log"]
    assert "Operation not permitted" in reason and "No journal files were found" in reason
    assert not fired("gpu-fallen-off-bus", g)


@pytest.mark.parametrize("text", [
    # https://github.com/pytorch/pytorch/issues/5736 (title)
    "# gpu memory not released after run `sudo kill [pytorch process id]`\n",
    # https://github.com/PaddlePaddle/PaddleOCR/issues/2074 (its surviving children found with fuser)
    "# kill进程显卡不释放\n\nnohup 启动训练进程之后直接kill主进程显卡不会释放显存\n"], ids=["en", "zh"])
def test_memory_kept_after_a_kill_points_at_the_surviving_children(tmp_path, text):
    hit = one("gpu-memory-in-use", paste_facts(tmp_path, text))
    assert "after the job was killed" in hit.message and "line 1" in hit.message
    assert hit.fix.startswith("fuser -v /dev/nvidia*")


def test_memory_not_released_without_a_kill_is_only_the_faqs_question():
    # https://github.com/facebookresearch/XLM/issues/40: no kill named, so not the kill's reading (a
    # warning); memory kept once the program ended is PyTorch's FAQ question, answered at info
    said = find_messages("Hi, when the program ends, the memory of the GPU0 is released, but the other GPUs "
                         "are not released. Why that ?\n")
    assert [s["id"] for s in said] == ["faq_pytorch:gpu-memory-kept-after-exit-said-first"]


# https://github.com/NVIDIA/nvidia-container-toolkit/issues/714 (MPS started on the host, the client in a container)
MPS_714 = ("`RuntimeError: Unexpected error from cudaGetDeviceCount().  Did you run some cuda functions before calling "
           "NumCudaDevices() that might have already set an error?  Error 805: MPS client failed to connect to the MPS "
           "control daemon or the MPS server.`\n")


def test_error_805_points_at_the_mps_pipe_directory(tmp_path):
    (hit,) = fired("mps-client-cannot-connect", paste_facts(tmp_path, MPS_714))
    assert "line 1" in hit.message
    assert hit.fix.startswith("echo get_server_list | nvidia-cuda-mps-control")
    assert "CUDA_MPS_PIPE_DIRECTORY" in hit.fix


def test_another_cuda_init_error_is_not_mps(tmp_path):
    # error 802 through the same cudaGetDeviceCount() warning: Fabric Manager's, not MPS's
    assert not fired("mps-client-cannot-connect", paste_facts(tmp_path, FABRIC_TORCH_WARNING))


@pytest.mark.parametrize("text", [
    # https://github.com/Sygil-Dev/sygil-webui/issues/1488 (Windows, the GPU drives the desktop)
    "`RuntimeError: CUDA error: the launch timed out and was terminated\n"
    "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.\n",
    # https://github.com/pytorch/pytorch/issues/10853 (the old runtime's code 6 through THC)
    "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1532582123400/work/aten/src/THC/generic/THCStorage.cpp line=36 "
    "error=6 : the launch timed out and was terminated\n"], ids=["cuda10+", "old-thc"])
def test_launch_timeout_points_at_the_display_watchdog(tmp_path, text):
    (hit,) = fired("gpu-display-watchdog", paste_facts(tmp_path, text))
    assert "run-time limit" in hit.message and "line 1" in hit.message
    assert hit.fix.startswith("nvidia-smi -q | grep -E 'Product Name|Display (Mode|Active)'")


def test_a_launch_failure_is_not_the_watchdog(tmp_path):
    # https://github.com/karpathy/neuraltalk2/issues/127: an unspecified launch failure names no time limit
    text = ('"THCudaCheck FAIL file=/tmp/luarocks_cutorch-scm-1-6961/cutorch/lib/THC/generic/THCStorage.c '
            'line=147 error=4 : unspecified launch failure"\n')
    assert not fired("gpu-display-watchdog", paste_facts(tmp_path, text))


def test_a_driver_nvidia_smi_cannot_reach_is_checked_against_the_jobs_allocation_first():
    # model-angelo#60: the same nvidia-smi words came from a Slurm job given no GPU; the paste names no
    # Slurm, so the driver reading stays, and its fix asks the allocation before the module
    (f,) = fired("gpu-driver-unusable", recorded_paste_facts("model-angelo-60-nvidia-smi-in-job-without-gpu.txt"))
    assert "a Slurm job given no GPU" in f.message
    assert f.fix.splitlines()[0].startswith("scontrol show job \"$SLURM_JOB_ID\"") and "lsmod" in f.fix


def test_the_drivers_gsp_timeout_banner_needs_a_reset_and_its_heartbeat_lines_alone_do_not():
    # open-gpu-kernel-modules#1230: GSP stops answering on a GH100; the banner is the driver's own
    # statement (Xid 119's state). The heartbeat lines above it are read but feed no rule: laptops
    # print them while their GPU keeps working (open-gpu-kernel-modules#1064).
    g = recorded_paste_facts("open-gpu-kernel-modules-1230-gsp-timeout-cut.txt")
    told = {s["id"]: s for s in g["facts"]["ticket"]["symptoms"]}
    assert {"nvrm:heartbeat-timed-out-currenttimems-heartbeat", "nvrm:gsp-timeout-banner"} <= set(told)
    assert not told["nvrm:heartbeat-timed-out-currenttimems-heartbeat"]["rules"]
    f = one("gpu-xid-reset-required", g)
    assert f.severity == "error" and "GSP firmware did not answer an RPC in time" in f.message
    assert "line 8" in f.message and "nvidia-smi -r" in f.fix
    assert f.evidence["events"] == ["nvrm:gsp-timeout-banner"]


def test_heartbeat_lines_without_the_banner_are_not_a_reset(tmp_path):
    # the first two lines of the same paste, alone
    lines = (PASTES / "open-gpu-kernel-modules-1230-gsp-timeout-cut.txt").read_text().splitlines()[:2]
    assert not fired("gpu-xid-reset-required", paste_facts(tmp_path, "\n".join(lines) + "\n"))


DBE_BLOG = "sirzzang-blog-xid48-171-63-154-dbe-rtx-pro-6000.txt"  # journalctl -k of a real DBE, SOURCES.md


def test_a_real_dbe_chain_is_an_uncorrectable_error_and_a_pending_remap():
    # Xid 48, its DRAM detail Xid 171, Xid 63 and Xid 154 "Drain and Reset" from one RTX PRO 6000's journal
    from conftest import report_of
    found = {f["symbol"]: f for f in report_of("check", "--from", str(PASTES / DBE_BLOG))["findings"]}
    ecc = found["ecc-uncorrectable-errors"]
    assert ecc["severity"] == "error" and ecc["evidence"]["ticket.line"] == 8
    # NVIDIA's name, whole: not the catalogue's wording cut inside its "(driver's published name: ..." aside
    assert "(Xid 48 (Double Bit ECC Error), line 8)" in ecc["message"]
    remap = found["row-remap-pending"]
    assert remap["severity"] == "warning" and remap["evidence"]["ticket.line"] == 11
    # the reset names the GPU the Xid names, by the PCI bus id nvidia-smi -i takes (function 0)
    assert "sudo nvidia-smi -r -i 0000:55:00.0" in remap["fix"]


def test_xid_171_alone_is_the_uncorrectable_dram_error_it_details(tmp_path):
    # the same journal without its Xid 48 lines (cut at line ends): the DRAM detail still says uncorrectable
    lines = (PASTES / DBE_BLOG).read_text(encoding="utf-8").splitlines(keepends=True)
    kept = "".join(ln for ln in lines if "): 48," not in ln)
    hit = one("ecc-uncorrectable-errors", paste_facts(tmp_path, kept))
    assert "Xid 171 (UNCORRECTABLE_DRAM_ERROR)" in hit.message and hit.evidence["message"] == "xid:UNCORRECTABLE_DRAM_ERROR"
    assert "Uncorrectable DRAM error in FBPA 3" in hit.evidence["ticket.text"]


# NCCL's "nvmlInit_v2() failed: %s" (nccl.toml nvml-init-failed) ends in NVML's own error string: no
# public paste of it was found, so these are NCCL's format string (src/misc/nvmlwrap.cc line 142) filled in.
NCCL_NVML = "node1:1234:1234 [0] misc/nvmlwrap.cc:142 NCCL WARN nvmlInit_v2() failed: {}\n"


@pytest.mark.parametrize("error, said", [("Driver/library version mismatch", "not the version"),
                                         ("Driver Not Loaded", "not loaded")])
def test_nccls_nvml_init_failure_names_the_drivers_state(tmp_path, error, said):
    hit = one("gpu-driver-unusable", paste_facts(tmp_path, NCCL_NVML.format(error)))
    assert said in hit.message and "nvmlInit_v2() failed" in hit.message


@pytest.mark.parametrize("error", ["Unknown Error", "Insufficient Permissions"])
def test_nccls_nvml_init_failure_with_another_error_is_not_the_driver(tmp_path, error):
    findings, _ = run_rule("gpu-driver-unusable", paste_facts(tmp_path, NCCL_NVML.format(error)))
    assert findings == []   # not fired("gpu-driver-unusable" on words that do not name the driver's state
