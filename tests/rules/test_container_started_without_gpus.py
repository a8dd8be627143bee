"""nvidia-container-toolkit-missing for a container started without its GPUs, on real pastes: NVIDIA's
CUDA image warning that it found no driver (set AH's PanopticSegForLargeScalePointCloud#20, the
entrypoint check of NVIDIA's images), and a plain docker run followed by torch finding no GPU (set E's
floydhub/dockerfiles#3). Each fix is the user's own command with --gpus all."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _facts(tmp_path, folder: str, name: str):
    return paste_facts(tmp_path, (FIXTURES / folder / f"{name}.txt").read_text(encoding="utf-8"), name + ".txt")


def test_nvidia_images_own_warning_is_read_and_the_fix_is_the_users_command_with_gpus(tmp_path):
    facts = _facts(tmp_path, "tickets_blind_ah", "panopticsegforlargescalepointcloud-20-container-run-without-gpus")
    (f,) = fired("nvidia-container-toolkit-missing", facts)
    assert "found no NVIDIA driver inside the container" in f.message and "line 24" in f.message
    # the user's own command holds a placeholder (<image_name>), so it is named, not printed to run
    assert f.fix.startswith("docker info | grep -i runtimes") and "docker run --gpus all" in f.fix
    assert "nvidia-ctk runtime configure --runtime=docker" in f.fix


def test_a_plain_docker_run_then_no_gpu_in_torch_names_the_command(tmp_path):
    facts = _facts(tmp_path, "tickets_blind_e", "floydhub-dockerfiles-3-plain-docker-no-nvidia-runtime")
    (f,) = fired("nvidia-container-toolkit-missing", facts)
    assert "started without a GPU request" in f.message
    assert "docker run --gpus all" in f.fix and "\n" in f.fix


def test_a_concrete_command_without_gpus_is_printed_back_with_them(tmp_path):
    # the same paste with the image named, as most users paste it
    text = (FIXTURES / "tickets_blind_ah" / "panopticsegforlargescalepointcloud-20-container-run-without-gpus.txt"
            ).read_text(encoding="utf-8").replace("$ docker run <image_name>", "$ docker run -it panoptic:latest")
    (f,) = fired("nvidia-container-toolkit-missing", paste_facts(tmp_path, text, "named.txt"))
    assert f.fix.startswith("docker run --gpus all -it panoptic:latest   # the same container, given its GPUs")
