"""secure-boot-blocks-nvidia-module: a kernel module refused for its signature (Secure Boot, lockdown),
read from real pastes, and the near misses where a module was refused for another reason or loaded."""

from __future__ import annotations

from pathlib import Path

from hpcdoctor.triage.messages import find_messages
from rulekit import fired, paste_facts, recorded_paste_facts

SYMBOL = "secure-boot-blocks-nvidia-module"
V = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_v"
E = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_e"


def _ticket(tmp_path, path: Path):
    return paste_facts(tmp_path, path.read_text(encoding="utf-8"))


def test_nvidia_module_key_rejected_leads_and_driver_rule_only_notes_it(tmp_path):
    g = _ticket(tmp_path, V / "nvidia-graphics-drivers-62-secure-boot-rejects-module.txt")
    (hit,) = fired(SYMBOL, g)
    assert hit.severity == "error" and "NVIDIA kernel module" in hit.message and "Key was rejected" in hit.message
    # Ubuntu (a -generic kernel in dkms status): Ubuntu's DKMS key, and Canonical's signed modules of branch 535
    assert "mokutil --import /var/lib/shim-signed/mok/MOK.der" in hit.fix
    assert "linux-modules-nvidia-535-$(uname -r)" in hit.fix and "mokutil --disable-validation" in hit.fix
    # one error: gpu-driver-unusable (nvidia-smi's line) leaves the cause and its fix to the rule above
    (drv,) = fired("gpu-driver-unusable", g)
    assert drv.severity == "info" and SYMBOL in drv.message


def test_journal_of_gdm_retrying_the_refused_module(tmp_path):
    g = _ticket(tmp_path, E / "acidanthera-2237-nvidia-module-key-rejected-secure-boot.txt")
    (hit,) = fired(SYMBOL, g)
    assert "NVIDIA kernel module" in hit.message and "/var/lib/dkms/mok.pub" in hit.fix
    assert [h.severity for h in fired("gpu-driver-unusable", g)] == ["info"]


def test_other_dkms_modules_refused_are_named():
    g = recorded_paste_facts("alx-wol-13-insmod-dkms-key-rejected-proxmox.txt")
    (hit,) = fired(SYMBOL, g)
    assert "kernel module alx" in hit.message and "nvidia-smi" not in hit.message
    assert "linux-modules-nvidia" not in hit.fix and "ubuntu-drivers" not in hit.fix
    assert not fired("gpu-driver-unusable", g)
    (hit,) = fired(SYMBOL, recorded_paste_facts("gasket-11-systemd-modules-load-key-rejected.txt"))
    assert "gasket" in hit.message
    (hit,) = fired(SYMBOL, recorded_paste_facts("flashcache-12-old-insmod-required-key.txt"))
    assert "flashcache.ko" in hit.message


def test_kernel_line_is_quoted_beside_insmod():
    (hit,) = fired(SYMBOL, recorded_paste_facts("facer-113-insmod-unavailable-key-rejected.txt"))
    assert "src/facer.ko" in hit.message and "module with unavailable key is rejected" in hit.message


def test_lockdown_line_makes_eperm_a_refusal():
    (hit,) = fired(SYMBOL, recorded_paste_facts("rtl88x2bu-114-modprobe-eperm-lockdown.txt"))
    assert hit.severity == "error" and "88x2bu" in hit.message and "Operation not permitted" in hit.message


def test_eperm_alone_is_info():
    # lockdown=integrity is in the reporter's words only; EPERM is also a caller without the privilege
    g = recorded_paste_facts("bottlerocket-4218-nvidia-eperm-lockdown-integrity.txt")
    (hit,) = fired(SYMBOL, g)
    assert hit.severity == "info" and "journalctl -k" in hit.fix


def test_kernel_rejection_line_alone():
    # https://github.com/WCHSoftGroup/ch35x_38x_linux/issues/32 (the whole description)
    (hit,) = fired(SYMBOL, paste_facts_text("[27532.356706] Loading of unsigned module is rejected\n"))
    assert "Loading of unsigned module is rejected" in hit.message


def paste_facts_text(text):
    import tempfile
    return paste_facts(Path(tempfile.mkdtemp()), text)


