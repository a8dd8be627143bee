"""container-gpu-device-cgroup-revoked: NVML's Unknown Error at initialisation in a container, an
error where an EPERM on the GPU's device node shows the cgroup refusing (set H's Kubernetes ticket,
unsealed after its final sealed score), a warning where only the container is shown (two public
pastes); silent on the NVML line alone and in a Slurm job."""

from __future__ import annotations

from pathlib import Path

from rulekit import PASTES, fired, paste_facts, recorded_paste_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.paste import open_paste

SET_H = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_h"
K8S = SET_H / "bigdata-150-nvml-unknown-error-cpu-manager-static.txt"
RELOAD = "nvidia-container-toolkit-1227-nvml-unknown-after-daemon-reload.txt"


def test_eperm_on_nvidiactl_beside_nvml_unknown_is_the_device_cgroup():
    with open_paste([str(K8S)]) as (root, _r, _n):
        (f,) = fired("container-gpu-device-cgroup-revoked", pipeline.gather(root, Options()))
    assert f.severity == "error" and "EPERM" in f.message and "kubectl delete pod" in f.fix
    assert "native.cgroupdriver=cgroupfs" in f.fix and "compatWithCPUManager=true" in f.fix


def test_nvml_unknown_in_a_container_is_nvidias_documented_cause():
    for name in (RELOAD, "dstack-2601-nvml-unknown-in-container.txt"):
        (f,) = fired("container-gpu-device-cgroup-revoked", recorded_paste_facts(name))
        assert f.severity == "warning" and "systemctl daemon-reload" in f.message, name


def test_silent_on_the_nvml_line_alone(tmp_path):
    line = next(ln for ln in (PASTES / RELOAD).read_text().splitlines() if ln.startswith("Failed to initialize NVML"))
    assert not fired("container-gpu-device-cgroup-revoked", paste_facts(tmp_path, line + "\n"))


def test_silent_on_eperm_in_a_slurm_job(tmp_path):
    # the same two lines of the Kubernetes ticket under srun: a GPU the job did not ask for
    lines = [ln for ln in K8S.read_text().splitlines() if "NVML" in ln or "EPERM" in ln]
    text = "$ srun -n1 nvidia-smi\n" + "\n".join(lines) + "\n"
    assert not fired("container-gpu-device-cgroup-revoked", paste_facts(tmp_path, text))


# -- GPU036 nvidia-container-toolkit-outdated ---------------------------------------------------

def _m_ticket(name: str):
    path = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_m" / f"{name}.txt"
    with open_paste([str(path)]) as (root, _r, _n):
        return pipeline.gather(root, Options())


def test_jetson_image_holding_the_libraries_the_toolkit_mounts():
    (f,) = fired("nvidia-container-toolkit-outdated", _m_ticket("nvidia-container-toolkit-295-jetson-image-libs-file-exists"))
    assert f.severity == "warning" and "libnvidia-fatbinaryloader.so.440.18" in f.message and "L4T" in f.message
    (f,) = fired("nvidia-container-toolkit-outdated", recorded_paste_facts("nvidia-container-toolkit-274-jetson-cudnn-static-file-exists.txt"))
    assert f.severity == "warning" and "libcudnn_adv_infer_static_v8.a" in f.message
    assert "--only-upgrade nvidia-container-toolkit" in f.fix


def test_a_driver_file_in_an_x86_image_is_only_info():
    (f,) = fired("nvidia-container-toolkit-outdated", recorded_paste_facts("lambda-stack-dockerfiles-15-libnvidia-ml-file-exists.txt"))
    assert f.severity == "info" and "libnvidia-ml.so.1" in f.message
    # set M's healthy control: the same words after a command-line mistake; never above info
    (f,) = fired("nvidia-container-toolkit-outdated", _m_ticket("nvidia-container-runtime-41-multiline-command-split-healthy"))
    assert f.severity == "info"


def test_silent_on_another_mount_error_of_the_hook():
    from hpcdoctor.triage.messages import find_messages
    from rulekit import facts
    text = (PASTES / "nvidia-container-runtime-123-jetson-nvidiactl-stat-failed.txt").read_text()
    found = find_messages(text)
    assert any(s["id"] == "container:nvc-mount-error" for s in found)
    assert not fired("nvidia-container-toolkit-outdated", facts("h100-kvm-1gpu", **{"ticket.symptoms": found}))
