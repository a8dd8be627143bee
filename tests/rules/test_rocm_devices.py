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
