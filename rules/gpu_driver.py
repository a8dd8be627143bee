"""GPU driver: GPUs present but the driver stack cannot use them (GPU001), from facts or from the
messages of nvidia-smi, NVML, CUDA and the kernel driver."""

from __future__ import annotations

import re

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, cuda_gpus, told_evidence, told_text
from hpcdoctor.rules._nvrm import HELD_BY_OTHER, NVRM_TOLD, shows_gpu
from hpcdoctor.rules.gpu_access import libs_not_bound_in_container
from hpcdoctor.rules.secure_boot import SYMBOL as SECURE_BOOT, nvidia_refusal


@rule("GPU001", "gpu-driver-unusable", "error", "GPUs present but the driver cannot be used", impact=10,
      also={"info": "the kernel refused the NVIDIA module for its signature: secure-boot-blocks-nvidia-module gives the "
                    "cause; or TensorFlow's or jaxlib's 'kernel driver does not appear to be running' with no NVIDIA GPU "
                    "shown: the machine may have none"})
def gpu_driver_unusable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        GPUs on the PCI bus that neither NVML nor the vendor tool can talk to: no driver loaded, a
        driver/library version mismatch after an update without reboot, a fallen-off device. In a
        pasted ticket, the messages that say so: nvidia-smi's "couldn't communicate with the NVIDIA
        driver", "No devices were found" and "couldn't find libnvidia-ml.so library", NVML's
        "Driver/library version mismatch", "Driver Not Loaded" and "NVML Shared Library Not Found"
        (also where NCCL prints them after "nvmlInit_v2() failed: "), NCCL's own "Failed to open
        libnvidia-ml.so.1" (recorded on an H200 with the library hidden),
        CUDA's error 803 (display driver / CUDA driver mismatch), and torch's "CUDA unknown error"
        at start-up (CUDA's 999 from the device count: the unified-memory module's state), which
        jax/XLA and numba print as cuInit's CUDA_ERROR_UNKNOWN. modprobe's answers to loading the
        module: not found for this kernel (a DKMS build that never ran), or no GPU to drive ("No
        such device"); a module refused for its signature (Secure Boot, lockdown) is an info finding
        here, the cause and its fix being secure-boot-blocks-nvidia-module's. The stream
        executor's diagnostics that TensorFlow and jaxlib print after cuInit fails: "kernel version
        X does not match DSO version Y", and "kernel driver does not appear to be running on this
        host" where the paste shows an NVIDIA GPU; where it shows none, that line is an info
        finding (if the machine has an NVIDIA GPU, its driver is not loaded), with the commands
        that tell (lspci, lsmod, nvidia-smi): every machine without one prints it too. On AMD
        nodes, ROCm's tools saying a present amdgpu module is not usable: rocminfo's "ROCk module
        is NOT live", the amd-smi CLI's "Driver not loaded" after its own module check passed, and
        AMDSMI_STATUS_DRIVER_NOT_LOADED. Not rocminfo's "ROCk module is NOT loaded" nor the
        "amdgpu not found in modules" of rocm-smi and amd-smi: a kernel with amdgpu built in fails
        that module check on a working node (ROCm/rocminfo#42, ROCm/amdsmi#172). An
        NVIDIA GPU that sysfs (its uevent's DRIVER= line), or a pasted lspci -k/-v or lshw, shows
        bound to nouveau, to vfio-pci (passthrough) or to no driver at all; a GPU shown bound to
        nvidia with nothing that asked the driver leaves the rule not judged. The kernel driver's
        own notices (knowledge/messages/nvrm.toml) answer with the cause they name (an invalid PCI
        BAR, no interrupt, a GPU the driver does not support, a GPU left in a bad state, missing
        GSP firmware, power cables), before the "RmInitAdapter failed" they lead to.
        Not in a container started without the GPU option (container-nvidia-libs-not-bound): the
        host's driver is not what is missing there. On the node, besides NVML failing: NVML listing
        the GPUs while the dynamic loader finds no libcuda.so.1 for this job (every CUDA program
        then fails to start), and NVML's "Driver Not Loaded" where the module is loaded
        (/proc/driver/nvidia) but this process has no /dev/nvidia* nodes, said as such. NVML's
        "Insufficient Permissions" where the nodes shut the user out is gpu-device-permission-denied's
        alone (all recorded on an H200 made unsound on purpose, tests/fixtures/nodes/h200-fc-env-*).

    Why it matters:
        Every GPU job on the node fails or silently runs on the CPU. A driver/library mismatch is
        the classic state after a driver upgrade on a node that was not rebooted.

    How to fix:
        Take the node out of service and tell the administrators the exact message; a node with a
        version mismatch needs a reboot (or the old kernel module unloaded and the new one loaded).
        On an AMD node: lsmod | grep amdgpu, then sudo modprobe amdgpu (administrators) and
        dmesg | grep -i amdgpu for why it failed; a container needs --device /dev/kfd --device /dev/dri.

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlInitializationAndCleanup.html
        - 004_3c12714629749d50.txt (node health checks before jobs)
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceEnumvs.html (nvmlReturn_t)
        - https://github.com/pop-os/default-settings/pull/64 (CUDA's unknown error after a resume)
        - https://download.nvidia.com/XFree86/Linux-x86_64/595.45.04/README/powermanagement.html (suspend with UVM)
        - https://github.com/pytorch/pytorch/issues/49081 (/dev/nvidia-uvm missing)
        - https://github.com/pciutils/pciutils/blob/master/ls-kernel.c ("Kernel driver in use", "Kernel modules")
        - https://github.com/lyonel/lshw/blob/master/src/core/pci.cc (driver= and UNCLAIMED)
        - https://github.com/ROCm/rocminfo/blob/c6f7a17c85e0cdd75bf062e7a3490e831c87eb94/rocminfo.cc (CheckInitialState)
        - https://github.com/ROCm/amdsmi/blob/083079e21e445ba0a0bae5e2ff63bb7553a62c22/amdsmi_cli/amdsmi_init.py (check_amdgpu_driver)
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/how-to/docker.html (--device /dev/kfd --device /dev/dri)
        - https://github.com/ROCm/ROCm/issues/1498 (rocminfo and rocm-smi with no amdgpu loaded)
    """
    # A container run without the GPU option lacks the host's libraries: the run's fault, not the driver's.
    if libs_not_bound_in_container(f):
        return
    bound = list(_bound_elsewhere(f))
    if bound:
        yield from bound
        return
    found = False
    for vendor in ("nvidia", "amd"):
        on_bus = f.get(f"{vendor}.pci_devices")
        error = f.get(f"{vendor}.error")
        if isinstance(on_bus, int) and on_bus > 0 and error:
            found = True
            if vendor == "nvidia" and _permission_only(f, error):
                continue  # the driver answers; the nodes' mode shuts this user out: gpu-device-permission-denied's
            if vendor == "nvidia" and _nodes_missing(f, error):
                yield Hit(message=f"the NVIDIA kernel module is loaded (/proc/driver/nvidia is there) but this process has "
                                  f"no /dev/nvidia* device nodes, so the driver's libraries cannot reach it: {error}",
                          fix=_NODES_MISSING_FIX, evidence={"nvidia.pci_devices": on_bus, "nvidia.error": error,
                                                            "devices.nvidia_nodes": 0, "system.nvidia_module_loaded": True})
                continue
            refused = nvidia_refusal(f) if vendor == "nvidia" else None
            if refused is not None:
                yield _left_to_secure_boot(refused)
                continue
            yield Hit(
                message=f"{on_bus} {vendor.upper()} GPU(s) on the PCI bus, but: {error}",
                fix="# drain the node and report the message to the administrators (a driver/library mismatch needs a reboot)",
                evidence={f"{vendor}.pci_devices": on_bus, f"{vendor}.error": error},
            )
    if not found:
        no_libcuda = _libcuda_missing_live(f)
        if no_libcuda is not None:
            yield no_libcuda
            return
        refused = nvidia_refusal(f)
        if refused is not None:
            yield _left_to_secure_boot(refused)
            return
        told = list(_driver_unusable_told(f))
        yield from told
        if not told:
            _bound_but_unasked(f)


def _nodes_missing(f: FactView, error: str) -> bool:
    """NVML's "Driver Not Loaded" (nvidia-smi's "couldn't communicate with the NVIDIA driver") where the
    module is loaded and this process sees no NVIDIA device node: the nodes are what is missing (a
    container or job started without them; recorded on an H200 whose /dev was emptied,
    tests/fixtures/nodes/h200-fc-env-no-device-nodes-2026-11-28)."""
    said = error.lower()
    return (("driver not loaded" in said or "couldn't communicate" in said)
            and f.get("system.nvidia_module_loaded") is True and f.get("devices.nvidia_nodes") == 0)


_NODES_MISSING_FIX = (
    "ls -l /dev/nvidia*   # none here: this process was given no GPU device nodes\n"
    "docker run --gpus all IMAGE nvidia-smi   # a container gets them from the NVIDIA runtime (apptainer exec --nv; "
    "a pod's nvidia.com/gpu limit)\n"
    "srun --gres=gpu:1 nvidia-smi   # in a Slurm job on a site that constrains devices: ask for the GPU\n"
    "sudo nvidia-modprobe -c 0 -u   # administrators, on the host itself: make /dev/nvidia0, nvidiactl and nvidia-uvm")


def _permission_only(f: FactView, error: str) -> bool:
    """NVML's "Insufficient Permissions" where this user may not open the NVIDIA device nodes: the
    driver is working and the nodes' mode or group is the fault (recorded on an H200 whose nodes were
    made root-only, tests/fixtures/emitters_gpu/h200-nvidia-smi-root-only-nodes.txt)."""
    return "insufficient permissions" in error.lower() and bool(f.get("devices.nvidia_denied"))


def _libcuda_missing_live(f: FactView):
    """NVML lists the GPUs, but the dynamic loader finds no libcuda.so.1 where this job runs: every
    CUDA program fails to start (torch: "Found no NVIDIA driver on your system"; CuPy and CUDA
    binaries: error 35; numba: "CUDA driver library cannot be found"), all recorded on an H200 with
    the library hidden. In a container the run's options are at fault: container-nvidia-libs-not-bound."""
    gpus = f.get("gpus")
    libs = f.get("devices.driver_libraries")
    if not isinstance(gpus, list) or not any(g.get("vendor") == "nvidia" for g in gpus) or not isinstance(libs, dict):
        return None
    if "libcuda.so.1" not in libs or libs["libcuda.so.1"] or libs_not_bound_in_container(f):
        return None
    return Hit(message=f"NVML lists {sum(1 for g in gpus if g.get('vendor') == 'nvidia')} NVIDIA GPU(s), but the dynamic "
                       "loader finds no libcuda.so.1 (LD_LIBRARY_PATH, /etc/ld.so.cache, the system folders): every CUDA "
                       "program here fails to start (torch: \"Found no NVIDIA driver on your system\"; CUDA error 35)",
               fix="ldconfig -p | grep -F libcuda.so.1   # nothing, or a path that no longer exists: the driver's CUDA "
                   "library is not installed where the loader looks\n"
                   "ls -l $(dirname $(ldconfig -p | awk '/libnvidia-ml.so.1 /{print $NF; exit}'))/libcuda.so*   "
                   "# beside NVML's library, where the driver installs it\n"
                   "# administrators: reinstall the driver's user-space package of the same version as the kernel "
                   "module (cat /proc/driver/nvidia/version), then sudo ldconfig",
               evidence={"devices.driver_libraries": libs})


def _left_to_secure_boot(refused: dict) -> Hit:
    """The kernel refused the NVIDIA module for its signature: the cause is named, and its fix given, by
    secure-boot-blocks-nvidia-module; this rule only notes the driver's state (info), one error, not two."""
    return Hit(message=(f"the NVIDIA driver is not loaded: the kernel refused its module for its signature (line "
                        f"{refused.get('line')}: \"{told_text(refused)}\"); {SECURE_BOOT} says why and how to fix it"),
               fix="lsmod | grep -w nvidia   # empty until the signed module loads; then: nvidia-smi",
               severity="info", evidence=told_evidence(refused))


# What a pasted nvidia-smi, NVML or CUDA message says of the driver, by catalogue entry: the state
# it names and the commands that confirm and end it.
# The same words come from a job that was given no GPU device (a Slurm job without --gres=gpu on a site
# that constrains devices, 3dem/model-angelo#60): the allocation is checked before the driver is blamed.
_NOT_LOADED = ("the NVIDIA kernel driver is not loaded (or /dev/nvidia* is missing or refused where the command ran: "
               "a Slurm job given no GPU, a container run without them)",
               "scontrol show job \"$SLURM_JOB_ID\" | grep -iE 'tres|gres'   # in a Slurm job: no gres/gpu means the job "
               "was given no GPU (srun --gpus=1 nvidia-smi)\n"
               "lsmod | grep -w nvidia   # empty: the kernel module is not loaded\n"
               "sudo modprobe nvidia && nvidia-smi   # administrators; if it fails, dmesg says why (a new kernel without the driver rebuilt: dkms status)\n"
               "mokutil --sb-state   # 'SecureBoot enabled' and modprobe's 'Key was rejected by service': the module is not "
               "signed with a key this machine trusts (enroll it with mokutil --import, or disable Secure Boot)")
# A container's NVIDIA device node missing on the host when docker starts it (container.toml
# docker-custom-device-missing-nvidia): after a reboot, nothing has loaded the driver and made the nodes yet.
_NODES_MISSING = ("the host has no NVIDIA device node the container was created with: since the host booted, nothing has "
                  "loaded the NVIDIA driver (its nvidia-uvm module, for /dev/nvidia-uvm*) and made its device nodes, which "
                  "the first CUDA program or nvidia-smi on the host does",
                  "ls -l /dev/nvidia*   # the nodes the host has now\n"
                  "nvidia-smi && sudo nvidia-modprobe -u -c=0   # on the host: loads the driver and nvidia-uvm and makes "
                  "their nodes (/dev/nvidia0, /dev/nvidia-uvm, /dev/nvidia-uvm-tools); then docker start the container\n"
                  "sudo systemctl enable --now nvidia-persistenced   # administrators: keeps the driver loaded from boot; "
                  "containers started with --gpus (not fixed --device lists) get the nodes at each start")
# The stream executor's "kernel driver does not appear to be running" with no NVIDIA GPU shown: the
# commands that tell whether there is one, and whether its module is loaded.
_NOT_RUNNING_FIX = ("lspci | grep -i nvidia   # empty: no NVIDIA GPU on this machine, and the line is no fault\n"
                    "lsmod | grep nvidia   # empty while lspci lists a GPU: the kernel module is not loaded\n"
                    "nvidia-smi   # answers with the GPUs once the driver is loaded; on a GPU machine, "
                    "sudo modprobe nvidia (administrators; dmesg says why it fails)")
_MISMATCH = ("the NVIDIA kernel module loaded now is not the version of the driver libraries (a driver updated without a "
             "reboot, or a container carrying its own libcuda)",
             "cat /proc/driver/nvidia/version   # the kernel module loaded now; the libraries are the installed driver's\n"
             "sudo reboot   # administrators: loads the installed driver's module")
_NO_LIBRARY = ("no NVIDIA driver libraries (libnvidia-ml, libcuda) where the command ran: no driver installed there, or a "
               "container started without the NVIDIA runtime",
               "ldconfig -p | grep -E 'libnvidia-ml|libcuda'   # empty: no driver libraries here\n"
               "docker run --rm --gpus all IMAGE nvidia-smi   # a container sees the host driver only through the NVIDIA runtime\n"
               "echo \"$NVIDIA_DRIVER_CAPABILITIES\"   # in a container: NVML and nvidia-smi come with 'utility', libcuda with "
               "'compute' (compute,utility gives both: apptainer.org/docs/user/main/gpu.html)")
_NO_DEVICE = ("NVML reports no usable GPU although the driver answers: the driver failed to initialise every GPU",
              "journalctl -k -b | grep -i NVRM   # RmInitAdapter failed and similar lines: why the driver gave up on the GPU")
# torch's "CUDA unknown error" is CUDA's 999 at initialisation (device count), where it means the
# driver's state, not a program's bug: the unified-memory module broken by a suspend and resume
# (System76 reload it on resume, pop-os/default-settings#64) or /dev/nvidia-uvm missing in a
# container (pytorch/pytorch#49081); torch's own text adds a CUDA_VISIBLE_DEVICES changed late.
_INIT_UNKNOWN = ("CUDA could not initialise the GPU (CUDA's unknown error, 999, at start-up): the driver's unified-memory "
                 "module (nvidia_uvm) lost its state, typically after a suspend and resume, or /dev/nvidia-uvm is missing "
                 "where the program ran; less often CUDA_VISIBLE_DEVICES was changed after the program started",
                 "ls -l /dev/nvidia-uvm   # missing: sudo nvidia-modprobe -c 0 -u\n"
                 "sudo modprobe -r nvidia_uvm && sudo modprobe nvidia_uvm   # administrators, with no CUDA program running; "
                 "or reboot\n"
                 "echo 'options nvidia NVreg_PreserveVideoMemoryAllocations=1' | sudo tee /etc/modprobe.d/nvidia-suspend.conf "
                 "&& sudo systemctl enable nvidia-suspend.service nvidia-hibernate.service nvidia-resume.service   "
                 "# after a suspend: NVIDIA's systemd power management saves CUDA's (UVM) state; from the next boot")
# The NVIDIA driver's kernel notices (knowledge/messages/nvrm.toml): another kernel driver bound the
# GPUs first (the driver's own advice: unload it), or the driver could not initialise a GPU it had.
_HELD_BY_OTHER = ("another kernel driver (nouveau, nvidiafb, rivafb, vfio-pci or a driver_override) took the NVIDIA "
                  "GPUs before the nvidia module, which then has no GPU to drive",
                  "lspci -nnk -d 10de:   # 'Kernel driver in use' of each NVIDIA device: nvidia is the one wanted\n"
                  "lsmod | grep -E '^(nouveau|nvidiafb|rivafb|vfio_pci) '   # the module holding them\n"
                  "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf "
                  "&& sudo update-initramfs -u && sudo reboot   # administrators (dracut -f on RHEL)")
_INIT_FAILED = ("the NVIDIA driver probed the GPU but failed to initialise it (RmInitAdapter failed): firmware or GSP "
                "start, PCI BAR/resource assignment, or a GPU in a bad state; nvidia-smi then finds no devices",
                "journalctl -k -b | grep -iE 'NVRM|BAR|AER'   # the lines before RmInitAdapter failed say which step\n"
                "sudo nvidia-bug-report.sh   # administrators: the report NVIDIA asks for")
# nvidia-container-cli (knowledge/messages/container.toml) runs on the host, before the container
# starts: what it cannot load or initialise is the host's driver, never the image's.
_HOST_NO_LIBRARY = ("nvidia-container-cli (the NVIDIA Container Toolkit, on the host) cannot load the driver's NVML library: "
                    "no NVIDIA driver is installed on the host (on WSL: no Windows NVIDIA driver with WSL support)",
                    "nvidia-smi   # on the host, outside any container: it must list the GPUs before a container can\n"
                    "ldconfig -p | grep libnvidia-ml   # empty: install the NVIDIA driver on the host")
_HOST_CUDA_INIT = ("nvidia-container-cli (on the host) could not initialise CUDA: the host's driver installation or the state "
                   "of its kernel modules is broken (NVIDIA's maintainers: usually the driver installation; a reboot often "
                   "clears it)",
                   "nvidia-smi   # on the host: an error here is the driver's, not docker's\n"
                   "journalctl -k -b | grep -iE 'NVRM|nvidia'   # the driver's own complaint\n"
                   "sudo reboot   # administrators, when nvidia-smi fails after a driver update")
# modprobe's own refusals (knowledge/messages/kmod.toml): why "sudo modprobe nvidia" did not load it.
_NOT_BUILT = ("the running kernel has no NVIDIA module (modprobe finds none in its module directory): the driver was built "
              "for another kernel, typically a kernel update whose DKMS build failed or never ran",
              "dkms status   # the nvidia module and the kernels it was built for: the running one, uname -r, must be listed\n"
              "sudo apt-get install linux-headers-$(uname -r) && sudo dkms autoinstall   # administrators (dnf install "
              "kernel-devel-$(uname -r) on RHEL); then sudo modprobe nvidia && nvidia-smi")
# kmod before v22 names no directory: the module may be absent, or there under another name (distribution
# packages that named it after themselves, nvidia_331_updates_uvm, with no alias; Bumblebee#623).
_NOT_FOUND_OLD = ("the running kernel has no NVIDIA module of that name: the driver was not built for this kernel (a DKMS "
                  "build that failed or never ran), or its package installed the module under another name with no alias",
                  "find /lib/modules/$(uname -r) -name 'nvidia*'   # the NVIDIA modules this kernel has, under whatever name\n"
                  "dkms status   # the nvidia module and the kernels it was built for: uname -r must be listed\n"
                  "sudo apt-get install linux-headers-$(uname -r) && sudo dkms autoinstall   # administrators, where none "
                  "is built for this kernel (dnf install kernel-devel-$(uname -r) on RHEL)")
_UNSIGNED = ("the kernel refuses the NVIDIA module because it is not signed with a key it trusts: Secure Boot is on and the "
             "DKMS-built module was never signed with an enrolled key",
             "mokutil --sb-state   # SecureBoot enabled: the module must be signed with a Machine Owner Key\n"
             "journalctl -k -b | grep -iE 'lockdown|module verification|key'   # the kernel's own words for the refusal")
_NO_GPU_TO_DRIVE = ("the NVIDIA module loaded no GPU (No such device): another kernel driver holds the GPUs, or none here is "
                    "one this driver supports",) + _HELD_BY_OTHER[1:]
# The driver's .run installer (knowledge/messages/nvidia_installer.toml): the module it built would not load.
_INSTALL_LOAD_FAILED = ("the NVIDIA installer built the kernel module but the kernel would not load it: another driver (nouveau) "
                        "holds the GPU, the module was built against other kernel sources, or this driver release supports "
                        "no GPU here",
                        "grep -A3 'Kernel module load error' /var/log/nvidia-installer.log   # the kernel's own reason\n"
                        "lspci -nnk -d 10de:   # 'Kernel driver in use': nouveau must not hold the GPU\n"
                        "journalctl -k -b | grep -iE 'NVRM|nvidia'   # the driver's complaint (an unsupported GPU is named there)")
# ROCm's tools on an AMD node (knowledge/messages/kfd.toml, amd_smi.toml, faq_rocm.toml): rocminfo's
# CheckInitialState, rocm-smi's driverInitialized() and the amd-smi CLI's check_amdgpu_driver() all read
# /sys/module/amdgpu (initstate "live"): the amdgpu kernel driver is not loaded, or its load failed.
# The container flags are AMD's (rocm.docs.amd.com install-on-linux how-to/docker.html, read 2026-11-28:
# "docker run --device /dev/kfd --device /dev/dri --security-opt seccomp=unconfined <image>").
_AMD_NOT_LOADED = ("the amdgpu kernel driver is not loaded (no live /sys/module/amdgpu where the tool ran): the module "
                   "is not installed or not built for this kernel (amdgpu-dkms), denylisted, refused at load (Secure Boot), "
                   "or its initialisation failed; a container shares the host's kernel, so the host lacks it too (on WSL, "
                   "where ROCm reaches the GPU through /dev/dxg, rocm-smi and amd-smi say this on every machine)",
                   "lsmod | grep amdgpu   # empty: the amdgpu module is not loaded (on the host)\n"
                   "cat /sys/module/amdgpu/initstate   # 'live' when loaded; no such file: not loaded\n"
                   "sudo modprobe amdgpu && rocminfo   # administrators; if modprobe fails, it says why\n"
                   "sudo dmesg | grep -i amdgpu | tail   # the driver's own complaint (firmware, an unsupported GPU, a failed init)\n"
                   "grep -r amdgpu /etc/modprobe.d/   # a 'blacklist amdgpu' line keeps it from loading (ROCm install FAQ #8)\n"
                   "docker run --device /dev/kfd --device /dev/dri --security-opt seccomp=unconfined IMAGE rocminfo   "
                   "# in a container, once the host's amdgpu is loaded: its devices mapped in (AMD's ROCm docker documentation)")
_TOLD_DRIVER = {
    "nvidia_installer:nouveau-in-use": _HELD_BY_OTHER, "nvidia_installer:kernel-module-unsigned": _UNSIGNED,
    "nvidia_installer:kernel-module-load-failed": _INSTALL_LOAD_FAILED,
    "kmod:nvidia-module-not-found": _NOT_BUILT, "kmod:nvidia-module-not-found-old": _NOT_FOUND_OLD,
    "kmod:nvidia-insert-key-refused": _UNSIGNED,
    "kmod:nvidia-insert-no-device": _NO_GPU_TO_DRIVE,
    "nvrm:probe-routine-not-called": _HELD_BY_OTHER,
    "nvrm:rm-init-adapter-failed": _INIT_FAILED, "nvrm:rm-init-adapter-failed-minor": _INIT_FAILED,
    "torch:cuda-unknown-error": _INIT_UNKNOWN, "cuda_driver:CUDA_ERROR_UNKNOWN": _INIT_UNKNOWN,
    "nvidia_smi:couldnt-communicate": _NOT_LOADED, "nvml:NVML_ERROR_DRIVER_NOT_LOADED": _NOT_LOADED,
    "nvidia_settings:driver-not-loaded": _NOT_LOADED,
    "nvml:NVML_ERROR_LIB_RM_VERSION_MISMATCH": _MISMATCH, "cuda:cudaErrorSystemDriverMismatch": _MISMATCH,
    "cuda_driver:CUDA_ERROR_SYSTEM_DRIVER_MISMATCH": _MISMATCH, "nvrm:api-mismatch": _MISMATCH,
    "nvidia_smi:nvml-library-not-found": _NO_LIBRARY, "nvml:NVML_ERROR_LIBRARY_NOT_FOUND": _NO_LIBRARY,
    "nccl:nvml-library-missing": _NO_LIBRARY,
    "nvidia_smi:no-devices-found": _NO_DEVICE,
    "container:nvc-nvml-library-not-loaded": _HOST_NO_LIBRARY, "container:nvc-cuda-init-error": _HOST_CUDA_INIT,
    "container:docker-custom-device-missing-nvidia": _NODES_MISSING,
    # the stream executor's diagnostics after cuInit failed (TensorFlow, jaxlib: knowledge/messages/xla.toml)
    "xla:kernel-dso-version-mismatch": _MISMATCH, "xla:kernel-driver-not-running": _NOT_LOADED,
    # NVML's return codes for the two faults the kernel driver names in its own notices
    "nvml:NVML_ERROR_INSUFFICIENT_POWER": NVRM_TOLD["nvrm:power-cables-not-connected"],
    "nvml:NVML_ERROR_IRQ_ISSUE": NVRM_TOLD["nvrm:no-interrupts-available"],
    # the installer's own words when the module it signed is refused: Secure Boot trusts no key for it
    "nvidia_installer:signed-module-untrusted-prompt": _UNSIGNED,
    # ROCm's tools: the amdgpu kernel driver not loaded (or not live)
    "kfd:rocminfo-module-not-live": _AMD_NOT_LOADED,
    "amd_smi:AMDSMI_STATUS_DRIVER_NOT_LOADED": _AMD_NOT_LOADED, "amd_smi:cli-amdgpu-not-loaded": _AMD_NOT_LOADED,
}


# What holds an NVIDIA GPU when the nvidia module does not (lspci -k's "Kernel driver in use", lshw's
# driver=, sysfs's uevent DRIVER=): the state it leaves the GPU in and the commands that end it.
_NOUVEAU = ("{be} bound to {driver}, the kernel's open-source driver, which CUDA, NVML and nvidia-smi cannot use: the NVIDIA "
            "driver is not installed, or {driver} took the GPU before it",
            "lspci -nnk -d 10de:   # 'Kernel driver in use' must read nvidia\n"
            "# administrators: install the NVIDIA driver (apt-get install nvidia-driver-BRANCH, dnf install "
            "nvidia-driver on RHEL, or NVIDIA's installer): its packages blacklist nouveau\n"
            "printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee /etc/modprobe.d/blacklist-nouveau.conf "
            "&& sudo update-initramfs -u && sudo reboot   # where the NVIDIA driver is installed and nouveau still wins "
            "(dracut -f on RHEL)")
_VFIO = ("{be} bound to {driver}, which reserves it for passthrough to a virtual machine: nothing on this host can use it "
         "(intended on a hypervisor host, not on a node that runs the jobs)",
         "lspci -nnk -d 10de:   # 'Kernel driver in use: vfio-pci' on this node\n"
         "grep -rE 'vfio|pci-stub' /etc/modprobe.d /proc/cmdline   # the vfio-pci.ids=10de:... or driver_override that claims it\n"
         "sudo update-initramfs -u && sudo reboot   # administrators, after removing the GPU's id there (dracut -f on RHEL)")
_UNBOUND = ("{have} no kernel driver bound: the NVIDIA kernel module is not loaded (not installed, not built for this "
            "kernel, or refused at load)",
            "lsmod | grep -w nvidia   # empty: the module is not loaded\n"
            "sudo modprobe nvidia && nvidia-smi   # administrators; if modprobe fails, it says why (dkms status for a "
            "module not built for this kernel)")
_OTHER = ("{be} bound to {driver}, not the NVIDIA driver: CUDA, NVML and nvidia-smi cannot use it",
          "lspci -nnk -d 10de:   # 'Kernel driver in use' must read nvidia\n"
          "echo 'blacklist {driver}' | sudo tee /etc/modprobe.d/blacklist-{driver}.conf && sudo update-initramfs -u "
          "&& sudo reboot   # administrators, where the NVIDIA driver is installed")


def _bound_elsewhere(f: FactView) -> Iterator[Hit]:
    """NVIDIA display devices (pci.gpus) held by another kernel driver, or by none: one finding
    per state. A device whose driver the source does not show is not judged."""
    groups = {}
    for n, d in enumerate(f.get("pci.gpus") or []):
        if d.get("vendor") != "nvidia" or not str(d.get("class_id") or "").startswith("03"):
            continue
        driver = d.get("driver")
        if d.get("bound") is True and driver == "nvidia":
            continue
        if d.get("bound") is False:
            state = _UNBOUND
        elif d.get("bound") is True and isinstance(driver, str):
            state = (_NOUVEAU if driver in ("nouveau", "nova_core", "nova_drm") else
                     _VFIO if "vfio" in driver or driver == "pci-stub" else _OTHER)
        else:
            continue
        groups.setdefault((state, driver), []).append((n, d))
    source = f.get("pci.source") or "the PCI bus"
    for (state, driver), devs in groups.items():
        one = len(devs) == 1
        said, fix = (s.format(driver=driver, be="is" if one else "are", have="has" if one else "have") for s in state)
        where = ", ".join(f"{d.get('address')}{' (' + d['name'] + ')' if d.get('name') else ''}" for _, d in devs[:8])
        more = f" and {len(devs) - 8} more" if len(devs) > 8 else ""
        noun = "NVIDIA GPU" if len(devs) == 1 else f"{len(devs)} NVIDIA GPUs"
        yield Hit(message=f"{noun} at {where}{more} {said} (from {source})",
                  fix=fix, subject=f"GPU at {devs[0][1].get('address')}" if len(devs) == 1 else None,
                  evidence={f"pci.gpus.{n}.driver": d.get("driver") for n, d in devs[:8]} | {"pci.source": source})


def _bound_but_unasked(f: FactView) -> None:
    """NVIDIA GPUs that lspci or lshw shows bound to the nvidia module, where nothing asked the driver
    itself: bound is not working (a version mismatch leaves the module bound), so not judged."""
    if isinstance(f.get("gpus"), list):
        return
    held = [d for d in f.get("pci.gpus") or [] if d.get("vendor") == "nvidia" and d.get("driver") == "nvidia"]
    if held:
        raise MissingFact("gpus", f"{f.get('pci.source')} shows the nvidia module bound to {len(held)} NVIDIA GPU(s), "
                                  "but nothing in it shows whether the driver answers (nvidia-smi's output would)")


def _nvidia_gpu_shown(f: FactView) -> bool:
    """Whether anything but "No devices were found" shows an NVIDIA GPU on the machine: one on
    the PCI bus or listed, a GPU named in the ticket, or a kernel line of the driver about one."""
    on_bus = f.get("nvidia.pci_devices")
    if (isinstance(on_bus, int) and on_bus > 0) or cuda_gpus(f) or f.get("ticket.gpus_named"):
        return True
    if any(d.get("vendor") == "nvidia" for d in f.get("pci.gpus") or []):
        return True
    return any(str(s.get("id", "")).startswith("xid:") or (str(s.get("id", "")).startswith("nvrm:") and shows_gpu(s))
               for s in f.get("ticket.symptoms") or [])


def _nvrm_told(sid: str):
    """What a kernel notice of the driver that feeds this rule says (rules/_nvrm.py); a step of
    RmInitAdapter that has no answer of its own is the adapter's initialisation failing."""
    if sid in HELD_BY_OTHER:
        return _HELD_BY_OTHER
    return NVRM_TOLD.get(sid, _INIT_FAILED)


def _told_first(s: dict):
    sid = str(s.get("id", ""))
    nvrm = sid.startswith("nvrm:")
    return (not sid.startswith("kmod:"), not nvrm, nvrm and _TOLD_DRIVER.get(sid, _nvrm_told(sid)) is _INIT_FAILED)


# NCCL's "nvmlInit_v2() failed: %s" (knowledge/messages/nccl.toml nvml-init-failed) ends in NVML's own
# nvmlErrorString: the two strings that name the driver's state answer as NVML's own entries do; any
# other (an unknown error, no permission) does not say the driver is unusable.
_NCCL_NVML_SAID = (("Driver/library version mismatch", _MISMATCH), ("Driver Not Loaded", _NOT_LOADED))


def _nccl_nvml_told(s: dict):
    text = str(s.get("error") or s.get("text", "")).lower()
    return next((told for words, told in _NCCL_NVML_SAID if words.lower() in text), None)


def _driver_unusable_told(f: FactView) -> Iterator[Hit]:
    """A pasted nvidia-smi, NVML or CUDA message that says the driver cannot be used: the first
    one, with what it means. Only the messages above: torch's "Found no NVIDIA driver on your
    system" is also true of a machine without a GPU, where it is no fault."""
    # modprobe's refusal says why the module is not loaded, which nvidia-smi's line above it does not: first
    cpu_node_said = any(t.get("id") == "prose:cpu-node-said" for t in f.get("ticket.symptoms") or [])
    lost = bool(catalogued(f, "gpu-fallen-off-bus"))
    # the kernel driver's own notices say why, which nvidia-smi's "No devices were found" does not: next,
    # a notice that names the cause (a BAR, the firmware) before the "RmInitAdapter failed" it leads to
    unshown = None
    for s in sorted(catalogued(f, "gpu-driver-unusable"), key=_told_first):
        nccl = _nccl_nvml_told(s) if s["id"] == "nccl:nvml-init-failed" else None
        if s["id"] == "nccl:nvml-init-failed" and nccl is None:
            continue
        if nccl is None and s["id"] not in _TOLD_DRIVER and not str(s["id"]).startswith("nvrm:"):
            continue
        if cpu_node_said and not _nvidia_gpu_shown(f):
            continue  # the user says the node has no GPU: no driver there to be broken
        if s["id"] == "xla:kernel-driver-not-running" and not _nvidia_gpu_shown(f):
            unshown = unshown or s  # TensorFlow's GPU builds print it on CPU machines too: info, if nothing else answers
            continue
        if s["id"] == "nvidia_smi:no-devices-found" and not _nvidia_gpu_shown(f):
            continue  # also what a node without an NVIDIA GPU answers (a container run with --nv on a CPU node)
        if s["id"] == "cuda_driver:CUDA_ERROR_UNKNOWN" and "cuInit" not in str(s.get("text", "")):
            continue  # 999 from any later call is a program's or a GPU's error, not the driver failing to start
        said, fix = nccl or _TOLD_DRIVER.get(s["id"]) or _nvrm_told(s["id"])
        if fix is _INIT_FAILED[1] and lost:
            continue  # a GPU lost on the bus is why its initialisation failed: GPU014 says so
        yield Hit(message=f"{said} (line {s.get('line')}: \"{told_text(s)}\")",
                  fix=fix, evidence=told_evidence(s))
        return
    if unshown is not None:
        yield Hit(message=f"if this machine has an NVIDIA GPU, its kernel driver is not loaded (line {unshown.get('line')}: "
                          f"\"{told_text(unshown)}\"): /proc/driver/nvidia/version does not exist where the program ran. "
                          "TensorFlow's and jaxlib's GPU builds print this on every machine without an NVIDIA GPU too, "
                          "where it is no fault",
                  fix=_NOT_RUNNING_FIX, evidence=told_evidence(unshown), severity="info")


# What docker, podman and the CDI say when no NVIDIA runtime is set up (knowledge/messages/container.toml),
# and what is missing for each.
_TOOLKIT_SAID = {
    "container:docker-no-gpu-device-driver": "docker has no device driver for --gpus: the NVIDIA Container Toolkit is not "
                                             "installed on the host, or docker was not restarted after installing it",
    "container:docker-unknown-runtime-nvidia": "docker has no runtime named nvidia: the NVIDIA Container Toolkit is not "
                                               "installed, or its runtime was never added to /etc/docker/daemon.json",
    "container:nvidia-image-driver-not-detected": "NVIDIA's CUDA image found no NVIDIA driver inside the container: it "
                                                  "was started without the GPUs, or the host's NVIDIA Container Toolkit "
                                                  "does not inject them",
    "container:cdi-unresolvable-nvidia-device": "no CDI specification on the host describes the NVIDIA GPUs: the NVIDIA "
                                                "Container Toolkit has not generated one (or it predates the driver now installed)",
    "k8s_device_plugin:nvml-library-not-loaded": "the NVIDIA device plugin finds no libnvidia-ml.so.1 in its pod: the "
                                                 "node's container runtime does not inject the driver into it (the NVIDIA "
                                                 "Container Toolkit not installed or not configured for it, or nvidia neither "
                                                 "the default runtime nor the pod's RuntimeClass)",
    "k8s_device_plugin:hint-gpu-node-runtime": "the NVIDIA device plugin cannot initialise NVML in its pod: the node's "
                                               "container runtime does not give it the driver (the NVIDIA Container "
                                               "Toolkit not configured for it, or nvidia neither the default runtime nor "
                                               "the pod's RuntimeClass)",
    "k8s_device_plugin:incompatible-platform": "the NVIDIA device plugin found neither NVML nor a Tegra system in its pod: "
                                               "on a GPU node, the container runtime does not inject the driver (the NVIDIA "
                                               "Container Toolkit not configured for it, or nvidia neither the default "
                                               "runtime nor the pod's RuntimeClass)",
}
# The device plugin's pod gets the driver only from the node's runtime: nvidia-ctk writes the nvidia
# runtime into the runtime's config and, with --set-as-default, makes it the default
# (NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk/runtime/configure/configure.go @ d34b3046758c:
# --runtime "one of [containerd, crio, docker]", --nvidia-set-as-default alias --set-as-default;
# /etc/docker/daemon.json, /etc/containerd/config.toml, /etc/crio/crio.conf and their drop-ins).
_K8S_PLUGIN_FIX = (
    "nvidia-ctk --version   # on the GPU node; missing: install the NVIDIA Container Toolkit first "
    "(docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html)\n"
    "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default && sudo systemctl restart containerd   "
    "# the node's runtime is containerd (kubectl get node -o wide: CONTAINER-RUNTIME)\n"
    "sudo nvidia-ctk runtime configure --runtime=crio --set-as-default && sudo systemctl restart crio   # CRI-O\n"
    "sudo nvidia-ctk runtime configure --runtime=docker --set-as-default && sudo systemctl restart docker   "
    "# Docker (dockershim, Kubernetes before 1.24)\n"
    "# or keep the default runtime and run the plugin with runtimeClassName: nvidia (a RuntimeClass whose handler is nvidia); "
    "then delete the plugin's pod so that it restarts")
_TOOLKIT_FIX = {
    "k8s_device_plugin:nvml-library-not-loaded": _K8S_PLUGIN_FIX,
    "k8s_device_plugin:hint-gpu-node-runtime": _K8S_PLUGIN_FIX,
    "k8s_device_plugin:incompatible-platform": _K8S_PLUGIN_FIX,
    "container:nvidia-image-driver-not-detected":
        "docker info | grep -i runtimes   # no nvidia: install the NVIDIA Container Toolkit, then "
        "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker\n"
        "# then start the container with its GPUs: docker run --gpus all, a pod with resources.limits nvidia.com/gpu, "
        "apptainer run --nv",
    "container:cdi-unresolvable-nvidia-device":
        "nvidia-ctk --version   # missing: install the NVIDIA Container Toolkit first\n"
        "sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml && nvidia-ctk cdi list   # lists nvidia.com/gpu=all",
}
_DOCKER_FIX = ("nvidia-ctk --version   # missing: install nvidia-container-toolkit from NVIDIA's repository "
               "(docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html)\n"
               "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker\n"
               "docker info | grep -i runtimes   # nvidia listed: docker run --gpus all now finds the GPUs")


def _pasted_docker_run(f: FactView) -> Optional[str]:
    """The docker run command line the user pasted (prose.toml docker-run-without-gpus), spaces folded."""
    run = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "prose:docker-run-without-gpus"), None)
    # the needle's own line and its backslash continuations: the matcher's window joins the lines after
    # it (the container's output)
    line = re.search(r"(?:sudo\s+)?docker\s+run\s(?:[^`\n\\]|\\\n?){0,300}", str(run.get("text") or "")) if run else None
    return " ".join(line.group(0).replace("\\\n", " ").split()) if line else None


