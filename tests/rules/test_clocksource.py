"""tsc-clocksource-unstable on real kernel logs from public threads (fixtures/pastes, SOURCES.md): a VM
whose tsc-early was marked unstable at boot (madgraph4gpu), a host that fell back to hpet (sozu), and a
clock that is only wrong, which is system-clock-wrong's and not this rule's (make's clock skew)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste, quoted, fallback", [
    ("madgraph4gpu-116-tsc-early-marked-unstable.txt", "Marking clocksource 'tsc-early' as unstable", ""),
    ("sozu-500-tsc-unstable-switched-to-hpet.txt", "Marking clocksource 'tsc' as unstable", "switched to hpet: "),
])
def test_a_tsc_given_up_is_a_warning_with_the_sysfs_reading(paste, quoted, fallback):
    (f,) = fired("tsc-clocksource-unstable", recorded_paste_facts(paste))
    assert f.severity == "warning" and quoted in f.message and fallback in f.message and "system call" in f.message
    assert f.fix.startswith("cat /sys/devices/system/clocksource/clocksource0/current_clocksource")


def test_silent_on_a_clock_that_is_only_out_of_step():
    assert not fired("tsc-clocksource-unstable", recorded_paste_facts("make-4.3-file-in-the-future.txt"))
