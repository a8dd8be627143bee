"""Messages set I showed unread (set I was unsealed after its final sealed score): ENOSPC as a user
retells Python's title and as mksquashfs prints it (pyxis/enroot), Slurm's accounting kill of a
step over its --mem, and docker run given the GPU's device nodes without the driver's libraries."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, run_rule
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.paste import open_paste

SET_I = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_i"
DEVICES = "nvidia-docker-24-devices-passed-without-driver-libs.txt"


def _facts(name):
    with open_paste([str(SET_I / name)]) as (root, _r, _n):
        return pipeline.gather(root, Options())


@pytest.mark.parametrize("name", ["opennmt-py-373-no-space-left-saving-model.txt", "pyxis-53-squashfs-no-space-on-run.txt"])
def test_enospc_in_these_wordings_is_a_full_file_system(name):
    (f,) = fired("disk-full", _facts(name))
    assert "No space left on device" in f.message


def test_slurms_accounting_kill_is_a_memory_kill():
    (f,) = fired("host-memory-oom-killed", _facts("openbabel-2658-slurm-step-exceeded-memory-limit.txt"))
    assert "exceeded memory limit" in f.message or "Exceeded job memory limit" in f.message


def test_device_nodes_without_the_gpu_option_are_the_containers_run_not_the_hosts_driver():
    facts = _facts(DEVICES)
    (f,) = fired("container-nvidia-libs-not-bound", facts)
    assert "--gpus all" in f.fix
    findings, _skipped = run_rule("driver-too-old", facts)
    assert not findings  # error 35 here is libcuda missing in the container (NVIDIA/nvidia-docker#24)


def test_error_35_without_the_devices_line_stays_driver_too_old(tmp_path):
    lines = [ln for ln in (SET_I / DEVICES).read_text().splitlines() if "returned 35" in ln or "insufficient" in ln]
    (f,) = fired("driver-too-old", paste_facts(tmp_path, "\n".join(lines) + "\n"))
    assert "insufficient" in f.message


def test_a_time_limit_refused_is_the_time_request():
    (f,) = fired("slurm-time-request-exceeds-limit", _facts("cactus-124-requested-time-limit-invalid-own-sbatch.txt"))
    assert "Requested time limit is invalid" in f.message and "sinfo -o '%P %l'" in f.fix


def test_accounting_policy_refusal_is_a_qos_limit_error():
    (f,) = fired("slurm-qos-limit-reached", _facts("jade-hpc-gpu-78-qos-job-limit-lowered.txt"))
    assert f.severity == "error" and "Job violates accounting/QOS policy" in f.message


def test_a_job_held_by_a_qos_limit_is_a_warning_and_one_waiting_its_turn_nothing(tmp_path):
    # squeue's layout as the recorded Slurm 22.05.8 prints it, with slurm.h's reason for a per-user job cap
    head = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
    held = head + "                 8     debug     wrap     root PD       0:00      1 (QOSMaxJobsPerUserLimit)\n"
    (f,) = fired("slurm-qos-limit-reached", paste_facts(tmp_path, held))
    assert f.severity == "warning"
    waiting = head + "                 8     debug     wrap     root PD       0:00      1 (Priority)\n"
    facts = paste_facts(tmp_path, waiting, name="waiting.txt")
    assert not fired("slurm-qos-limit-reached", facts)
    assert not fired("slurm-time-request-exceeds-limit", facts)


def test_orted_not_found_on_the_other_node():
    (f,) = fired("mpi-remote-daemon-not-found", _facts("ompi-599-orted-not-found-remote-path.txt"))
    assert "orted" in f.message and "mpirun --prefix" in f.fix


def test_another_command_not_found_is_not_the_mpi_daemon():
    from rulekit import recorded_paste_facts

    assert not fired("mpi-remote-daemon-not-found",
                     recorded_paste_facts("batchspawner-246-slurm-script-module-command-not-found.txt"))


def test_estale_is_a_stale_nfs_handle():
    (f,) = fired("nfs-stale-file-handle", _facts("llamafactory-3388-stale-file-handle-hf-cache-home.txt"))
    assert f.severity == "warning" and "[Errno 116] Stale file handle" in f.message


def test_other_errnos_are_no_stale_handle():
    from rulekit import recorded_paste_facts

    for name in ("debian12-strace-cat-healthy-enoent.txt", "debian12-strace-dd-dev-full-enospc.txt"):
        assert not fired("nfs-stale-file-handle", recorded_paste_facts(name))


def test_nvidia_docker_go_bindings_nvml_error_is_the_driver_library_mismatch():
    # nvidia-docker 1.0's "Error: nvml: <nvmlErrorString>" (its Go bindings' errorString)
    (f,) = fired("gpu-driver-unusable", _facts("nvidia-docker-270-nvml-driver-library-mismatch-bad-state.txt"))
    assert "nvml: Driver/library version mismatch" in f.message


def test_an_nvml_word_in_prose_is_not_the_go_bindings_error():
    from hpcdoctor.triage.messages import find_messages

    # "Failed to initialize NVML: " is its own form; "gpu-nvml: enabled" names no NVML error
    got = [s["id"] for s in find_messages("Failed to initialize NVML: Driver/library version mismatch\ngpu-nvml: enabled\n")
           if s["family"] == "nvml"]
    assert got == ["nvml:NVML_ERROR_LIB_RM_VERSION_MISMATCH"]
