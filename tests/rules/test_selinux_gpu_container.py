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


# --- folded from the x-identity-x11 branch: AVC records of device nodes, one space or two, and a user
# ruling SELinux out ---

def test_a_container_avc_denial_of_an_nvidia_node_is_selinux_not_the_nodes_mode():
    # the kernel's avc.c format with the values of fedora-selinux/selinux-policy#1695 (container_t on
    # /dev/nvidia0 labelled xserver_misc_device_t) filled in: that thread pastes sealert's report
    g = told_facts('Failed to initialize NVML: Insufficient Permissions\n'
                   'type=AVC msg=audit(1684465329.146:35): avc:  denied  { read write } for  pid=4242 comm="python" '
                   'name="nvidia0" dev="devtmpfs" ino=1234 scontext=system_u:system_r:container_t:s0:c380,c597 '
                   'tcontext=system_u:object_r:xserver_misc_device_t:s0 tclass=chr_file permissive=0\n')
    [hit] = fired("selinux-denies-container-access", g)
    assert hit.severity == "error" and "NVIDIA device node" in hit.message and "xserver_misc_device_t" in hit.message
    assert "ls -Z /dev/nvidia*" in hit.fix
    assert not fired("gpu-device-permission-denied", g)


def test_a_container_denied_another_device_node_is_named_a_device():
    [hit] = fired("selinux-denies-container-access", recorded_paste_facts("podman-18497-avc-container-dri-device.txt"))
    assert "device node" in hit.message and "dri_device_t" in hit.message and "bind-mounted" not in hit.message


def test_an_avc_record_with_single_spaces_is_read():
    # journalctl and forum posts often keep one space where the kernel prints two (the same record, respaced)
    g = told_facts('avc: denied { map } for pid=699282 comm="vainfo" path="/dev/dri/renderD128" dev="devtmpfs" '
                   'ino=947 scontext=system_u:system_r:container_t:s0:c260,c628 '
                   'tcontext=system_u:object_r:dri_device_t:s0 tclass=chr_file permissive=0\n')
    assert fired("selinux-denies-container-access", g)


def test_a_user_ruling_selinux_out_is_not_selinux_named():
    g = told_facts("$ docker run --rm nvidia/cuda:12.2.0-base-ubuntu22.04 nvidia-smi\n"
                   "Failed to initialize NVML: Insufficient Permissions\n"
                   "It works with --privileged but there is no selinux and no apparmor enabled.\n")
    assert not fired("selinux-denies-container-access", g)
