"""Node-side symptoms in users' words, catalogued from the projects' own FAQ and troubleshooting pages
(knowledge/messages/faq_nvidia.toml, faq_containers.toml, faq_rocm.toml, faq_slurm.toml): the rules
that the documents give as the one cause fire on real tickets, and a symptom with several causes is
read without a finding."""

from __future__ import annotations

from conftest import FIXTURES, PUBLIC
from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def _ticket(tmp_path, corpus: str, name: str):
    return paste_facts(tmp_path, (FIXTURES / corpus / f"{name}.txt").read_text(encoding="utf-8"), name + ".txt")


def _read(gathered) -> set:
    return {s["id"] for s in gathered["facts"]["ticket"]["symptoms"]}


def _throttled(tmp_path, text: str) -> list:
    """gpu-throttled's findings on TEXT as a paste; none where nothing in it was read at all."""
    from hpcdoctor.sysroot.replay import SnapshotError

    try:
        g = paste_facts(tmp_path, text)
    except SnapshotError:
        return []
    return run_rule("gpu-throttled", g)[0]


def _findings(gathered) -> list:
    """Every finding at warning or above that any rule raises on these facts."""
    from rulekit import _rules

    out = []
    for symbol in _rules():
        found, _ = run_rule(symbol, gathered)
        out += [f for f in found if f.severity in ("error", "warning")]
    return out


def test_a_node_that_came_up_short_a_gpu_is_a_missing_gpu(tmp_path):
    g = _ticket(tmp_path, "tickets_blind_e", "cbio-cluster-365-node-came-up-short-a-gpu")
    (f,) = fired("gpu-count-mismatch", g)
    assert f.severity == "error" and f.message.startswith("the user says the node shows fewer GPUs than it has (line 1")
    assert "came up short a GPU" in f.message and "dmesg" in f.fix


def test_a_gpu_lost_after_a_reboot_in_broken_english_is_a_missing_gpu(tmp_path):
    # "one GPU is loss after reboot", after a sentence with "can not" in it: the negation belongs
    # to the sentence before, not to the report.
    g = _ticket(tmp_path, "tickets_blind_d", "shine-cluster-172-one-gpu-lost-slurmd")
    (f,) = fired("gpu-count-mismatch", g)
    assert f.severity == "error" and "one GPU is loss after reboot" in f.message


def test_low_or_fluctuating_gpu_util_is_read_but_names_no_cause(tmp_path):
    # nvidia-smi's GPU-Util is the share of time a kernel ran; the definition names no cause: the
    # paste is read (not refused) and no node rule fires on the words alone.
    for name in ("preview-5-low-fluctuating-gpu-util-data-loading", "nemo-speech-1204-gpu-util-zero-few-loader-workers"):
        g = _ticket(tmp_path, "tickets_blind_e", name)
        assert "faq_nvidia:gpu-util-low-said" in _read(g), name
        assert not run_rule("gpu-throttled", g)[0] and not run_rule("gpu-count-mismatch", g)[0]


def test_training_slower_and_slower_is_read_without_blaming_the_gpu(tmp_path):
    g = _ticket(tmp_path, "tickets_blind_e", "tensorflow-40042-training-slows-gpu-overheating")
    assert "faq_nvidia:job-slower-over-time-said" in _read(g)
    assert not run_rule("gpu-throttled", g)[0]


def test_nvidia_smi_q_slowdown_lines_pasted_alone_are_a_throttled_gpu(tmp_path):
    # The Clocks Event Reasons block of a real nvidia-smi -q (leptonai/gpud testdata, Apache-2.0),
    # pasted without the rest of the report.
    lines = (PUBLIC / "nvsmi" / "gpud_8xH100-80GB-HBM3_nvsmi_q_535.161.08.txt").read_text(encoding="utf-8").splitlines()
    block = "\n".join(lines[82:93]) + "\n"
    assert "HW Power Brake Slowdown       : Active" in block
    (f,) = fired("gpu-throttled", paste_facts(tmp_path, block))
    assert f.severity == "warning" and f.message.startswith("nvidia-smi shows HW Slowdown active")
    assert "nvidia-smi -q -d PERFORMANCE,TEMPERATURE" in f.fix


def test_a_healthy_nvidia_smi_q_block_is_not_throttled(tmp_path):
    lines = (PUBLIC / "nvsmi" / "gpud_8xH100-80GB-HBM3_nvsmi_q_535.161.08.txt").read_text(encoding="utf-8").splitlines()
    healthy = "\n".join(line.replace(": Active", ": Not Active") for line in lines[82:93]) + "\n"
    assert "HW Slowdown                       : Not Active" in healthy
    assert not _throttled(tmp_path, healthy)


def test_a_negated_or_conditional_sentence_is_not_a_report(tmp_path):
    # Hostile input: the words of a report inside a negation and a condition.
    for text in ("Why consistent:\n- No GPU thermal throttling\n- Deterministic CPU execution\n",
                 "If it still crashes, your GPU is overheating. Clean the dust.\n",
                 "We should maybe check whether the GPU is overheating\n"):
        assert not _throttled(tmp_path, text), text


def test_the_container_toolkits_cosmetic_group_warning_is_read_and_harmless(tmp_path):
    # The Container Toolkit's troubleshooting page: "This warning is cosmetic".
    g = paste_facts(tmp_path, "$ docker run --rm --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES=all ubuntu groups\n"
                              "groups: cannot find name for group ID 993\n")
    assert "faq_containers:groups-cannot-find-gid" in _read(g)
    assert not _findings(g)


