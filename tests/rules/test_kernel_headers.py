"""kernel-headers-missing-for-dkms on real pastes: set O's zen-kernel and ansible-role-nvidia-driver
tickets, dkms's current and older wordings from other threads (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste, kernel", [
    ("../tickets_blind_o/zen-kernel-305-dkms-missing-kernel-headers.txt", "6.2.6-zen1-1-zen"),
    ("rtl88x2bu-211-dkms-kernel-headers-not-found.txt", "5.16.0-kali7-amd64"),
    ("linux-kernel-amdgpu-binaries-6-dkms-headers-old-wording.txt", "4.11.1+"),
    ("bumblebee-925-installer-kernel-source-not-found.txt", ""),
])
def test_no_headers_for_the_kernel_is_an_error(paste, kernel):
    (f,) = fired("kernel-headers-missing-for-dkms", recorded_paste_facts(paste))
    assert f.severity == "error" and kernel in f.message
    assert "/lib/modules/$(uname -r)/build" in f.fix and "dkms autoinstall" in f.fix


def test_the_build_tree_line_is_quoted_before_other_kernels_hooks():
    (f,) = fired("kernel-headers-missing-for-dkms",
                 recorded_paste_facts("../tickets_blind_o/zen-kernel-305-dkms-missing-kernel-headers.txt"))
    assert "autoconf.h" in f.message


def test_kernel_devel_of_another_version_than_the_kernel_is_a_warning():
    (f,) = fired("kernel-headers-missing-for-dkms",
                 recorded_paste_facts("../tickets_blind_o/ansible-role-nvidia-driver-18-kernel-devel-mismatch.txt"))
    assert f.severity == "warning" and "3.10.0-957.el7" in f.message and "3.10.0-1127.18.2.el7" in f.message
    assert f.evidence["kernel"] == "3.10.0-957.el7" and "kernel-devel-$(uname -r)" in f.fix


def test_silent_on_builds_of_other_kinds():
    for paste in ("miopen-1416-cxx-given-offload-arch.txt", "specfem3d-196-gfortran-4-9-module-of-4-8.txt"):
        assert not fired("kernel-headers-missing-for-dkms", recorded_paste_facts(paste))