def _only_intel_graphics(f: FactView) -> Optional[dict]:
    """Mesa's renderer string for an Intel GPU (mesa.toml intel-renderer-named), where the paste names
    no NVIDIA GPU: the machine's graphics, and no device docker's --gpus could hand a container."""
    if f.get("ticket.gpus_named") or f.get("ticket.gpus_named_shared"):
        return None
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "mesa:intel-renderer-named"), None)


_ASKS_GPU = re.compile(r"--gpus|--runtime[ =]+nvidia|nvidia\.com/gpu|/dev/nvidia")


def _docker_run_asked_no_gpu(f: FactView):
    """A pasted docker run that asks for no GPU, then torch inside it finding none (prose.toml): docker
    gives a container GPUs only through --gpus (or the nvidia runtime), so CUDA there has no device."""
    told = f.get("ticket.symptoms") or []
    run = next((s for s in told if s.get("id") == "prose:docker-run-without-gpus"), None)
    false = next((s for s in told if s.get("id") == "prose:cuda-is-available-false"), None)
    if run is None or false is None or (false.get("line") or 0) < (run.get("line") or 0):
        return
    command = _pasted_docker_run(f)
    if command is None or _ASKS_GPU.search(command):
        return
    with_gpus = re.sub(r"\bdocker run\b", "docker run --gpus all", command, count=1)
    yield Hit(message=f"the container was started without a GPU request (line {run.get('line')}: \"{command[:120]}\"), "
                      f"and CUDA inside it found none (line {false.get('line')}): docker gives a container GPUs only "
                      "when asked (--gpus), through the NVIDIA Container Toolkit",
              fix=(f"{with_gpus}   # the same container, given the GPUs\n"
                   "docker info | grep -i runtimes   # no nvidia: install the NVIDIA Container Toolkit first "
                   "(sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker)"),
              evidence=told_evidence(run))
    return


