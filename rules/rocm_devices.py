"""The AMD node under ROCm: /dev/kfd that the user may not open, a GPU the kernel's KFD refuses, no AMD GPU
enumerated by ROCm's own tools."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, cuda_gpus, ticket_symptoms, told_evidence, told_text

# What says the user may not open /dev/kfd, by itself (knowledge/messages/kfd.toml): rocminfo's
# EACCES and its group check, an ls -l of a device only root may open.
_DENIED_ALONE = ("kfd:rocminfo-kfd-open-denied", "kfd:rocminfo-not-group-member", "kfd:kfd-device-root-only")
# What says it only beside another sign: the user naming /dev/kfd's group is the normal set-up
# until something failed for this user (works as root, hsa_init out of resources, an open refused).
# The user saying they are not in the render or video group (ROCm install FAQ #9, faq_rocm.toml) is
# read the same way: the words are as common in Intel and video-transcoding set-ups, and in advice.
_GROUP_TOLD = ("prose:kfd-owned-by-group", "faq_rocm:rocm-not-in-render-group-said")
_FAILED_FOR_USER = ("prose:gpu-works-only-as-root", "hsa:HSA_STATUS_ERROR_OUT_OF_RESOURCES", "kfd:rocminfo-kfd-open-denied")
# rocminfo found the user in the owning group: the open failed for another reason (its errno says which).
_IS_MEMBER = "kfd:rocminfo-group-member"

_GROUP_FIX = ("ls -l /dev/kfd /dev/dri/renderD*   # the group that owns them (render, or video on older systems), "
              "mode crw-rw----\n"
              "id -nG   # this user's groups: the owning group must be among them\n"
              "sudo usermod -a -G render,video \"$USER\"   # administrators; then log out and in again\n"
              "docker run --device /dev/kfd --device /dev/dri --group-add video --group-add render IMAGE rocminfo   "
              "# in a container: the devices and groups passed in")
_ROOT_ONLY_FIX = ("echo 'KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\"' | sudo tee /etc/udev/rules.d/70-kfd.rules   "
                  "# administrators: the device to the render group\n"
                  "sudo udevadm control --reload-rules && sudo udevadm trigger   # ls -l /dev/kfd: crw-rw---- root render\n"
                  "sudo usermod -a -G render,video \"$USER\"   # then log out and in again")


@rule("GPU018", "rocm-kfd-permission-denied", "error", "ROCm cannot open /dev/kfd: the user lacks the device's group",
      impact=8, also={"warning": "hsa_init out of resources in a Docker container: the usual cause, not a shown one"})
def rocm_kfd_permission_denied(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        On the node: /dev/kfd or a /dev/dri/renderD* node that this process may not read and write
        (the devices check: os.access, the node's mode and group, the user's groups).
        In a pasted ticket, ROCm kept from the GPU by the permissions of /dev/kfd: rocminfo's
        "Unable to open /dev/kfd read-write: Permission denied" or "<user> is not member of
        "render" group, the default DRM access group", an ls -l showing /dev/kfd as
        crw------- root root, or the user saying /dev/kfd belongs to the render (or video) group,
        or that they are not in it (ROCm's install FAQ #9), beside a failure only they see
        (rocminfo works as root; hsa_init's HSA_STATUS_ERROR_OUT_OF_RESOURCES). Not when rocminfo says the user is a member of the
        group: the open then failed for a reason of the kernel's. At warning: rocminfo's hsa_init
        returning HSA_STATUS_ERROR_OUT_OF_RESOURCES (by name, or as rocminfo 1.x's bare number
        "Call returned 4104", 0x1008) where the user says it runs in a Docker container and no
        kernel line names the GPU as refused by KFD.

    Why it matters:
        Every ROCm program opens /dev/kfd and the GPU's /dev/dri/renderD* node first. Without
        access, HIP finds no GPU, torch says "No HIP GPUs are available" and the HSA runtime
        reports running out of resources, all of which point away from the cause. The driver
        and GPU are fine: root can use them.

    How to fix:
        Add the user to the group that owns /dev/kfd and /dev/dri/renderD* (render on current
        distributions, video on older ones) and log in again; in a container, pass the devices
        with --device and the groups with --group-add. Where /dev/kfd is root's alone, a udev
        rule gives it to the render group with mode 0660.

    References:
        - https://github.com/ROCm/ROCT-Thunk-Interface (README: the video group, render from Ubuntu 20.04)
        - https://github.com/ROCm/rocminfo/blob/master/rocminfo.cc (CheckInitialState)
        - https://github.com/ROCm/ROCT-Thunk-Interface/issues/36 (a root-only /dev/kfd fixed by a udev rule)
        - https://github.com/ROCm/rocm-install-on-linux/blob/09d1005562d71739a23ca4f2b60bf34b2a640b02/docs/reference/install-faq.rst (Issue #9: the video and render groups)
        - https://github.com/ROCm/ROCR-Runtime/blob/master/runtime/hsa-runtime/inc/hsa.h (HSA_STATUS_ERROR_OUT_OF_RESOURCES = 0x1008)
        - https://github.com/ROCm/legacy-rocm-build/issues/415 (rocminfo "Call returned 4104" in a container)
    """
    denied = [n for n in f.get("devices.amd_denied") or [] if n.get("path") == "/dev/kfd" or
              str(n.get("path", "")).startswith("/dev/dri/renderD")]
    if denied and f.get("devices.euid") != 0:
        # The node itself, read by the devices check: which nodes, their mode and group, and whether
        # the user is in that group (os.access for this process, as the open would be judged).
        groups = set(f.get("devices.groups") or [])
        shown = ", ".join(f"{n.get('path')} ({n.get('mode')} {n.get('uid')}:{n.get('group') or n.get('gid')})" for n in denied[:4])
        outside = sorted({str(n.get("group") or n.get("gid")) for n in denied if n.get("gid") not in groups})
        why = (f"this user is not in {', '.join(outside)}" if outside else
               "this user is in the nodes' group, so their mode shuts the group out")
        yield Hit(message=f"this user may not read and write the ROCm device node(s) {shown}: {why}",
                  fix=_GROUP_FIX, evidence={"devices.amd_denied": denied[:4], "devices.groups": sorted(groups)})
        return
    said = {s.get("id"): s for s in catalogued(f, "rocm-kfd-permission-denied")}
    symptoms = {s.get("id"): s for s in f.get("ticket.symptoms") or []}
    root_only = said.get("kfd:kfd-device-root-only")
    if _IS_MEMBER in symptoms and root_only is None:
        return
    s = next((said[k] for k in _DENIED_ALONE if k in said), None)
    told = next((said[k] for k in _GROUP_TOLD if k in said), None)
    if s is None and told is not None and any(k in symptoms for k in _FAILED_FOR_USER):
        s = told
    if s is None:
        yield from _container_out_of_resources(f, symptoms)
        return
    what = ("/dev/kfd is root's alone (mode 0600): no other user can open it" if s is root_only else
            "the user may not open /dev/kfd: not in the group that owns it (render, or video on older systems)")
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\")",
              fix=_ROOT_ONLY_FIX if s is root_only else _GROUP_FIX, evidence=told_evidence(s))


