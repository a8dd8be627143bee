"""Messages set G showed no catalogue read (set G was unsealed after its final sealed score):
the NVIDIA kernel module's API-mismatch notice, and a bare EMFILE. Each on G's own pastes, and
silent where the message is absent."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, recorded_paste_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import open_paste

SET_G = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_g"


def _facts(name):
    with open_paste([str(SET_G / name)]) as (root, _r, _n):
        return pipeline.gather(root, Options())


def test_nvrm_api_mismatch_in_a_journal_is_the_driver_updated_without_reboot():
    (f,) = fired("gpu-driver-unusable", _facts("nvidia-docker-182-api-mismatch-driver-upgraded-no-reboot.txt"))
    assert "not the version of the driver libraries" in f.message and "sudo reboot" in f.fix


def test_the_open_modules_form_names_the_client_and_both_versions():
    # osapi.c's format at 595.45.04 with values filled in, as dmesg prints its five lines (joined by the matcher)
    text = ("[ 12.3] NVRM: API mismatch: the client 'nvidia-smi' (pid 4242)\n[ 12.3] NVRM: has the version 580.95.05, "
            "but this kernel module has\n[ 12.3] NVRM: the version 575.57.08.  Please make sure that this\n")
    (s,) = [s for s in find_messages(text) if s["id"] == "nvrm:api-mismatch"]
    assert (s["client"], s["client_version"], s["module_version"]) == ("nvidia-smi", "580.95.05", "575.57.08")


def test_a_bare_emfile_is_a_hint_and_the_dataloaders_own_words_a_warning():
    (f,) = fired("dataloader-open-files", _facts("deep-learning-for-image-processing-845-too-many-open-files-ulimit.txt"))
    assert f.severity == "info" and "usual holder is the DataLoader" in f.message
    # the limit itself is open-files-limit-too-low's answer, on the same line: the hint does not repeat it
    assert "set_sharing_strategy('file_system')" in f.fix and "ulimit" not in f.fix, f.fix
    (limit,) = fired("open-files-limit-too-low", _facts("deep-learning-for-image-processing-845-too-many-open-files-ulimit.txt"))
    assert 'ulimit -n "$(ulimit -Hn)"' in limit.fix


def test_silent_without_either_message():
    assert not fired("dataloader-open-files", recorded_paste_facts("motiongpt3-14-numpy1-module-on-numpy-2.3.txt"))


def test_a_shells_bare_bus_error_is_a_shm_hint_and_torchs_own_words_stay_a_warning():
    (f,) = fired("shm-too-small", _facts("hd-bet-67-bus-error-docker-shm-size.txt"))
    assert f.severity == "info" and "a full /dev/shm" in f.message and "--shm-size" in f.fix
    # prose that names the signal is not the shell's report of it
    assert not [s for s in find_messages("Any idea what bus error means there?\n") if s["id"] == "shell:bus-error"]


def test_nvidia_settings_driver_not_loaded_after_a_kernel_upgrade():
    (f,) = fired("gpu-driver-unusable", _facts("void-packages-14377-nvidia-module-missing-new-kernel.txt"))
    assert "kernel driver is not loaded" in f.message and "dkms status" in f.fix


def test_a_gpu_runtime_failing_on_what_the_user_calls_a_cpu_node_is_no_driver_fault():
    g = _facts("k8s-device-plugin-52-nvidia-runtime-default-on-cpu-node.txt")
    assert "prose:cpu-node-said" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("gpu-driver-unusable", g)
    # "GPU node" is not a CPU node
    assert not [s for s in find_messages("it fails on the GPU node we were given\n") if s["id"] == "prose:cpu-node-said"]


def test_a_node_with_four_gpus_whose_nvidia_smi_only_reports_three():
    (f,) = fired("gpu-count-mismatch", _facts("microsoft-pai-4344-gpu-missing-rminitadapter-failed.txt"))
    assert "fewer GPUs than it has" in f.message
    # torch seeing fewer GPUs is CUDA_VISIBLE_DEVICES or MIG as often: not the node's count
    assert not [s for s in find_messages("I have 8 GPUs but torch only sees 2 GPUs\n") if s["id"] == "faq_nvidia:gpu-missing-said"]
