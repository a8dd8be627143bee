"""NVIDIA's open user-space node tools (issue 24): the driver installer, nvidia-container-cli and
the Container Toolkit, DCGM (dcgmi, its diagnostic) and nvidia-persistenced. Real pastes where
the issue threads hold them (tests/fixtures/pastes/SOURCES.md); DCGM's lines, which no stored
thread quotes, are the source's own format strings with values filled in. Each wired message
fires its rule; the others are read and quoted, and fire nothing."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import open_paste


def _ids(facts):
    return [s["id"] for s in facts["facts"]["ticket"]["symptoms"]]


def _text_facts(tmp_path, text):
    p = tmp_path / "paste.txt"
    p.write_text(text)
    with open_paste([str(p)]) as (root, _r, _n):
        return pipeline.gather(root, Options())


def test_installer_refusing_while_nouveau_holds_the_gpu_is_gpu001():
    g = recorded_paste_facts("apollo-2466-installer-nouveau-in-use.txt")
    assert "nvidia_installer:nouveau-in-use" in _ids(g)
    (f,) = fired("gpu-driver-unusable", g)
    assert "another kernel driver (nouveau" in f.message and "blacklist-nouveau.conf" in f.fix


def test_installer_whose_built_module_will_not_load_is_gpu001():
    g = recorded_paste_facts("coreos-gpu-installer-2-installer-cannot-load-nvidia-ko.txt")
    (f,) = fired("gpu-driver-unusable", g)
    assert "installer built the kernel module but the kernel would not load it" in f.message
    assert "Kernel module load error" in f.fix


def test_installer_refusing_a_loaded_module_is_read_but_no_driver_fault():
    # the driver already installed works and is in use: the installer only refuses to replace it
    g = recorded_paste_facts("apollo-6308-installer-nvidia-drm-already-loaded.txt")
    assert "nvidia_installer:nvidia-module-already-loaded" in _ids(g)
    assert not fired("gpu-driver-unusable", g)


def test_installer_without_kernel_headers_is_read_but_no_driver_fault():
    g = recorded_paste_facts("bumblebee-925-installer-kernel-source-not-found.txt")
    assert {"nvidia_installer:kernel-source-not-found", "nvidia_installer:installation-failed"} <= set(_ids(g))
    assert not fired("gpu-driver-unusable", g)


def test_installer_unsigned_module_refusal_is_secure_boot(tmp_path):
    # kernel.c's format at 590.48.01 with its Secure Boot variant filled in
    g = _text_facts(tmp_path, "ERROR: The kernel module failed to load. Secure boot is enabled on this system, so this "
                              "is likely because it was not signed by a key that is trusted by the kernel. Please try "
                              "installing the driver again, and sign the kernel module when prompted to do so.\n")
    (f,) = fired("secure-boot-blocks-nvidia-module", g)
    assert "Secure Boot" in f.message and "mokutil" in f.fix
    assert [x.severity for x in fired("gpu-driver-unusable", g)] == ["info"]  # the cause is the rule above's


def test_words_about_nouveau_are_not_the_installers_refusal():
    said = "I blacklisted nouveau and rebuilt the initramfs; the nouveau kernel driver is gone and nvidia-smi works.\n"
    assert not [s for s in find_messages(said) if s["family"] == "nvidia_installer"]


def test_container_cli_rpc_timeout_is_read_and_blames_no_driver_or_toolkit():
    g = recorded_paste_facts("nvidia-container-toolkit-202-driver-rpc-timeout.txt")
    ids = _ids(g)
    assert "container:nvc-driver-rpc-timeout" in ids
    assert "container:nvc-initialization-error" not in ids  # the detail, not the bare stage, is read
    assert not fired("gpu-driver-unusable", g) and not fired("nvidia-container-toolkit-missing", g)


def test_container_cli_cgroup_v1_devices_missing_on_a_cgroup_v2_host():
    g = recorded_paste_facts("nvidia-docker-1447-cgroup-devices-not-found.txt")
    ids = _ids(g)
    assert "container:nvc-cgroup-devices-not-found" in ids and "container:nvc-container-error" not in ids
    assert not fired("nvidia-container-toolkit-missing", g)


def test_dcgmi_return_codes_are_read_by_their_text():
    # dcgmi/Command.cpp's and dcgmi/Diag.cpp's formats with errorString's text (DCGM 72fa3fe)
    said = {s["id"]: s for s in find_messages(
        "Error: Unable to connect to host engine. Host engine connection invalid/disconnected.\n"
        "Return: (-30) : DCGM GPU Diagnostic returned an error\n")}
    assert said["dcgm:DCGM_ST_CONNECTION_NOT_VALID"]["code"] == -21
    # a bare "Return:" line outside dcgmi's phrasing is nobody's
    assert "dcgm:DCGM_ST_NVVS_ERROR" not in said
    said = {s["id"] for s in find_messages("Error: Unable to start diag. Return: (-30) : DCGM GPU Diagnostic returned an error\n")}
    assert said == {"dcgm:DCGM_ST_NVVS_ERROR"}


def test_dcgm_diag_double_bit_ecc_and_pending_row_remap_feed_the_gpu_memory_rules(tmp_path):
    # dcgm_errors.h's DCGM_FR_VOLATILE_DBE_DETECTED_MSG and DCGM_FR_PENDING_ROW_REMAP_MSG, values filled in
    g = _text_facts(tmp_path, "Detected 2 volatile double-bit ECC error(s) in GPU 3.\n"
                              "GPU 3 had memory errors and row remappings are pending\n")
    (ecc,) = fired("ecc-uncorrectable-errors", g)
    assert "DCGM_FR_VOLATILE_DBE_DETECTED" in ecc.message
    (remap,) = fired("row-remap-pending", g)
    assert remap.message.startswith("DCGM reports DCGM_FR_PENDING_ROW_REMAP")


def test_dcgm_diag_persistence_mode_warning_is_persistence_mode_off():
    g = recorded_paste_facts("nvsentinel-772-dcgm-diag-persistence-mode.txt")
    (f,) = fired("persistence-mode-off", g)
    assert f.severity == "advice" and "DCGM's diagnostic" in f.message and "nvidia-persistenced" in f.fix


def test_dcgm_diag_with_persistence_mode_on_is_not_persistence_mode_off(tmp_path):
    # the same DCGM software test passing, and its ECC warning (dcgm_errors.h, values filled in)
    g = _text_facts(tmp_path, "Skipping test Memory because ECC is not enabled on GPU 0\n"
                              "Persistence mode is enabled on every GPU of the node.\n")
    findings, _skipped = run_rule("persistence-mode-off", g)
    assert not findings  # not judged: no GPU listing, and no message that says persistence mode is off


def test_dcgm_diag_words_in_prose_are_no_dcgm_report():
    said = ("We run dcgmi diag -r 3 nightly; it checks for double-bit ECC errors, pending row "
            "remappings and PCIe replays, and all tests passed on GPU 0.\n")
    assert not [s for s in find_messages(said) if s["family"].startswith(("dcgm", "nvidia_"))]


def test_persistenced_device_query_failure_is_read_only():
    said = {s["id"] for s in find_messages(
        "Jan 03 10:12:01 gpu07 nvidia-persistenced[1290]: Failed to query NVIDIA devices. Please ensure that the NVIDIA "
        "device files (/dev/nvidia*) exist, and that user 0 has read and write permissions for those files.\n")}
    assert said == {"nvidia_persistenced:failed-to-query-devices"}


def test_dcgm_gpu_lost_is_a_gpu_off_the_bus(tmp_path):
    # dcgmi/Config.cpp's "Error: Unable to update fields. Return: " with errorString(DCGM_ST_GPU_IS_LOST)
    g = _text_facts(tmp_path, "Error: Unable to update fields. Return: GPU is lost\n")
    (f,) = fired("gpu-fallen-off-bus", g)
    assert "DCGM_ST_GPU_IS_LOST" in f.message


def test_nvidia_smis_nvml_mismatch_is_not_the_toolkits_cdi_failure():
    # set G's paste of nvidia-smi's "Failed to initialize NVML: Driver/library version mismatch": nvml.toml's
    # words, not nvidia-ctk's "failed to generate CDI spec: ... failed to initialize NVML: ..."
    from pathlib import Path
    paste = (Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_g"
             / "machine-shop-maintenance-70-nvml-driver-library-mismatch-after-update.txt").read_text()
    ids = {s["id"] for s in find_messages(paste)}
    assert "nvml:NVML_ERROR_LIB_RM_VERSION_MISMATCH" in ids
    assert not [i for i in ids if i.startswith("container:")]
