"""The AMD node under ROCm: /dev/kfd that the user may not open, a GPU the kernel's KFD refuses, no AMD GPU
enumerated by ROCm's own tools."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import rocm_gpus
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
                    "kfd:rocminfo-group-member", "kfd:amdgpu-kfd-not-supported-on-asic", "kfd:kfd-did-missing",
                    "kfd:kfd-probe-failed", "kfd:kfd-hawaii-experimental", "kfd:kfd-pci-atomics-rejected")
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


_UNSUPPORTED_FIX = ("sudo dmesg | grep -iE 'not supported in kfd|kfd not supported'   # the GPU the kernel's KFD refuses\n"
                    "lspci -nn -d 1002: | grep -Ei 'vga|display|3d'   # the GPU: ROCm runs only on one its release "
                    "lists (rocm.docs.amd.com, system requirements)")
_NEWER_KERNEL_FIX = ("uname -r   # this kernel's KFD does not know the GPU's graphics IP\n"
                     "sudo dmesg | grep -i 'not supported in kfd'   # after installing a newer kernel (or the amdgpu-dkms "
                     "of a ROCm release that lists this GPU) and rebooting: no line")
_OLD_DRIVER_FIX = ("modinfo -F filename amdgpu; dkms status   # which amdgpu is loaded: the kernel's own, or ROCm's "
                   "amdgpu-dkms built for this kernel\n"
                   "lspci -nn -d 1002: | grep -Ei 'vga|display|3d'   # the GPU and its device id\n"
                   "sudo dmesg | grep -iE 'kfd not supported|not supported in kfd'   # after a kernel (or amdgpu-dkms) "
                   "new enough for this GPU and a reboot: no line")
_HAWAII_FIX = ("lspci -nn -d 1002: | grep -Ei 'vga|display|3d'   # a Hawaii GPU (Radeon R9 290/390, FirePro W9100)\n"
               "# KFD drives it only with amdgpu.exp_hw_support=1 on the kernel command line, and no ROCm release "
               "lists it: use a GPU a release lists (rocm.docs.amd.com, system requirements)")
# The kernel's KFD refusing a GPU (knowledge/messages/kfd.toml), by what the line tells: a chip KFD has
# no case for (whichever kernel), an ASIC or device id this amdgpu build does not know (4.x-5.x), a
# graphics IP this kernel does not know, Hawaii left off unless exp_hw_support.
_ASIC_UNKNOWN = ("kfd:amdgpu-kfd-not-supported-on-asic", "kfd:kfd-did-missing", "kfd:kfd-probe-failed")
_GC_IP = "kfd:amdkfd-gc-ip-not-supported"
_HAWAII = "kfd:kfd-hawaii-experimental"


def _named_amd(f: FactView) -> list:
    return [g for g in f.get("ticket.amd_gpus_named") or [] if isinstance(g, dict)]


def _never_chip(f: FactView):
    """The first AMD GPU the paste names (lspci, lshw, prose) that is a chip KFD never drives, with
    the chip (knowledge/rocm_gpus.toml kfd_chip); (None, None) where none is."""
    for g in _named_amd(f):
        c = rocm_gpus.kfd_chip(f"{g.get('text', '')} {g.get('gpu', '')}")
        if c is not None:
            return g, c
    return None, None


def _lspci_other(f: FactView):
    """The first AMD GPU an lspci line names (its pci.ids name, so its chip is known) that is not a chip
    KFD never drives: a GPU the KFD of a kernel new enough for it takes (kfd_device.c kgd2kfd_probe)."""
    for g in _named_amd(f):
        if g.get("lspci") and rocm_gpus.kfd_chip(f"{g.get('text', '')} {g.get('gpu', '')}") is None:
            return g
    return None


def _rocm_listed(f: FactView):
    """The first AMD GPU the paste names that some ROCm release lists as supported, with those series."""
    for g in _named_amd(f):
        for name in g.get("names") or [g.get("gpu")]:
            series = rocm_gpus.supported_by(rocm_gpus.name_key(name), None) if name else []
            if series:
                return name, series
    return None, None


def _after_hsa(f: FactView) -> str:
    s = ticket_symptoms(f).get(_OUT_OF_RESOURCES)
    if s is None:
        return ""
    return (f"; hsa_init's HSA_STATUS_ERROR_OUT_OF_RESOURCES on line {s.get('line')} follows from it (the runtime "
            "could not open KFD with a GPU, not a lack of memory)")


@rule("GPU019", "rocm-gpu-unsupported", "error", "the kernel's KFD does not support this AMD GPU: ROCm cannot use it",
      impact=8)
def rocm_gpu_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, the amdgpu driver's KFD refusing a GPU: "kfd kfd: amdgpu:
        PITCAIRN not supported in kfd" (a GPU family KFD never supported: TAHITI, PITCAIRN,
        OLAND, TOPAZ and the other pre-GCN3 chips), "GC IP 0b0004 not supported in kfd" (a
        graphics IP this kernel's KFD does not know yet), the 4.x-5.x kernels' "kfd not supported
        on this ASIC" ("kfd2kgd: " from ROCm's DKMS driver), "DID 6810 is missing in
        supported_devices" and "kgd2kfd_probe failed", and "KFD support on Hawaii is experimental".
        For the older wordings, which do not name the chip, the AMD GPU the paste names (lspci,
        lshw's product, by pci.ids name or 1002:xxxx id) tells a chip KFD never drives
        (knowledge/rocm_gpus.toml kfd_chip, from amdgpu_drv.c's PCI ids) from a GPU a ROCm
        release lists, whose driver is too old. Without a kernel line: hsa_init's
        HSA_STATUS_ERROR_OUT_OF_RESOURCES (rocminfo's "Call returned 4104") or rocminfo's refused
        open of /dev/kfd, beside an lspci/lshw line naming such a chip as the only AMD GPU.

    Why it matters:
        Without KFD there is no ROCm compute on the GPU: rocminfo cannot open /dev/kfd (its
        "Cannot allocate memory" or "No such file or directory") and the HSA runtime reports
        HSA_STATUS_ERROR_OUT_OF_RESOURCES (ROCR's Runtime::Load when hsaKmtOpenKFD fails), which
        looks like a resource shortage or a user-space problem. Reinstalling ROCm or adding
        groups changes nothing.

    How to fix:
        For a chip family KFD never supported, ROCm cannot use the GPU: use one ROCm's release
        lists. For an unknown graphics IP, or a listed GPU on a driver older than its KFD support,
        a newer kernel (or the amdgpu-dkms driver of a ROCm release that lists the GPU) may know it.

    References:
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
        - https://github.com/torvalds/linux/blob/master/drivers/gpu/drm/amd/amdkfd/kfd_device.c (kgd2kfd_probe)
        - https://github.com/torvalds/linux/blob/master/drivers/gpu/drm/amd/amdgpu/amdgpu_drv.c (pciidlist)
        - https://github.com/ROCm/legacy-rocm-build/issues/2232 (PITCAIRN not supported in kfd)
        - https://github.com/ROCm/legacy-rocm-build/issues/538 (R9 270X: kfd not supported on this ASIC)
        - https://github.com/ROCm/ROCm/issues/572 (Vega FE on an in-box driver: kfd not supported on this ASIC)
    """
    told = catalogued(f, "rocm-gpu-unsupported")
    after = _after_hsa(f)
    for s in told:
        sid = s.get("id")
        line = f"(line {s.get('line')}: \"{told_text(s)}\")"
        if sid == _GC_IP:
            yield Hit(message=f"this kernel's KFD does not know the GPU's graphics IP: no ROCm compute on it with this "
                              f"kernel {line}{after}", fix=_NEWER_KERNEL_FIX, evidence=told_evidence(s))
        elif sid == _HAWAII:
            yield Hit(message=f"the kernel's KFD leaves this Hawaii GPU out unless amdgpu.exp_hw_support=1, and no ROCm "
                              f"release lists it {line}{after}", fix=_HAWAII_FIX, evidence=told_evidence(s))
        elif sid in _ASIC_UNKNOWN:
            g, chip = _never_chip(f)
            listed, series = _rocm_listed(f)
            if chip is not None:
                yield Hit(message=f"this amdgpu driver has no KFD for the GPU {line}: the paste names {g.get('gpu')} "
                                  f"(line {g.get('line')}), a {chip['chip']} chip ({chip['family']}) that the kernel's "
                                  f"KFD never drives: ROCm cannot use it{after}",
                          fix=_UNSUPPORTED_FIX, evidence=told_evidence(s))
            elif listed or _lspci_other(f):
                which = (f"{listed}, which ROCm {', '.join(series[:3])} lists" if listed else
                         f"{_lspci_other(f).get('gpu')} (lspci, line {_lspci_other(f).get('line')}), not a chip the "
                         f"kernel's KFD never drives")
                yield Hit(message=f"this amdgpu driver has no KFD for the GPU {line}, and the paste names {which}: the "
                                  f"amdgpu loaded is older than this GPU's KFD support (a distribution's own driver "
                                  f"rather than ROCm's amdgpu-dkms for this kernel){after}",
                          fix=_OLD_DRIVER_FIX, evidence=told_evidence(s))
            else:
                yield Hit(message=f"this amdgpu driver has no KFD for the GPU {line}: a chip KFD never supported (Tahiti, "
                                  f"Pitcairn, Cape Verde, Oland, Hainan, Bonaire, Topaz) or a driver older than the GPU's "
                                  f"KFD support{after}", fix=_UNSUPPORTED_FIX + "\n" + _OLD_DRIVER_FIX,
                          evidence=told_evidence(s))
        else:
            yield Hit(message=f"the kernel's KFD does not support this GPU family: ROCm cannot use it {line}{after}",
                      fix=_UNSUPPORTED_FIX, evidence=told_evidence(s))
        return
    yield from _failed_on_a_never_chip(f)


# No kernel line, but ROCm failed to reach KFD where the only AMD GPU the paste names is a chip KFD
# never drives: that chip is the cause whatever else is set up.
_KFD_FAILED = (_OUT_OF_RESOURCES, "kfd:rocminfo-kfd-open-refused")


def _failed_on_a_never_chip(f: FactView) -> Iterator[Hit]:
    symptoms = ticket_symptoms(f)
    s = next((symptoms[k] for k in _KFD_FAILED if k in symptoms), None)
    if s is None:
        return
    g, chip = _never_chip(f)
    if chip is None or chip["kfd"] != "never" or len(_named_amd(f)) != 1:
        return   # none, or another AMD GPU beside it (an APU's graphics with a supported card) may be the one used
    yield Hit(message=f"ROCm could not reach the kernel's KFD (line {s.get('line')}: \"{told_text(s)}\") on a node whose "
                      f"only AMD GPU the paste names is {g.get('gpu')} (line {g.get('line')}), a {chip['chip']} chip "
                      f"({chip['family']}) that the kernel's KFD never drives: ROCm cannot use it",
              fix=_UNSUPPORTED_FIX, evidence={**told_evidence(s), "ticket.amd_gpu": g.get("text")})


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
