"""conda-package-unavailable-for-platform on conda's refusals as users pasted them
(tests/fixtures/pastes/SOURCES.md): a warning where the paste names a platform other than x86-64,
information where it names none."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste, platform", [
    ("openfold-474-conda-packages-missing-on-aarch64.txt", "aarch64"),   # the user's words: Grace Hopper (Arm / aarch64)
    ("pynio-46-conda-forge-linux-aarch64.txt", "aarch64"),               # conda's own channel URLs: conda-forge/linux-aarch64
])
def test_not_in_channels_on_an_arm_machine_is_a_warning(paste, platform):
    (f,) = fired("conda-package-unavailable-for-platform", recorded_paste_facts(paste))
    assert f.severity == "warning" and platform in f.message and "not available from current channels" in f.message
    assert "conda config --show subdir" in f.fix


def test_no_platform_named_is_information_only():
    (f,) = fired("conda-package-unavailable-for-platform", recorded_paste_facts("dsol-11-conda-pins-no-platform.txt"))
    assert f.severity == "info" and "names no platform" in f.message


@pytest.mark.parametrize("paste", ["tensorflow-59731-cpu-aws-rc-only-py311.txt",     # pip on aarch64, TensorFlow: its own rule's
                                   "actalker-10-cu118-local-version-not-on-pypi.txt"])  # pip, torch: torch-wheel-unavailable's
def test_pips_refusal_of_torch_or_tensorflow_is_left_to_their_rules(paste):
    assert not fired("conda-package-unavailable-for-platform", recorded_paste_facts(paste))