# hsa_init's HSA_STATUS_ERROR_OUT_OF_RESOURCES (4104 = 0x1008, ROCR-Runtime hsa.h) is what the runtime
# returns when it cannot open /dev/kfd: in a container started without the device nodes, for a user
# outside their group, or for a GPU the kernel's KFD refuses. With the user saying it runs in Docker and
# nothing naming a refused GPU, the container's device access is the usual cause, not a shown one.
_OUT_OF_RESOURCES = "hsa:HSA_STATUS_ERROR_OUT_OF_RESOURCES"
_IN_DOCKER = "prose:docker-said"
_NOT_THE_CONTAINER = ("kfd:amdkfd-asic-not-supported", "kfd:amdkfd-gc-ip-not-supported", "kfd:rocminfo-kfd-open-refused",
                    "kfd:rocminfo-group-member")
_CONTAINER_FIX = ("docker run -it --device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
                  "--security-opt seccomp=unconfined IMAGE rocminfo   # the devices and their groups passed in\n"
                  "ls -l /dev/kfd /dev/dri/renderD*; id -nG   # inside the container: the nodes exist and the user is in "
                  "their group")


def _container_out_of_resources(f: FactView, symptoms: dict) -> Iterator[Hit]:
    s = symptoms.get(_OUT_OF_RESOURCES)
    if s is None or _IN_DOCKER not in symptoms or any(k in symptoms for k in _NOT_THE_CONTAINER):
        return
    code = "4104 = 0x1008, " if "4104" in str(s.get("text", "")) else ""
    yield Hit(message=f"hsa_init failed with HSA_STATUS_ERROR_OUT_OF_RESOURCES ({code}line {s.get('line')}: "
                      f"\"{told_text(s)}\") in a Docker container: the runtime could not open /dev/kfd, as in a "
                      "container started without --device=/dev/kfd --device=/dev/dri or whose user is outside their "
                      "group (the usual cause, not a shown one)",
              fix=_CONTAINER_FIX, evidence=told_evidence(s), severity="warning")


