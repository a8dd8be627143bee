"""A GPU the kernel driver could not initialise because a firmware file it needs is not installed
(knowledge/messages/gpu_firmware.toml): amdgpu's microcode, NVIDIA's GSP firmware."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_catalogued, first_symptom, told_evidence, told_text

SYMBOL = "amdgpu-firmware-missing"
_FREEBSD = "gpu_firmware:lkpi-amdgpu-firmware-not-loaded"
_INIT_FAILED = "gpu_firmware:amdgpu-ip-block-sw-init-failed"


@rule("GPU048", SYMBOL, "error", "amdgpu could not load a firmware file the GPU needs", impact=8,
      also={"info": "the file was not found, and no failure of the GPU's initialisation is shown beside it: amdgpu goes on "
                    "without some files (the PSP's trusted-application firmware, <chip>_ta.bin)"})
def amdgpu_firmware_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, the kernel's firmware loader finding no amdgpu firmware file
        ("amdgpu 0000:03:00.0: Direct firmware load for amdgpu/navy_flounder_sos.bin failed with
        error -2", ENOENT), or FreeBSD's drm-kmod saying the same ("drmn0: could not load firmware
        image 'amdgpu/navy_flounder_sos.bin'"). Where amdgpu's init failure is shown beside it
        ("sw_init of IP block <psp> failed -2"), the GPU was not initialised: error; without it,
        info: amdgpu goes on without some files (the PSP's trusted-application firmware,
        vega20_ta.bin, "not a requirement for basic ROCm functionality", ROCm's maintainers), so
        the line alone does not show a GPU left unusable.

    Why it matters:
        amdgpu loads each IP block's microcode (sos, ta, smc, gfx, sdma, vcn ...) from
        /lib/firmware/amdgpu/<chip>_<block>.bin. A GPU newer than the installed firmware package,
        or a package left out (a minimal image, a firmware built from source without that chip),
        leaves the GPU uninitialised: no render node, no /dev/kfd device for it, and ROCm sees no
        GPU, whatever the ROCm or PyTorch install.

    How to fix:
        Check which files for that chip are installed, install the package that ships the missing
        one (the distribution's build of linux-firmware's amdgpu/ folder; FreeBSD's gpu-firmware
        package for the chip), rebuild the initramfs where amdgpu loads early, and reboot.

    References:
        - https://github.com/torvalds/linux/blob/master/drivers/base/firmware_loader/main.c
        - https://github.com/torvalds/linux/blob/master/drivers/gpu/drm/amd/amdgpu/amdgpu_device.c
        - https://github.com/freebsd/freebsd-src/blob/65ef699e709e95c6e481a05bc07bc66187830850/sys/compat/linuxkpi/common/src/linux_firmware.c
        - https://github.com/freebsd/drm-kmod-firmware/issues/27 (NAVI 22's firmware missing; installing the chip's package fixed it)
        - https://github.com/ROCm/legacy-rocm-build/issues/912 (vega20_ta.bin absent: "not a requirement for basic ROCm functionality")
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    file = str(s.get("file") or "")
    failed = first_symptom(f, _INIT_FAILED)
    freebsd = s.get("id") == _FREEBSD
    name = file.rsplit("/", 1)[-1]
    chip = name.rsplit("_", 1)[0] if "_" in name else name.rsplit(".", 1)[0]
    what = (f"the kernel found no firmware file {file} for amdgpu (line {s.get('line')}: \"{told_text(s)}\")"
            + (f", and amdgpu's initialisation of the GPU failed for it (line {failed.get('line')}: \"{told_text(failed)}\"): "
               "the GPU is not initialised, so no program (ROCm, a display) can use it" if failed else
               ": amdgpu goes on without some files (the PSP's trusted-application firmware, <chip>_ta.bin, is not needed "
               "by ROCm); nothing pasted shows the GPU's initialisation failing, which rocm-smi or the render nodes tell"))
    if freebsd:
        fix = (f"ls /boot/modules | grep -i {shlex.quote(chip)}   # the firmware modules installed for this chip\n"
               "pkg search firmware | grep -i amd   # the gpu-firmware packages, one per chip: install the one for "
               f"{chip} (pkg install NAME), then reboot")
    else:
        fix = (f"ls /lib/firmware/amdgpu/ | grep {shlex.quote(chip)}   # the files installed for this chip ({name} is "
               "not among them)\n"
               f"dnf provides '*/amdgpu/{name}*' || apt-file search {shlex.quote(name)}   # the package that ships it (the "
               "distribution's build of linux-firmware); install or update it\n"
               "sudo dracut -f || sudo update-initramfs -u   # the initramfs, where amdgpu loads early; then reboot")
    if not failed and not freebsd:
        fix = "ls /dev/dri/renderD*; rocm-smi 2>/dev/null | head   # the GPU initialised: a render node each, listed\n" + fix
    yield Hit(message=what, fix=fix, evidence=told_evidence(s), **({} if failed else {"severity": "info"}))


# nv-firmware.h's GSP images and the chip families each serves (knowledge/gpu_firmware.toml)
_GSP_FAMILIES = knowledge.load("gpu_firmware")["nvidia_gsp"]["images"]


@rule("GPU049", "nvidia-gsp-firmware-missing", "error", "the NVIDIA driver's GSP firmware for its release is not installed",
      impact=9)
def nvidia_gsp_firmware_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, the kernel's firmware loader finding no GSP firmware file of the
        NVIDIA driver's release ("nvidia 0000:00:1e.0: Direct firmware load for
        nvidia/565.57.01/gsp_tu10x.bin failed with error -2", ENOENT).

    Why it matters:
        The NVIDIA kernel module asks for its GSP (GPU System Processor) firmware by a name that
        holds its own version (NV_FIRMWARE_FOR_NAME: nvidia/<version>/gsp_tu10x.bin for Turing and
        the A100, gsp_ga10x.bin for Ampere GA10x, Ada, Hopper and Blackwell). A module that runs
        the GPU through its GSP (the open kernel modules always do: they support only GPUs that
        have one) cannot initialise the GPU without it, and nvidia-smi finds none. Firmware of
        another release, left by an upgrade or installed by a package of another driver, does not
        count: the name asked for holds the version.

    How to fix:
        Compare the loaded module's version with the folders under /lib/firmware/nvidia/, and
        install the firmware of that same release (the driver's own package or installer ships it;
        a distribution that splits it off names the package, which its package search finds).

    References:
        - https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/common/inc/nv-firmware.h
        - https://github.com/NVIDIA/open-gpu-kernel-modules/blob/main/kernel-open/nvidia/nv.c (NV_FIRMWARE_FOR_NAME)
        - https://github.com/torvalds/linux/blob/master/drivers/base/firmware_loader/main.c
        - https://github.com/NixOS/nixpkgs/issues/454772 (the datacenter driver's firmware left out of the system's firmware)
    """
    s = first_catalogued(f, "nvidia-gsp-firmware-missing")
    if s is None:
        return
    version, name = str(s.get("version") or ""), str(s.get("name") or "")
    family = _GSP_FAMILIES.get(name)
    yield Hit(message=f"the kernel found no {name} of NVIDIA driver {version} (line {s.get('line')}: \"{told_text(s)}\"): the "
                      f"GSP firmware of the driver release that is loaded is not installed"
                      + (f" (the image for {family})" if family else "")
                      + ": a driver that runs the GPU through its System Processor (the open kernel modules always "
                        "do) cannot initialise it, and another release's firmware does not stand in for it",
              fix=(f"cat /sys/module/nvidia/version; ls /lib/firmware/nvidia/   # the loaded driver ({version}) must have "
                   "a folder of its own version there\n"
                   f"dnf provides '*/nvidia/{version}/{name}' || apt-file search {shlex.quote(f'nvidia/{version}/{name}')}   "
                   "# the package of that release that ships it: install it (or reinstall the driver from one source), "
                   "then reboot"),
              evidence={**told_evidence(s), "driver": version, "firmware": name})