@rule("GPU017", "nvidia-container-toolkit-missing", "error", "containers cannot be given GPUs: no NVIDIA Container Toolkit set up",
      impact=8, also={"info": "docker's --gpus refusal on a machine whose paste shows an Intel GPU and no NVIDIA one"})
def nvidia_container_toolkit_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, docker or podman refusing a GPU request because nothing on the host
        provides GPUs to containers: docker's "could not select device driver "" with
        capabilities: [[gpu]]" (docker run --gpus), "unknown or invalid runtime name: nvidia" /
        "Unknown runtime specified nvidia" (--runtime=nvidia), and the Container Device
        Interface's "unresolvable CDI devices nvidia.com/gpu=..." (podman, docker --device), and the
        NVIDIA Kubernetes device plugin finding no driver in its pod: "Failed to start nvml with
        error: could not load NVML library" and "Failed to initialize NVML: could not load NVML
        library." (before v0.12), "Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND." (go-nvml),
        "Incompatible platform detected" / "Incompatible strategy detected auto", and its hint "If
        this is a GPU node, did you set the docker default runtime to `nvidia`?" (or "did you
        configure the NVIDIA Container Toolkit?"). The error chain alone ("nvml init failed:
        ERROR_LIBRARY_NOT_FOUND") is not enough: NVIDIA/k8s-device-plugin#856 had it from a pod
        lacking the SYS_ADMIN capability. NVIDIA's CUDA images' own entrypoint warning, "WARNING:
        The NVIDIA Driver was not detected. GPU functionality will not be available.", is the
        container started without its GPUs. Where the paste shows the machine's graphics as an
        Intel GPU (Mesa's renderer string) and names no NVIDIA GPU, docker's --gpus refusal is
        answered as a hint: the machine has no GPU a toolkit could give a container.

    Why it matters:
        The container never starts, or starts without GPUs. The host's driver may be perfectly
        healthy: docker registers its "nvidia" device driver only when the NVIDIA Container
        Toolkit's hook is installed, and podman needs the Toolkit's CDI specification.
        Reinstalling drivers or CUDA changes nothing.

    How to fix:
        Install the NVIDIA Container Toolkit on the host, configure docker's runtime with
        nvidia-ctk runtime configure and restart docker; for podman (CDI), generate the
        specification with nvidia-ctk cdi generate. For the Kubernetes device plugin, make the
        nvidia runtime the node's default (nvidia-ctk runtime configure --runtime=containerd,
        crio or docker --set-as-default, then restart that runtime) or run the plugin with a
        RuntimeClass whose handler is nvidia.

    References:
        - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/install-guide.html
        - https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html
        - https://github.com/OpenBMB/XAgent/issues/273 (installing nvidia-container-toolkit fixed docker --gpus)
        - https://github.com/NVIDIA/k8s-device-plugin#preparing-your-gpu-nodes (the runtime the plugin needs)
        - https://github.com/NVIDIA/k8s-device-plugin/issues/23 (could not load NVML library; the fix: docker's default runtime nvidia)
        - https://github.com/NVIDIA/nvidia-container-toolkit/blob/d34b3046758cb1a5db606b2a39519c731bbf9f56/cmd/nvidia-ctk/runtime/configure/configure.go (--runtime, --set-as-default)
    """
    yield from _docker_run_asked_no_gpu(f)
    for s in f.get("ticket.symptoms") or []:
        said = _TOOLKIT_SAID.get(s.get("id"))
        if said is None:
            continue
        intel = _only_intel_graphics(f)
        if intel is not None and s["id"] == "container:docker-no-gpu-device-driver":
            yield Hit(message=f"docker has no device driver for --gpus (line {s.get('line')}), and the machine the paste "
                              f"describes shows an Intel GPU (line {intel.get('line')}: \"{told_text(intel)}\") and no "
                              "NVIDIA one: --gpus gives containers NVIDIA GPUs only; if lspci lists none either (a laptop's "
                              "Intel graphics may hide a second, NVIDIA GPU), no toolkit makes it work here: run the "
                              "program's CPU mode, or on a machine with an NVIDIA GPU",
                      severity="info",
                      fix="lspci -nn | grep -iE 'vga|3d controller|display'   # no NVIDIA line: no GPU docker --gpus "
                          "could give",
                      evidence=told_evidence(s))
            return
        fix = _TOOLKIT_FIX.get(s["id"], _DOCKER_FIX)
        if s.get("id") == "container:nvidia-image-driver-not-detected":
            command = _pasted_docker_run(f)
            if command is not None and not _ASKS_GPU.search(command) and "<" not in command:
                fix = (re.sub(r"\bdocker run\b", "docker run --gpus all", command, count=1)
                       + "   # the same container, given its GPUs\n" + fix)
        yield Hit(message=f"{said} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))
        return