_UNSUPPORTED_FIX = ("sudo dmesg | grep -i 'not supported in kfd'   # the GPU the kernel's KFD refuses\n"
                    "lspci -nn -d 1002: | grep -Ei 'vga|display|3d'   # the GPU: ROCm runs only on one its release "
                    "lists (rocm.docs.amd.com, system requirements)")
_NEWER_KERNEL_FIX = ("uname -r   # this kernel's KFD does not know the GPU's graphics IP\n"
                     "sudo dmesg | grep -i 'not supported in kfd'   # after installing a newer kernel (or the amdgpu-dkms "
                     "of a ROCm release that lists this GPU) and rebooting: no line")


@rule("GPU019", "rocm-gpu-unsupported", "error", "the kernel's KFD does not support this AMD GPU: ROCm cannot use it",
      impact=8)
def rocm_gpu_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, the amdgpu driver's KFD refusing a GPU: "kfd kfd: amdgpu:
        PITCAIRN not supported in kfd" (a GPU family KFD never supported: TAHITI, PITCAIRN,
        OLAND, TOPAZ and the other pre-GCN3 chips) or "GC IP 0b0004 not supported in kfd" (a
        graphics IP this kernel's KFD does not know yet).

    Why it matters:
        Without KFD there is no ROCm compute on the GPU: rocminfo cannot open /dev/kfd (its
        "Cannot allocate memory" or "No such file or directory") and the HSA runtime reports
        HSA_STATUS_ERROR_OUT_OF_RESOURCES, which looks like a user-space problem. Reinstalling
        ROCm or adding groups changes nothing.

    How to fix:
        For a chip family KFD never supported, ROCm cannot use the GPU: use one ROCm's release
        lists. For an unknown graphics IP, a newer kernel (or the amdgpu-dkms driver of a ROCm
        release that lists the GPU) may know it.

    References:
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
        - https://github.com/torvalds/linux/blob/master/drivers/gpu/drm/amd/amdkfd/kfd_device.c (kgd2kfd_probe)
        - https://github.com/ROCm/legacy-rocm-build/issues/2232 (PITCAIRN not supported in kfd)
    """
    for s in catalogued(f, "rocm-gpu-unsupported"):
        gc_ip = s.get("id") == "kfd:amdkfd-gc-ip-not-supported"
        what = ("this kernel's KFD does not know the GPU's graphics IP: no ROCm compute on it with this kernel" if gc_ip
                else "the kernel's KFD does not support this GPU family: ROCm cannot use it")
        yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\")",
                  fix=_NEWER_KERNEL_FIX if gc_ip else _UNSUPPORTED_FIX, evidence=told_evidence(s))
        return


_LOCKUP_FIX = (
    "cat /sys/module/amdgpu/parameters/lockup_timeout   # the timeout in force, in ms (empty or 0: the kernel's default, "
    "2000 for all queues in the newest kernels, 10000 before)\n"
    "echo 'options amdgpu lockup_timeout=60000' | sudo tee /etc/modprobe.d/amdgpu-timeout.conf   # then rebuild the "
    "initramfs (update-initramfs -u, or dracut -f) and reboot; or amdgpu.lockup_timeout=60000 on the kernel command line\n"
    "# the format differs by kernel: one value (all queues in new kernels, non-compute jobs in older ones) or "
    "[GFX,Compute,SDMA,Video]; a negative value means no limit, which leaves a real hang undetected\n"
    "# in the program: split the work into shorter submissions (llama.cpp's Vulkan back end: a smaller batch), so no "
    "single job outlasts the timeout")


@rule("GPU034", "amdgpu-job-timeout-too-short", "warning",
      "amdgpu reset a GPU job as hung after its lockup timeout; a long compute job outlasts a short default", impact=6,
      also={"info": "the user says the kernel log shows an amdgpu graphics ring timeout"})
def amdgpu_job_timeout_too_short(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log or this node's kernel log, amdgpu's scheduler timeout: "ring <ring> timeout,
        signaled seq=N, emitted seq=M" and "ring <ring> timeout, but soft recovered"
        (amdgpu_job.c amdgpu_job_timedout), with no GPU VM page fault beside it (a faulting job is
        a program's fault, and stays unanswered here). A user retelling "ring gfx_0.0.0 timeout" is
        answered at info.

    Why it matters:
        The driver treats a job still running after the queue's lockup_timeout as a hang and
        resets the ring; the process loses its context (Vulkan's VK_ERROR_DEVICE_LOST). The
        default has shrunk over kernel releases (no limit or 60 s for compute, then 10 s for all
        jobs, then 2 s for all queues outside SR-IOV), and compute submitted on the graphics queue
        (Vulkan compute back ends) counts as graphics: a long but healthy dispatch is killed.

    How to fix:
        Raise amdgpu's lockup_timeout (module option or kernel command line), or submit shorter
        jobs; a negative value disables the detection of real hangs.

    References:
        - https://docs.kernel.org/gpu/amdgpu/module-parameters.html (lockup_timeout)
        - https://github.com/torvalds/linux/blob/master/drivers/gpu/drm/amd/amdgpu/amdgpu_job.c (amdgpu_job_timedout)
        - https://github.com/ggml-org/llama.cpp/issues/21724
    """
    told = catalogued(f, "amdgpu-job-timeout-too-short")
    if not told:
        return
    faults = [s for s in list(f.get("ticket.symptoms") or []) + list(f.get("kernel_log.messages") or [])
              if isinstance(s, dict) and s.get("id") == "amdgpu_job:gpuvm-page-fault"]
    if faults:
        return   # the job faulted on a bad address: a program's or driver's fault, not a timeout too short
    kernel = [s for s in told if s.get("id") != "prose:amdgpu-ring-timeout-said"]
    s = (kernel or told)[0]
    ring = s.get("ring") or "gfx"
    setting = f.get("amd.lockup_timeout")
    here = (f"; this node's amdgpu.lockup_timeout is {setting!r}" + (" (the kernel's default)" if setting in ("", "0") else "")
            if isinstance(setting, str) else "")
    yield Hit(message=f"amdgpu reset the {ring} ring as hung after its lockup timeout (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): a compute job longer than the timeout (2 s by default in the newest "
                      f"kernels) is killed although nothing hung{here}",
              fix=_LOCKUP_FIX, evidence=told_evidence(s), severity=None if kernel else "info")


# ROCm's tools saying they see no AMD GPU (knowledge/messages: rocm_smi_cli, amd_smi, kfd, faq_rocm). Two
# kinds: the module check failed (rocminfo's "ROCk module is NOT loaded", rocm-smi's and amd-smi's "Driver
# not initialized (amdgpu not found in modules)"), or the module is live and no GPU is visible (rocm-smi's
# "No AMD GPUs specified", amd-smi's "Unable to detect any GPU devices").
_MODULE_CHECK = frozenset({"kfd:rocminfo-module-not-loaded", "faq_rocm:rocm-driver-not-initialized",
                           "amd_smi:cli-get-devices-driver-not-initialized"})
# What says the module check misread a working node: amdgpu built into the kernel (ROCm/rocminfo#42,
# ROCm/amdsmi#172), and rocminfo's own lines that the module is live or /dev/kfd opened (these answer
# the module check only: "No AMD GPUs specified" comes after the module was found live).
_BUILT_IN = "prose:amdgpu-built-into-kernel-said"
_MODULE_SHOWN = ("kfd:rocminfo-module-loaded", "kfd:rocminfo-kfd-opened")
# The user saying only an NVIDIA GPU was asked for or is there: no AMD GPU is the expected answer.
_NVIDIA_ONLY = "prose:nvidia-gpu-only-said"
_ENUMERATED_FIX = (
    "lsmod | grep -w amdgpu; cat /sys/module/amdgpu/initstate   # the kernel driver: loaded and live "
    "(sudo modprobe amdgpu where it is not)\n"
    "sudo dmesg | grep -iE 'amdgpu|kfd' | tail -n 30   # why it did not bind the GPU (firmware, an unsupported chip, "
    "a modprobe.d blacklist)\n"
    "lspci -nn -d 1002: | grep -Ei 'vga|display|3d|accel'   # the AMD GPU on the bus (in a VM: the passthrough)\n"
    "ls -l /dev/kfd /dev/dri/render*; groups   # the device nodes exist and this user is in their group (render, video)\n"
    "docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render IMAGE rocm-smi   "
    "# in a container: the devices passed in")


@rule("GPU045", "amd-gpu-not-enumerated", "error", "ROCm tools see no AMD GPU: amdgpu not loaded or the GPU not visible",
      impact=8, also={"warning": "no AMD GPU named in the paste: the tool may have run where none was meant to be"})
def amd_gpu_not_enumerated(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a ROCm tool saying it sees no AMD GPU: rocm-smi's "WARNING: No AMD GPUs
        specified" or "ERROR: No DRM devices available. Exiting", amd-smi's "Unable to detect any
        GPU devices, check amdgpu version and module status", rocminfo's "ROCk module is NOT
        loaded, possibly no GPU devices", and rocm-smi's or amd-smi's "Driver not initialized
        (amdgpu not found in modules)", where nothing in the paste shows an AMD GPU working (a
        rocm-smi or amd-smi listing of GPUs). At error where the paste names the AMD GPU (lspci,
        the user: "Instinct MI210X", "[AMD/ATI] Navi 21"); at warning where it names none. Not
        where the user says amdgpu is built into the kernel (the module checks misread that:
        ROCm/rocminfo#42, ROCm/amdsmi#172), not for a module check answered by rocminfo's "ROCk
        module is loaded" or "Able to open /dev/kfd read-write", and not where the paste names only
        NVIDIA GPUs or the user says only an NVIDIA GPU was requested (rocm-smi polled on an NVIDIA
        allocation, wandb/wandb#6757).

    Why it matters:
        ROCm finds GPUs through the amdgpu kernel driver (/sys/module/amdgpu, /sys/class/drm) and its
        device nodes (/dev/kfd, /dev/dri/renderD*). Without them every ROCm program sees no device:
        torch says no GPU and falls back to the CPU, HIP returns hipErrorNoDevice. Reinstalling ROCm's
        user-space packages changes nothing.

    How to fix:
        Load the driver (modprobe amdgpu; a DKMS build that failed for this kernel, a blacklist, Secure
        Boot refusing an unsigned amdgpu-dkms keep it out) and read dmesg for why it did not bind the
        GPU (firmware missing, a chip the installed ROCm does not support, a VM's passthrough). In a
        container, pass --device=/dev/kfd --device=/dev/dri; for a user, the render and video groups.

    References:
        - https://github.com/ROCm/rocm_smi_lib/blob/rocm-6.2.2/python_smi_tools/rocm_smi.py (initializeRsmi, main)
        - https://github.com/ROCm/amdsmi/blob/0ceca28f4139dced5e9b5739a3f393780d7add48/amdsmi_cli/amdsmi_commands.py
        - https://github.com/ROCm/rocminfo/blob/c6f7a17c85e0cdd75bf062e7a3490e831c87eb94/rocminfo.cc (CheckInitialState)
        - https://github.com/ROCm/rocm-install-on-linux/blob/09d1005562d71739a23ca4f2b60bf34b2a640b02/docs/reference/install-faq.rst (Issue #8)
        - https://github.com/ROCm/legacy-rocm-build/issues/2995 (V620 VM: "No AMD GPUs specified", "ROCk module is NOT loaded")
    """
    told = catalogued(f, "amd-gpu-not-enumerated")
    if not told:
        return
    symptoms = ticket_symptoms(f)
    if _BUILT_IN in symptoms or _NVIDIA_ONLY in symptoms:
        return
    if any(k in symptoms for k in _MODULE_SHOWN):
        told = [s for s in told if s.get("id") not in _MODULE_CHECK]
    listed = f.get("amd.devices")
    if not told or (isinstance(listed, int) and listed > 0):
        return
    amd_named = f.get("ticket.amd_gpus_named") or []
    if not amd_named and (cuda_gpus(f) or f.get("ticket.gpus_named")):
        return   # the paste names another vendor's GPU only: the tool ran where no AMD GPU was meant to be
    s = told[0]
    module = s.get("id") in _MODULE_CHECK
    what = ("the amdgpu kernel module is not loaded (or not live)" if module else
            "the amdgpu module is loaded but no AMD GPU is visible to this process")
    gpu = ""
    if amd_named:
        g = amd_named[0]
        name = g.get("name") or g.get("gpu") or g.get("chip") if isinstance(g, dict) else g
        gpu = f" on a node whose AMD GPU the paste names ({name})" if name else " on a node whose AMD GPU the paste names"
    yield Hit(message=f"a ROCm tool sees no AMD GPU{gpu}: {what} (line {s.get('line')}: \"{told_text(s)}\"): "
                      "a container without --device=/dev/kfd --device=/dev/dri, a user outside the render/video "
                      "group, a driver that failed to bind the GPU, or a GPU the installed ROCm does not support",
              fix=_ENUMERATED_FIX, evidence=told_evidence(s), severity=None if amd_named else "warning")
