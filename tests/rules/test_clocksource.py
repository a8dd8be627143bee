"""tsc-clocksource-unstable on real kernel logs from public threads (fixtures/pastes, SOURCES.md): a VM
whose tsc-early was marked unstable at boot (madgraph4gpu), a host that fell back to hpet (sozu), and a
clock that is only wrong, which is system-clock-wrong's and not this rule's (make's clock skew); and on a
node, the sysfs clock source files with the values public threads printed."""

from __future__ import annotations

import pytest

from rulekit import file_facts, fired, recorded_paste_facts, run_rule
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import LiveSysRoot


@pytest.mark.parametrize("paste, quoted, fallback", [
    ("madgraph4gpu-116-tsc-early-marked-unstable.txt", "Marking clocksource 'tsc-early' as unstable", ""),
    ("sozu-500-tsc-unstable-switched-to-hpet.txt", "Marking clocksource 'tsc' as unstable", "switched to hpet: "),
])
def test_a_tsc_given_up_is_a_warning_with_the_sysfs_reading(paste, quoted, fallback):
    (f,) = fired("tsc-clocksource-unstable", recorded_paste_facts(paste))
    assert f.severity == "warning" and quoted in f.message and fallback in f.message and "system call" in f.message
    assert f.fix.startswith("cat /sys/devices/system/clocksource/clocksource0/current_clocksource")


def test_silent_on_a_clock_that_is_only_out_of_step():
    # a paste holds no sysfs reading: the live judgement is skipped with that reason, and nothing fires
    findings, skipped = run_rule("tsc-clocksource-unstable", recorded_paste_facts("make-4.3-file-in-the-future.txt"))
    assert findings == [] and [s["reason"].split(":")[0] for s in skipped] == ["needs system.clocksource"]


def _node(tmp_path, current, available):
    where = "/sys/devices/system/clocksource/clocksource0"
    return file_facts(tmp_path, {f"{where}/current_clocksource": f"{current}\n",
                                 f"{where}/available_clocksource": f"{available}\n"})


def test_on_the_node_a_jiffies_clock_with_the_tsc_available_is_a_warning(tmp_path):
    # coreos/bugs#185: the sysfs files as the reporter printed them, on bare metal
    g = _node(tmp_path, "refined-jiffies", "refined-jiffies jiffies tsc ")
    assert g["facts"]["system"]["clocksource"] == {"current": "refined-jiffies", "available": ["refined-jiffies", "jiffies", "tsc"]}
    (f,) = fired("tsc-clocksource-unstable", g)
    assert f.severity == "warning" and "reads time from refined-jiffies" in f.message and "tsc is available but not chosen" in f.message
    assert "current_clocksource" in f.fix


def test_on_the_node_a_paravirtual_clock_is_silent(tmp_path):
    # microsoft/lisa#824: an Azure guest's list, read from Hyper-V's TSC page
    assert not fired("tsc-clocksource-unstable", _node(tmp_path, "hyperv_clocksource_tsc_page", "hyperv_clocksource_tsc_page acpi_pm"))


def test_this_machines_own_clock_source_is_read_as_a_name():
    # the live sysfs of whatever machine runs the tests: its shape, not its value
    g = pipeline.gather(LiveSysRoot(), Options())
    source = g["facts"]["system"]["clocksource"]
    if isinstance(source, dict):
        assert source["current"] and all(isinstance(a, str) for a in source["available"])
    else:
        assert "not readable" in str(source)
