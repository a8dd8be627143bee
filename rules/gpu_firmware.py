"""A GPU the kernel driver could not initialise because a firmware file it needs is not installed
(knowledge/messages/gpu_firmware.toml)."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, told_evidence, told_text

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
