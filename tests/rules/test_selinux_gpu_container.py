"""selinux-denies-container-access (ENV055) for NVML refused in a container that works with
--privileged on an SELinux host (NVIDIA/nvidia-docker#676)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


def test_nvml_refused_in_a_container_that_works_privileged_on_selinux():
    g = recorded_paste_facts("nvidia-docker-676-nvml-permissions-selinux-privileged.txt")
    [hit] = fired("selinux-denies-container-access", g)
    assert hit.severity == "warning" and "label=disable" in hit.fix and "ausearch" in hit.fix
    assert not fired("gpu-device-permission-denied", g)


def test_nvml_refused_without_selinux_or_privileged_stays_a_permission():
    g = told_facts("$ docker run -ti --rm nvidia/cuda:12.2.0-base-ubuntu22.04 bash\nroot@c:/# nvidia-smi\n"
                   "Failed to initialize NVML: Insufficient Permissions\n")
    assert not fired("selinux-denies-container-access", g)
    assert fired("gpu-device-permission-denied", g)