def test_near_misses_stay_silent():
    # a module that loaded (tainted), one refused for want of its chip, one built for another kernel
    for name in ("dattobd-43-module-verification-tainted-loaded.txt", "nct6687d-104-no-such-device-tainted.txt",
                 "nct6687d-203-exec-format-error-secureboot-enabled.txt"):
        assert not fired(SYMBOL, recorded_paste_facts(name)), name
    # a maintainer's prose that names the errno text is not modprobe's refusal
    # (https://github.com/jetm/mediatek-mt7927-dkms/issues/101, jetm's reply)
    said = ("A module rejected for signing returns `-EKEYREJECTED`, which modprobe prints as \"Key was rejected by "
            "service\". That comes from `module_sig_check()` in `kernel/module/signing.c`, which returns `-EKEYREJECTED` "
            "for unsigned, unsupported-crypto and unavailable-key alike.\n")
    assert not [m for m in find_messages(said) if SYMBOL in (m.get("rules") or [])]
    # a DKMS install on a machine without Secure Boot (shim-signed's line), and mokutil's state alone
    assert not fired(SYMBOL, paste_facts_text("Building initial module for 5.14.0-1054-oem\n"
                                              "Secure Boot not enabled on this system.\nDone.\n"))
    assert not fired("secure-boot-blocks-nvidia-module", paste_facts_text("$ mokutil --sb-state\nSecureBoot enabled\n"))


def test_signature_enforced_without_secure_boot_says_so():
    # kmod's format (tools/modprobe.c ERR("could not insert '%s': %s\n")) filled in, beside mokutil's answer
    (hit,) = fired(SYMBOL, paste_facts_text("$ mokutil --sb-state\nSecureBoot disabled\n$ sudo modprobe amdgpu\n"
                                            "modprobe: ERROR: could not insert 'amdgpu': Key was rejected by service\n"))
    assert "module.sig_enforce=1" in hit.message and "amdgpu" in hit.message


# On the node itself: the firmware's SecureBoot variable through efivarfs (4 bytes of attributes, then
# the value: what a UEFI machine's file holds, attributes 0x06 = boot-service and runtime access), the
# lockdown state, and the kernel log read through kernel_modsign.toml.
_EFIVAR = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c"


def test_secure_boot_and_lockdown_are_read_on_the_node(tmp_path):
    from rulekit import file_facts
    g = file_facts(tmp_path, {_EFIVAR: "\x06\x00\x00\x00\x01", "/sys/kernel/security/lockdown": "none [integrity] confidentiality\n"})
    assert g["facts"]["system"]["secure_boot"] is True and g["facts"]["system"]["lockdown"] == "integrity"
    g = file_facts(tmp_path / "off", {_EFIVAR: "\x06\x00\x00\x00\x00"})
    assert g["facts"]["system"]["secure_boot"] is False
    assert "system.lockdown" in g["unknown"]   # not readable: unknown, never "none"
    g = file_facts(tmp_path / "bios", {"/proc/sys/kernel/hostname": "n1\n"})
    assert "system.secure_boot" in g["unknown"]


def test_node_kernel_log_refusal_with_the_driver_down():
    from hpcdoctor.triage.messages import find_messages
    from rulekit import facts
    logged = [dict(m, source="dmesg") for m in find_messages("[    4.101] Loading of unsigned module is rejected\n",
                                                             families=("kernel_modsign",))]
    g = facts("h100-kvm-1gpu", **{"kernel_log.messages": logged, "nvidia.pci_devices": 1,
                                  "nvidia.error": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"})
    (hit,) = fired(SYMBOL, g)
    assert hit.severity == "error" and "NVIDIA kernel module" in hit.message
    assert [h.severity for h in fired("gpu-driver-unusable", g)] == ["info"]
    # the driver answers: some other module was refused, a warning
    (hit,) = fired(SYMBOL, facts("h100-kvm-1gpu", **{"kernel_log.messages": logged}))
    assert hit.severity == "warning"


def test_node_booted_with_secure_boot_and_no_driver_is_info():
    from rulekit import facts
    down = {"nvidia.pci_devices": 1, "nvidia.error": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver"}
    (hit,) = fired(SYMBOL, facts("h100-kvm-1gpu", **down, **{"system.secure_boot": True}))
    assert hit.severity == "info"
    assert not fired("secure-boot-blocks-nvidia-module", facts("h100-kvm-1gpu", **down, **{"system.secure_boot": False}))
    assert not fired("secure-boot-blocks-nvidia-module", facts("h100-kvm-1gpu", **{"system.secure_boot": True}))