def test_a_slurm_job_that_says_it_sees_no_gpu_and_asked_for_none(tmp_path):
    # Slurm's GRES guide: jobs are not allocated any GPU unless they request one. Constructed to
    # test the rule's logic (the words' parsing is held to the catalogue's own examples): a job
    # script that asks for no GPU, and the user's words that the job sees none.
    g = paste_facts(tmp_path, "#SBATCH --ntasks=1\n#SBATCH --time=01:00:00\npython train.py\n\n"
                              "The batch job cannot see the GPU, CUDA_VISIBLE_DEVICES is empty.\n")
    assert {"faq_slurm:slurm-job-no-gpu-said", "prose:slurm-sbatch"} <= _read(g)
    (f,) = fired("slurm-job-without-gpus", g)
    assert f.severity == "error" and "--gres=gpu" in f.fix


def test_a_slurm_job_that_asked_for_gpus_is_not_told_to_ask(tmp_path):
    g = paste_facts(tmp_path, "#SBATCH --gres=gpu:1\npython train.py\n\nThe batch job cannot see the GPU.\n")
    assert not run_rule("slurm-job-without-gpus", g)[0]


def test_not_in_the_render_group_needs_a_failure_beside_it(tmp_path):
    # ROCm's install FAQ #9 gives the missing render/video group as the cause of Permission denied;
    # the same words are advice in guides (this line is one, from a public ROCm set-up guide) and
    # are as common for Intel GPUs, so alone they are read, not judged.
    g = paste_facts(tmp_path, "If the current user is not in the render group, ask an administrator to run:\n")
    assert "faq_rocm:rocm-not-in-render-group-said" in _read(g)
    assert not run_rule("rocm-kfd-permission-denied", g)[0]


def test_nvidia_smi_slow_points_at_persistence_mode(tmp_path):
    # The Driver Persistence guide: 1-3 s of start-up per GPU when no client keeps it initialised.
    # Constructed to test the rule's logic.
    g = paste_facts(tmp_path, "On our 8-GPU node nvidia-smi takes 12 seconds before it prints anything.\n")
    (f,) = fired("persistence-mode-off", g)
    assert f.severity == "advice" and "nvidia-persistenced" in f.fix
    assert f.message.startswith("the user says nvidia-smi is slow")


def test_a_pending_job_reason_is_read_as_slurms_and_blames_nothing(tmp_path):
    # squeue rows as Slurm's own documentation prints them (doc/html/preempt.shtml) and as a site's
    # guide quotes one: each reason is read with its meaning from slurm.h, and no rule fires.
    g = paste_facts(tmp_path, "$ squeue\n"
                              "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
                              "     94       low      tmp      moe  PD       0:00      1 (Resources)\n"
                              "           1123857      rush 06112023     jxm3 PD       0:00      1 (Priority)\n")
    assert {"slurm_reasons:Resources", "slurm_reasons:Priority"} <= _read(g)
    (s,) = [s for s in g["facts"]["ticket"]["symptoms"] if s["id"] == "slurm_reasons:Resources"]
    assert s["means"] == "required resources not available" and s["code"] == 3
    assert not _findings(g)


def test_the_device_plugins_runtime_hint_is_the_toolkit_missing_for_its_pod(tmp_path):
    # NVIDIA/k8s-device-plugin prints this after NVML failed in its pod (internal/plugin/factory.go);
    # its README's prerequisite: the NVIDIA container runtime as the node's default runtime.
    g = paste_facts(tmp_path, "If this is a GPU node, did you set the docker default runtime to `nvidia`?\n")
    (f,) = fired("nvidia-container-toolkit-missing", g)
    assert f.severity == "error" and "device plugin" in f.message and "--set-as-default" in f.fix


def test_the_device_plugins_nvml_library_not_loaded_is_the_toolkit_missing(tmp_path):
    # NVIDIA/k8s-device-plugin#23: the plugin of late 2017 (main.go @ 0a3fb1823) in a pod that the
    # runtime gave no driver; the maintainer's fix: docker's default runtime nvidia.
    (f,) = fired("nvidia-container-toolkit-missing", recorded_paste_facts("k8s-device-plugin-23-nvml-not-loaded.txt"))
    assert f.severity == "error" and "libnvidia-ml.so.1" in f.message
    assert "nvidia-ctk runtime configure --runtime=docker --set-as-default" in f.fix
    assert "--runtime=containerd --set-as-default" in f.fix and "--runtime=crio --set-as-default" in f.fix
    # go-nvml's wording of the same log line, and the platform detection of v0.13 .. v0.20
    for line in ("E0115 10:19:26.421371       1 factory.go:87] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.\n",
                 "E0612 08:01:46.120112       1 factory.go:115] Incompatible strategy detected auto\n"):
        (f,) = fired("nvidia-container-toolkit-missing", paste_facts(tmp_path, line))
        assert "device plugin" in f.message


def test_the_device_plugins_other_nvml_errors_are_not_the_toolkit(tmp_path):
    # a driver that is not loaded is the driver's fault, and the error chain alone does not say
    # which cause (NVIDIA/k8s-device-plugin#856: the pod lacked SYS_ADMIN)
    for line in ("E0115 10:19:26.421371       1 factory.go:87] Failed to initialize NVML: ERROR_DRIVER_NOT_LOADED.\n",
                 "error starting plugins: unable to create plugin manager: nvml init failed: ERROR_LIBRARY_NOT_FOUND\n",
                 "No devices found. Waiting indefinitely.\n"):
        assert not fired("nvidia-container-toolkit-missing", paste_facts(tmp_path, line)), line
