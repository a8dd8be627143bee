"""GPU018 rocm-kfd-permission-denied and GPU019 rocm-gpu-unsupported on real pastes (set D's tickets)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_kfd_owned_by_render_with_hsa_out_of_resources():
    (hit,) = fired("rocm-kfd-permission-denied", recorded_paste_facts("rocminfo-34-kfd-render-group-out-of-resources.txt"))
    assert "group" in hit.message and "usermod -a -G render,video" in hit.fix


def test_kfd_group_told_beside_works_as_root():
    (hit,) = fired("rocm-kfd-permission-denied", recorded_paste_facts("rocm-docs-39-kfd-render-group-debian.txt"))
    assert "--group-add render" in hit.fix


def test_kfd_root_only_mode_asks_for_a_udev_rule():
    (hit,) = fired("rocm-kfd-permission-denied", recorded_paste_facts("roct-36-kfd-root-only-udev-rule.txt"))
    assert "mode 0600" in hit.message and "udevadm trigger" in hit.fix


def test_a_member_of_the_group_is_not_a_permission_fault():
    # rocminfo says the user is in the render group: ENOMEM came from the kernel's KFD, not the file mode
    facts = recorded_paste_facts("legacy-rocm-2232-kfd-pitcairn-not-supported.txt")
    assert not fired("rocm-kfd-permission-denied", facts)
    (hit,) = fired("rocm-gpu-unsupported", facts)
    assert "PITCAIRN" in hit.message and "not supported in kfd" in hit.fix


def test_a_working_rocm_node_fires_neither():
    facts = recorded_paste_facts("vllm-45751-rocm-new-format-tail-cut.txt")
    assert not fired("rocm-kfd-permission-denied", facts)
    assert not fired("rocm-gpu-unsupported", facts)


def test_kfd2kgd_not_supported_on_asic_names_the_pitcairn_chip():
    # ROCm/legacy-rocm-build#538 (set AD): a 4.15 kernel's "kfd2kgd: kfd not supported on this ASIC" beside
    # lshw's "Curacao XT / Trinidad XT [Radeon R7 370 / R9 270X/370X]" and rocminfo's "Call returned 4104"
    (hit,) = fired("rocm-gpu-unsupported", recorded_paste_facts("legacy-rocm-538-kfd2kgd-not-supported-r9-270x.txt"))
    assert "kfd2kgd: kfd not supported on this ASIC" in hit.message and "PITCAIRN" in hit.message
    assert "never drives" in hit.message and "OUT_OF_RESOURCES on line 7 follows from it" in hit.message


def test_only_4104_and_the_card_name_judge_the_card():
    # the same paste cut before its dmesg lines: the lshw product name alone tells a chip KFD never drives
    (hit,) = fired("rocm-gpu-unsupported", recorded_paste_facts("legacy-rocm-538-r9-270x-4104-lshw-only.txt"))
    assert "PITCAIRN" in hit.message and "Radeon R7 370" in hit.message


def test_a_listed_gpu_on_an_inbox_driver_is_a_driver_too_old():
    # ROCm/ROCm#572: a Vega Frontier Edition on RHEL 7.5's in-box amdgpu ("original_module exists")
    (hit,) = fired("rocm-gpu-unsupported", recorded_paste_facts("rocm-572-vega-fe-inbox-driver-kfd-not-supported.txt"))
    assert "older than this GPU's KFD support" in hit.message and "never drives" not in hit.message.split("not a chip")[0]
    assert "dkms status" in hit.fix


def test_4104_without_a_refused_chip_is_not_an_unsupported_gpu():
    # hsa_init's 4104 beside /dev/kfd's group: the permission, not the card
    assert not fired("rocm-gpu-unsupported", recorded_paste_facts("rocminfo-34-kfd-render-group-out-of-resources.txt"))
