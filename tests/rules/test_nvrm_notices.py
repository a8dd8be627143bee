"""The NVIDIA kernel modules' notices (knowledge/messages/nvrm.toml) on real pastes: each is read, a
notice that names why the driver could not take a GPU answers GPU001 with that cause (before the
"RmInitAdapter failed" it leads to, and before nvidia-smi's "No devices were found"), and a log
holding driver notices of a working GPU answers nothing."""

from __future__ import annotations

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.knowledge import messages
from hpcdoctor.rules._nvrm import HELD_BY_OTHER, NVRM_TOLD


def _symptoms(g):
    return {s["id"]: s for s in g["facts"]["ticket"]["symptoms"]}


def test_wpr2_already_up_is_a_gpu_in_a_bad_state_not_a_bare_init_failure():
    g = recorded_paste_facts("open-gpu-kernel-modules-1230-gsp-wpr2-already-up-cut.txt")
    told = _symptoms(g)
    assert {"nvrm:gsp-wpr2-already-up", "nvrm:gsp-gpu-bad-state-reset", "nvrm:gsp-firmware-init-failed"} <= set(told)
    assert told["nvrm:gsp-wpr2-already-up"]["gpu"] == "6"
    (f,) = fired("gpu-driver-unusable", g)
    # the RmInitAdapter line comes first in the log; the notice that says why is the answer
    assert "bad state" in f.message and "line 3" in f.message and "sudo reboot" in f.fix


def test_an_invalid_bar_names_the_bios_window_and_the_gpu():
    g = recorded_paste_facts("gpu-operator-492-bar1-invalid-vm-cut.txt")
    told = _symptoms(g)
    assert told["nvrm:pci-io-region-invalid"]["pci"] == "0000:14:00.0"
    assert told["nvrm:module-loading"]["version"] == "510.108.03"
    (f,) = fired("gpu-driver-unusable", g)
    assert "PCI BAR" in f.message and "Above 4G Decoding" in f.fix


def test_a_gpu_without_gsp_on_the_open_modules_is_unsupported():
    g = recorded_paste_facts("nvidia-driver-158-gt1030-open-modules-unsupported.txt")
    told = _symptoms(g)
    # the notice's four dmesg lines, indented under journalctl's prefix, read as one
    assert told["nvrm:gpu-unsupported-open-modules"]["pci"] == "0000:09:00.0"
    assert {"nvrm:probe-routine-failed", "nvrm:no-devices-initialized"} <= set(told)
    (f,) = fired("gpu-driver-unusable", g)
    assert "does not support this GPU" in f.message and "proprietary kernel modules" in f.fix


def test_the_gfw_boot_notice_answers_before_nvidia_smi_and_the_gsp_line_above_it():
    g = recorded_paste_facts("open-gpu-kernel-modules-789-gfw-boot-not-complete-cut.txt")
    told = _symptoms(g)
    assert {"nvidia_smi:no-devices-found", "nvrm:gsp-firmware-init-failed", "nvrm:gfw-boot-not-complete",
            "nvrm:gfw-boot-wait-failed"} <= set(told)
    (f,) = fired("gpu-driver-unusable", g)
    assert "bad state" in f.message and "GFW_BOOT" in f.message and "line 16" in f.message


def test_a_working_drivers_load_banner_and_chipset_notice_are_read_and_answer_nothing():
    g = recorded_paste_facts("open-gpu-kernel-modules-421-chipset-setup-error-healthy.txt")
    told = _symptoms(g)
    assert told["nvrm:module-loading"]["version"] == "525.60.11"
    assert "nvrm:chipset-setup-function-error" in told
    assert not [s for s in told.values() if s.get("rules")]
    assert not fired("gpu-driver-unusable", g)


def test_every_answered_notice_is_a_catalogue_entry_that_feeds_gpu001():
    # a renamed entry would otherwise fall back to the generic "RmInitAdapter failed" answer unseen
    (fam,) = messages.families(("nvrm",))
    wired = {e.id for e in fam.entries if "gpu-driver-unusable" in (e.get("rules") or [])}
    assert set(NVRM_TOLD) | set(HELD_BY_OTHER) <= wired


def test_a_gpu_fallen_off_the_bus_at_probe_is_gpu014s_not_a_bare_init_failure():
    # the probe-routine-failed notice under it is the consequence, not a second diagnosis
    g = recorded_paste_facts("nvsentinel-155-fallen-off-bus-no-xid.txt")
    assert {"nvrm:gpu-fallen-off-bus-not-responding", "nvrm:probe-routine-failed"} <= set(_symptoms(g))
    assert fired("gpu-fallen-off-bus", g)
    assert not fired("gpu-driver-unusable", g)


def test_a_users_gpu_model_line_is_not_amd_smis_device_heading():
    # "GPU: 3090" in the reporter's list of their system (#789), not amd-smi static's "GPU: 0" heading
    from hpcdoctor.triage.recognise import recognise

    text = (PASTES / "open-gpu-kernel-modules-789-gfw-boot-not-complete-cut.txt").read_text()
    assert "\nGPU: 3090\n" in text
    assert not [p for p in recognise(text).pieces if p.kind.name.startswith("amd-smi")]


def test_a_fwsec_step_that_fails_is_a_gpu_the_driver_could_not_initialise(tmp_path):
    # open-gpu-kernel-modules#965, the catalogue entry's own example: a step of GSP's boot (FWSEC
    # from the VBIOS) that fails is answered as RmInitAdapter failing, not left unread
    from rulekit import paste_facts

    (fam,) = messages.families(("nvrm",))
    (entry,) = [e for e in fam.entries if e.id == "nvrm:fwsec-too-few-interface-entries"]
    (f,) = fired("gpu-driver-unusable", paste_facts(tmp_path, entry.get("example") + "\n"))
    assert "RmInitAdapter failed" in f.message and "line 1" in f.message


def test_every_module_load_notice_is_answered_as_the_module_not_loading():
    from hpcdoctor.rules._nvrm import _MODULE_LOAD

    (fam,) = messages.families(("nvrm",))
    said = {e.id: e.get("means") for e in fam.entries}
    module = [sid for sid, told in NVRM_TOLD.items() if told is _MODULE_LOAD]
    assert len(module) == 11 and all("load" in said[sid] for sid in module)


def test_the_old_drivers_init_module_failure_on_a_machine_without_an_nvidia_gpu_answers_nothing():
    # SteamOS#209: an AMD R9 290X; the 3xx driver's nv-frontend.c prints "NVIDIA init module failed!" after any
    # nvidia_init_module failure, here "No NVIDIA graphics adapter found!": no GPU of its own to fail, so it
    # is not the module-load answer (failed to initialize module, rm_init_rm() failed) of the 5xx drivers
    from conftest import report_of
    g = recorded_paste_facts("steamos-209-nvrm-no-adapter-on-amd-card.txt")
    assert "nvrm:no-adapter-found" in _symptoms(g)
    assert not fired("gpu-driver-unusable", g)
    doc = report_of("check", "--from", str(PASTES / "steamos-209-nvrm-no-adapter-on-amd-card.txt"))
    assert all(f["severity"] == "info" for f in doc["findings"]), doc["findings"]
