"""A kernel module (the NVIDIA driver's, amdgpu from a DKMS package, any out-of-tree module) refused
because it is not signed with a key the kernel trusts: Secure Boot's signature enforcement or the
kernel's lockdown (knowledge/messages/kmod.toml, kernel_modsign.toml, nvidia_installer.toml; the
state of Secure Boot from mokutil.toml and shim_signed.toml)."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "secure-boot-blocks-nvidia-module"

# EPERM: lockdown refusing an unsigned module, but also a caller without CAP_SYS_MODULE or modules
# disabled: a refusal only where the paste shows lockdown or Secure Boot on.
_AMBIGUOUS = frozenset({"kmod:insert-not-permitted"})
_LOCKED = frozenset({"kernel_modsign:lockdown-unsigned-module", "kernel_modsign:kernel-locked-down", "mokutil:sb-enabled"})
_SB_OFF = frozenset({"mokutil:sb-disabled", "mokutil:no-secure-boot-support", "mokutil:efi-variables-unsupported",
                     "shim_signed:secure-boot-not-enabled", "mokutil:sb-validation-disabled-in-shim"})
_NVIDIA = re.compile(r"(?i)\bnvidia")


def refusals(f: FactView) -> list:
    """The pasted lines that say the kernel refused a module for its signature, in line order:
    EPERM ("Operation not permitted") only where the paste also shows lockdown or Secure Boot on."""
    told = catalogued(f, SYMBOL)
    ids = {s.get("id") for s in f.get("ticket.symptoms") or []}
    locked = bool(ids & _LOCKED)
    return [s for s in told if s.get("id") not in _AMBIGUOUS or locked]


def nvidia_refusal(f: FactView) -> Optional[dict]:
    """The first refusal (refusals) of the NVIDIA driver's module: one that names it, the installer's, or
    the kernel's own line without a module name in a paste about the NVIDIA driver; None otherwise.
    gpu-driver-unusable leaves the cause and its fix to this rule where there is one."""
    told = refusals(f)
    named = [s for s in told if _NVIDIA.search(_module(s) or "") or str(s.get("id", "")).startswith("nvidia_installer:")]
    if named:
        return named[0]
    unnamed = [s for s in told if not _module(s) and str(s.get("id", "")).startswith("kernel_modsign:")]
    return unnamed[0] if unnamed and _about_nvidia(f, told) else None


def _module(s: dict) -> Optional[str]:
    m = s.get("module") or s.get("file")
    return str(m) if m else None


def _driver_down(f: FactView) -> bool:
    """NVIDIA GPUs on this node's PCI bus that the driver does not answer for (a live node)."""
    on_bus = f.get("nvidia.pci_devices")
    return isinstance(on_bus, int) and on_bus > 0 and bool(f.get("nvidia.error"))


def _about_nvidia(f: FactView, told: list) -> bool:
    if _driver_down(f):
        return True
    if any(_NVIDIA.search(_module(s) or "") or str(s.get("id", "")).startswith("nvidia_installer:") for s in told):
        return True
    return any(str(s.get("id", "")).startswith(("nvidia_smi:", "nvml:", "nvidia_installer:"))
               for s in f.get("ticket.symptoms") or [])


