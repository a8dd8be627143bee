"""The node- and scheduler-side rules on the facts real pastes give (fixtures/pastes, SOURCES.md):
each fires on the paste that shows its cause and keeps silent on one that shows another."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts


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


# Verbatim lines of public forum threads (code index file ids 56883001384 and 57021943349; lines kept in
# their order, the blocks between them cut): what
# "sudo modprobe nvidia" answered when nvidia-smi could not reach the driver.
MODPROBE_NOT_BUILT = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
                      "NVIDIA driver is installed and running.\n\n"
                      ":~$ sudo modprobe nvidia\n"
                      "modprobe: FATAL: Module nvidia not found in directory /lib/modules/4.15.0-34-generic\n")
MODPROBE_UNSIGNED = (">sudo modprobe -v nvidia\n"
                     "insmod /lib/modules/4.15.0-36-generic/updates/dkms/nvidia.ko \n"
                     "modprobe: ERROR: could not insert 'nvidia': Required key not available\n")


def test_modprobe_says_why_the_nvidia_module_is_not_loaded(tmp_path):
    (hit,) = fired("gpu-driver-unusable", paste_facts(tmp_path, MODPROBE_NOT_BUILT))
    assert "no NVIDIA module" in hit.message and "dkms autoinstall" in hit.fix  # modprobe's line, not nvidia-smi's
    # refused for its signature: secure-boot-blocks-nvidia-module says why; this rule only notes it (info)
    (hit,) = fired("gpu-driver-unusable", paste_facts(tmp_path, MODPROBE_UNSIGNED))
    assert hit.severity == "info" and "secure-boot-blocks-nvidia-module" in hit.message
    (hit,) = fired("secure-boot-blocks-nvidia-module", paste_facts(tmp_path, MODPROBE_UNSIGNED))
    assert "Secure Boot" in hit.message and "mokutil --sb-state" in hit.fix
    # another module missing is not the NVIDIA driver's state
    assert not fired("gpu-driver-unusable", paste_facts(
        tmp_path, "modprobe: FATAL: Module amdgpu not found in directory /lib/modules/6.8.0-45-generic\n"))


# https://github.com/floydhub/dockerfiles/issues/3 (plain docker run: no GPU asked for, none inside)
FLOYDHUB_3 = """```
$ sudo docker run  -t -i floydhub/pytorch:latest-gpu-py3 ipython
Python 3.5.3 (default, Feb 13 2017, 20:35:17) 
Type "copyright", "credits" or "license" for more information.

IPython 5.3.0 -- An enhanced Interactive Python.
?         -> Introduction and overview of IPython's features.
%quickref -> Quick reference.
help      -> Python's own help system.
object?   -> Details about 'object', use 'object??' for extra details.

In [1]: import torch

In [2]: torch.cuda.is_available()
Out[2]: False
```
"""


def test_docker_run_without_gpus_then_no_cuda_gives_the_command_with_gpus(tmp_path):
    from rulekit import paste_facts

    (hit,) = fired("nvidia-container-toolkit-missing", paste_facts(tmp_path, FLOYDHUB_3))
    assert "line 2:" in hit.message and "(line 14)" in hit.message
    assert hit.fix.startswith("sudo docker run --gpus all -t -i floydhub/pytorch:latest-gpu-py3 ipython   #")


def test_docker_run_with_gpus_is_not_read_as_asking_for_none(tmp_path):
    from rulekit import paste_facts

    text = FLOYDHUB_3.replace("docker run  -t", "docker run --gpus all -t")
    assert not fired("nvidia-container-toolkit-missing", paste_facts(tmp_path, text))
