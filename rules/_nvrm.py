"""What the NVIDIA kernel driver's own notices (knowledge/messages/nvrm.toml) say of a GPU it could
not take or initialise, by catalogue entry: the state each names and the commands that confirm and
end it. GPU001 (gpu_driver.py) answers with these; an nvrm entry that feeds GPU001 and is not
named here is one step of RmInitAdapter failing, answered as such."""

from __future__ import annotations

from typing import Any, Dict, Tuple

Told = Tuple[str, str]

# nv-pci.c's probe: the BAR the firmware assigned is missing or too small (the notice prints its
# size and address), or resizing it failed.
_BAR: Told = (
    "the firmware left a GPU's PCI BAR (its memory window) unassigned or too small, so the driver cannot take "
    "the GPU: typically 'Above 4G Decoding' (a large 64-bit MMIO window) is off in the BIOS or the VM, or the "
    "bridge above the GPU (a PCIe switch, riser or Thunderbolt enclosure) has too small a window",
    "sudo lspci -vv -d 10de: | grep -E 'Region|Kernel driver'   # a Region 'unassigned' or '<ignored>' is the BAR left out\n"
    "journalctl -k -b | grep -iE 'BAR|no space|failed to assign'   # the kernel's own resource-assignment failures\n"
    "# administrators: enable Above 4G Decoding in the BIOS (a VM: a 64-bit MMIO window for passthrough), then reboot")
# nv.c's nv_start_device and nv-pci.c's probe: no interrupt to be had for the GPU.
_IRQ: Told = (
    "the GPU has no usable interrupt (none assigned or granted, or another driver holds its IRQ line and does not "
    "share it), so the driver cannot start it",
    "sudo lspci -vv -d 10de: | grep -E 'Interrupt|MSI'   # the IRQ and the MSI capability the firmware gave the GPU\n"
    "grep -i nvidia /proc/interrupts   # the interrupt the driver holds once it starts\n"
    "# administrators: the driver's own advice is the BIOS's IRQ settings, and unloading the driver that holds the IRQ")
# osapi.c's checks of the GPU against the driver (open modules need GSP; each release a GPU range).
_UNSUPPORTED: Told = (
    "the installed driver does not support this GPU: the open kernel modules need a GPU with GSP (Turing or newer), "
    "and each driver release supports a range of GPUs (older ones need a legacy branch)",
    "cat /proc/driver/nvidia/version   # 'Open Kernel Module' is the open flavour\n"
    "lspci -nn -d 10de:   # the GPU's PCI ID, for the supported-GPU list in the driver README (Appendix A)\n"
    "# administrators: install the proprietary kernel modules of the same driver, or the branch that supports the GPU")
_OPEN_DATACENTER_ONLY: Told = (
    "the open kernel modules of 515 to 535 refuse GeForce and workstation GPUs unless told otherwise, so the GPU is "
    "not initialised",
    "echo 'options nvidia NVreg_OpenRmEnableUnsupportedGpus=1' | sudo tee /etc/modprobe.d/nvidia-open.conf   "
    "# administrators, then reboot; or install 545 or later, or the proprietary modules")
# kernel_gsp.c / kernel_gsp_tu102.c: GSP's protected memory still up, or the GPU's own firmware never
# finished booting: NVIDIA's words are that the GPU is in a bad state and may need to be reset.
_BAD_STATE: Told = (
    "the GPU is in a bad state left by an earlier crash or unclean shutdown (GSP's protected memory still set up, "
    "or the GPU's own firmware never finished booting), so the driver cannot initialise it until the GPU is reset",
    "journalctl -k -b | grep -iE 'NVRM|Xid'   # the fault that left it so, before this boot's failure\n"
    "sudo reboot   # administrators: resets the GPU; if the notice returns after a warm reboot, power-cycle the node")
# osinit.c / kernel_gsp.c: no GSP firmware file, or one of another driver version.
_FIRMWARE: Told = (
    "the GSP firmware file for the loaded driver is missing or of another driver version "
    "(/lib/firmware/nvidia/<version>/gsp_*.bin: an incomplete install, or an initramfs built with another version's files)",
    "cat /sys/module/nvidia/version; ls /lib/firmware/nvidia/   # a directory named for that version must hold gsp_*.bin\n"
    "# administrators: reinstall the driver package of that version, rebuild the initramfs (update-initramfs -u, "
    "or dracut -f), reboot")
_POWER: Told = (
    "the GPU's auxiliary power cables are not connected (or the supply gives it no power), so the driver cannot "
    "initialise it",
    "# administrators: power the node off, seat the GPU's PCIe power connectors and check the supply, power on\n"
    "nvidia-smi   # lists the GPU once it has power")