def _fix(f: FactView, nvidia: bool) -> str:
    # dkms status (dkms.toml status-nvidia): the driver branch Ubuntu's signed modules are named by
    branch = next((str(s["branch"]) for s in f.get("ticket.symptoms") or [] if s.get("id") == "dkms:status-nvidia"
                   and s.get("branch")), None)
    told = f.get("ticket.symptoms") or []
    # the certificate DKMS printed (dkms.toml signing-key), else its default: Ubuntu's (a -generic kernel in
    # dkms status) is update-secureboot-policy's MOK.der, the others' /var/lib/dkms/mok.pub (dkms.in prepare_mok)
    cert = next((str(s["path"]) for s in told if s.get("id") == "dkms:signing-key" and str(s.get("path", "")).endswith(
        (".pub", ".der", ".crt", ".pem"))), None)
    ubuntu = any(s.get("id") == "dkms:status-nvidia" and str(s.get("kernel", "")).endswith("-generic") for s in told)
    cert = cert or ("/var/lib/shim-signed/mok/MOK.der" if ubuntu else "/var/lib/dkms/mok.pub")
    lines = ["mokutil --sb-state   # SecureBoot enabled: the kernel loads only modules signed with a key it trusts",
             f"sudo mokutil --import {cert}   # enrol the key DKMS signs its modules with (Ubuntu: "
             "/var/lib/shim-signed/mok/MOK.der; Debian, RHEL: /var/lib/dkms/mok.pub; Fedora akmods: "
             "/etc/pki/akmods/certs/public_key.der); choose a one-time password",
             "sudo reboot   # MokManager (blue screen): Enroll MOK > Continue > Yes > the password; then the module loads"]
    if nvidia:
        if branch:
            lines.append(f"sudo apt-get install linux-modules-nvidia-{branch}-$(uname -r)   # or, on Ubuntu: the "
                         "driver's modules prebuilt and signed by Canonical, no key to enrol (-server- branches too)")
        else:
            lines.append("sudo ubuntu-drivers install   # or, on Ubuntu: installs the driver with linux-modules-nvidia-*, "
                         "the modules prebuilt and signed by Canonical; on RHEL, NVIDIA's precompiled kmod streams")
    lines.append("sudo mokutil --disable-validation   # last resort: stop shim enforcing signatures (or turn Secure Boot off "
                 "in the firmware setup); confirm in MokManager at the next boot")
    return "\n".join(lines)


@rule("GPU041", SYMBOL, "error", "Secure Boot (or lockdown) refuses an unsigned kernel module: the NVIDIA driver or another "
      "DKMS module is not loaded", also={"info": "modprobe's \"Operation not permitted\" alone (lockdown refusing an "
                                         "unsigned module, or a caller without the privilege); or a node booted with "
                                         "Secure Boot whose NVIDIA driver does not answer, its kernel log unread",
                                         "warning": "this node's kernel log refused some module for its signature while "
                                                    "the NVIDIA driver answers"}, impact=9)
