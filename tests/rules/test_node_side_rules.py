"""The node- and scheduler-side rules on the facts real pastes give (fixtures/pastes, SOURCES.md):
each fires on the paste that shows its cause and keeps silent on one that shows another."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_slurm_gpu_request_rejected():
    (hit,) = fired("slurm-gpu-request-rejected", recorded_paste_facts("radical-saga-835-gres-option-unsupported-selecttype.txt"))
    assert "select/cons_tres" in hit.message and "scontrol show config" in hit.fix
    (hit,) = fired("slurm-gpu-request-rejected", recorded_paste_facts("slurm-22.05-grestypes-gpu-node-without-gpus.txt"))
    assert "Requested node configuration is not available" in hit.message and "GPU request, line" in hit.message
    # a drained node is the node's configuration, not a refused request
    assert not fired("slurm-gpu-request-rejected", recorded_paste_facts("slurm-22.05-gres-count-reported-lower-drain.txt"))


def test_slurm_gres_count_mismatch():
    (hit,) = fired("slurm-gres-count-mismatch", recorded_paste_facts("awsome-distributed-195-gres-gpu-count-reported-lower.txt"))
    assert "reported 0 gres/gpu where slurm.conf configures 8" in hit.message
    assert not fired("slurm-gres-count-mismatch", recorded_paste_facts("slurm-22.05-no-grestypes-gpu-requests.txt"))


def test_nvidia_container_toolkit_missing():
    (hit,) = fired("nvidia-container-toolkit-missing", recorded_paste_facts("xagent-273-docker-gpus-no-container-toolkit.txt"))
    assert "could not select device driver" in hit.message and "systemctl restart docker" in hit.fix
    # the host's driver failing under nvidia-container-cli is the driver, not a missing toolkit
    assert not fired("nvidia-container-toolkit-missing", recorded_paste_facts("dockwater-10-container-cli-nvml-driver-not-loaded.txt"))


def test_amd_hsmp_driver_missing():
    (hit,) = fired("amd-hsmp-driver-missing", recorded_paste_facts("amdsmi-84-esmi-not-initialized-hsmp.txt"))
    assert "ESMI Not initialized" in hit.message and "/dev/hsmp" in hit.fix
    # a ROCm node's report with amd-smi's GPU side working says nothing of the CPUs' driver
    assert not fired("amd-hsmp-driver-missing", recorded_paste_facts("vllm-45751-rocm-new-format-tail-cut.txt"))


def test_cuinit_unknown_error_is_the_driver_state_and_a_retyped_unknown_runtime_is_the_toolkit():
    (hit,) = fired("gpu-driver-unusable", recorded_paste_facts("jaxsim-50-cuinit-unknown-after-suspend.txt"))
    assert "nvidia_uvm" in hit.message and "modprobe nvidia_uvm" in hit.fix
    # the user's own "unknow runtime specified nvidia" is docker's message, retyped
    (hit,) = fired("nvidia-container-toolkit-missing", recorded_paste_facts("netdata-glibc-2-unknown-runtime-nvidia.txt"))
    assert "runtime named nvidia" in hit.message