# os-interface.c: coherent CPU-GPU systems online the GPU's memory as a NUMA node; the notice names
# the setting it needs.
_NUMA: Told = (
    "the GPU's memory could not be onlined as a NUMA node (a coherent CPU-GPU system such as Grace Hopper): the "
    "driver needs hotplugged memory onlined movable",
    "cat /sys/devices/system/memory/auto_online_blocks   # the driver's notice asks for online_movable here\n"
    "# administrators: set it (the kernel's memhp_default_state=online_movable, or a udev rule) and reload the driver")

# nv.c's nvidia_init_module (and rm_init_rm under it): the module itself fails to load, before any GPU
# is probed; nothing about a GPU is known yet, so the answer is the module's, not RmInitAdapter's.
_MODULE_LOAD: Told = (
    "the nvidia kernel module failed while loading (its resource manager, character devices, procfs or "
    "capability set-up), so no GPU can be used until it loads",
    "journalctl -k -b | grep -E 'NVRM|nvidia'   # the notice before 'failed to initialize module' names the step\n"
    "lsmod | grep -w nvidia   # empty: the module is not loaded\n"
    "sudo modprobe nvidia && nvidia-smi   # administrators, once the cause is cleared (a reboot frees leaked kernel memory)")

NVRM_TOLD: Dict[str, Told] = {
    "nvrm:pci-io-region-invalid": _BAR, "nvrm:bios-misconfigured-gpu": _BAR, "nvrm:bar1-realloc-failed": _BAR,
    "nvrm:bar-resize-fatal": _BAR, "nvrm:pci-enable-device-failed": _BAR,
    "nvrm:no-interrupts-available": _IRQ, "nvrm:irq-held-by-other-driver": _IRQ, "nvrm:irq-not-shared": _IRQ,
    "nvrm:irq-audio-driver-hint": _IRQ, "nvrm:request-irq-failed": _IRQ, "nvrm:no-irq-for-card": _IRQ,
    "nvrm:gpu-unsupported-open-modules": _UNSUPPORTED, "nvrm:gpu-unsupported-open-vgpu-host": _UNSUPPORTED,
    "nvrm:vgpu-unsupported-open-modules": _UNSUPPORTED, "nvrm:gpu-unsupported-by-release": _UNSUPPORTED,
    "nvrm:legacy-gpu-ignored": _UNSUPPORTED, "nvrm:gpu-arch-unknown": _UNSUPPORTED,
    "nvrm:open-modules-datacenter-only": _OPEN_DATACENTER_ONLY,
    "nvrm:gsp-wpr2-already-up": _BAD_STATE, "nvrm:gfw-boot-not-complete": _BAD_STATE, "nvrm:gfw-boot-wait-failed": _BAD_STATE,
    "nvrm:gsp-falcon-reset-assert-timeout": _BAD_STATE,
    "nvrm:gsp-falcon-reset-deassert-timeout": _BAD_STATE,
    "nvrm:gfw-gpu-bad-state-reset": _BAD_STATE, "nvrm:gsp-gpu-bad-state-reset": _BAD_STATE,
    "nvrm:gsp-need-firmware": _FIRMWARE, "nvrm:gsp-firmware-image-missing": _FIRMWARE,
    "nvrm:gsp-firmware-version-mismatch": _FIRMWARE, "nvrm:gsp-firmware-version-unknown": _FIRMWARE,
    "nvrm:power-cables-not-connected": _POWER,
    "nvrm:numa-onlining-zone-not-movable": _NUMA, "nvrm:numa-movable-onlining-failed": _NUMA,
    "nvrm:numa-memory-add-failed": _NUMA,
    **{f"nvrm:{k}": _MODULE_LOAD for k in (
        "nvidia-stack-t-cache-allocation-failed", "nvidia-p2p-page-t-cache-allocation-failed", "nv-cap-drv-init-failed",
        "rm-init-rm-failed", "register-chrdev-region-failed-for", "cdev-add-failed-for", "failed-to-initialize-procfs",
        "failed-to-register-pm-notifier", "failed-to-initialize-capabilities", "failed-to-initialize-imex-channels",
        "failed-to-initialize-module")},
}
# Notices that say another kernel driver holds the GPU: gpu_driver.py answers them as it answers the
# probe-routine notice.
HELD_BY_OTHER = frozenset({"nvrm:probe-another-driver-owns", "nvrm:probe-unload-conflicting", "nvrm:gpu-bound-to-other-driver",
                           "nvrm:request-mem-region-failed"})


def shows_gpu(s: Dict[str, Any]) -> bool:
    """Whether a kernel notice of the driver (nvrm:) is about a GPU the machine has: it names one (a
    PCI address, the RM's GPU<n>) or says the driver could not take or keep one. The module's load
    banner, or 'No NVIDIA GPU found', shows none."""
    return bool(s.get("pci") or s.get("gpu") or s.get("rules"))