def secure_boot_blocks_nvidia_module(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the kernel refusing a module for its signature: modprobe's and insmod's
        "could not insert 'nvidia': Key was rejected by service" (EKEYREJECTED) and "Required key
        not available" (ENOKEY), module-init-tools' "Error inserting ...", systemd-modules-load's
        "Failed to insert module '...'", the kernel's own "Loading of unsigned module is rejected"
        (with "module with unavailable key" and "module with unsupported crypto") and "Lockdown:
        modprobe: unsigned module loading is restricted; see man kernel_lockdown.7", and
        nvidia-installer's "The kernel module failed to load ... because it was not signed by a key
        that is trusted by the kernel". modprobe's "Operation not permitted" is the same refusal
        under lockdown only where the paste shows the lockdown line or mokutil's "SecureBoot
        enabled"; alone it is an info finding (a caller without the privilege answers the same).
        Any module: the NVIDIA driver's, amdgpu or another vendor's DKMS package, a hand-built one.
        Not the kernel's "module verification failed: ... tainting kernel": that module loaded.
        On the node: the same kernel lines in its log since boot (an error where the NVIDIA GPUs
        have no working driver, a warning otherwise), and, the log unread, a node booted with
        Secure Boot (its SecureBoot EFI variable) whose NVIDIA driver does not answer, at info.

    Why it matters:
        With Secure Boot on, Ubuntu, Fedora, RHEL and Arch's signed kernels load only modules
        signed with a key they trust. A driver built on the node by DKMS or the .run installer is
        signed with a local key (or not at all) that the firmware's shim does not know until it is
        enrolled as a Machine Owner Key, so the driver never loads: nvidia-smi cannot reach it,
        every GPU job fails. Reinstalling the driver changes nothing.

    How to fix:
        Enrol the key DKMS signs with (sudo mokutil --import /var/lib/dkms/mok.pub, then reboot and
        confirm in MokManager); or install the distribution's prebuilt, signed modules (Ubuntu's
        linux-modules-nvidia-*, RHEL's precompiled kmod streams); as a last resort, disable
        validation in shim (mokutil --disable-validation) or Secure Boot in the firmware.

    References:
        - https://github.com/torvalds/linux/blob/master/kernel/module/signing.c (module_sig_check: EKEYREJECTED or lockdown)
        - https://github.com/torvalds/linux/blob/master/security/lockdown/lockdown.c ("Lockdown: %s: %s is restricted")
        - https://www.kernel.org/doc/html/latest/admin-guide/module-signing.html
        - https://github.com/dell/dkms/blob/master/dkms.in (prepare_mok: /var/lib/dkms/mok.key and mok.pub)
        - https://github.com/lcp/mokutil/blob/master/src/mokutil.c (--sb-state, --import)
        - https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/install-precompiled-signed-drivers.html (Canonical's signed linux-modules-nvidia packages for Secure Boot)
        - https://github.com/canonical/nvidia-graphics-drivers/issues/62 (Key was rejected by service with Secure Boot on)
    """
    told = refusals(f)
    if not told and _driver_down(f) and f.get("system.secure_boot") is True and not f.get("ticket.symptoms"):
        yield Hit(message=(f"{f.get('nvidia.pci_devices')} NVIDIA GPU(s) without a working driver on a node booted with "
                           "Secure Boot on: a driver module built here by DKMS or the installer loads only if signed with "
                           "an enrolled key (the kernel log, not readable here, would say \"Key was rejected\" or "
                           "\"Lockdown\")"),
                  fix=("sudo modprobe nvidia   # 'Key was rejected by service' or 'Required key not available': the module "
                       "must be signed with an enrolled key\n"
                       "sudo journalctl -k -b | grep -iE 'lockdown|is rejected|module verification'"),
                  severity="info", evidence={"system.secure_boot": True, "nvidia.error": f.get("nvidia.error")})
        return
    if not told:
        ambiguous = [s for s in catalogued(f, SYMBOL) if s.get("id") in _AMBIGUOUS]
        if ambiguous:
            s = ambiguous[0]
            mod = _module(s) or "the module"
            yield Hit(message=(f"line {s.get('line')}: \"{told_text(s)}\": the kernel refused {mod} with EPERM, which is "
                               "what lockdown (Secure Boot) answers for an unsigned module, and also what a caller without "
                               "the privilege (not root, a container) gets; the kernel log says which"),
                      fix=("journalctl -k -b | grep -iE 'lockdown|module verification|is rejected'   # 'Lockdown: modprobe: "
                           "unsigned module loading is restricted': the module must be signed\n"
                           "mokutil --sb-state   # SecureBoot enabled: sign it with an enrolled key "
                           "(sudo mokutil --import /var/lib/dkms/mok.pub, then reboot)"),
                      severity="info", evidence=told_evidence(s))
        return
    # modprobe's line names the module (insmod's the file): it leads, then the installer's, then the kernel's own
    s = next((t for t in told if t.get("module") and str(t.get("id", "")).startswith("kmod:")),
             next((t for t in told if str(t.get("id", "")).startswith(("kmod:", "nvidia_installer:"))), told[0]))
    ids = {t.get("id") for t in f.get("ticket.symptoms") or []}
    nvidia = _about_nvidia(f, told)
    mod = _module(s)
    what = ("the NVIDIA kernel module" if nvidia and (not mod or _NVIDIA.search(mod))
            else f"the kernel module {mod}" if mod else "the kernel module")
    kernel = next((t for t in told if str(t.get("id", "")).startswith("kernel_modsign:") and t is not s), None)
    also = f" (the kernel: line {kernel.get('line')}, \"{told_text(kernel)}\")" if kernel else ""
    if (ids & _SB_OFF or f.get("system.secure_boot") is False) and s.get("id") not in ("kernel_modsign:lockdown-unsigned-module", "kmod:insert-not-permitted"):
        why = ("the kernel enforces module signatures although the paste shows Secure Boot off: module.sig_enforce=1 on "
               "the kernel command line or a kernel built with CONFIG_MODULE_SIG_FORCE; the module must still be signed "
               "with a key the kernel trusts")
    else:
        why = ("Secure Boot (or the kernel's lockdown) admits only modules signed with a key the kernel trusts, and this "
               "one, built on the node by DKMS or the installer, is unsigned or signed with a key never enrolled as a "
               "Machine Owner Key")
    gpu = "; until it loads, nvidia-smi cannot reach the driver and no GPU job runs" if nvidia else ""
    # this node's kernel log since boot names no module (5.13 on): a refusal of some module, the NVIDIA
    # driver's where its GPUs have no driver; another module's is a warning
    logged = all(t.get("source") for t in told)
    severity = "warning" if logged and not _driver_down(f) else None
    yield Hit(message=(f"line {s.get('line')}: \"{told_text(s)}\": the kernel refused to load {what} because of its "
                       f"signature{also}: {why}{gpu}"),
              fix=_fix(f, nvidia), evidence=told_evidence(s), severity=severity)
