"""cpu-governor-pins-min-frequency: cpu0's cpufreq policy read from sysfs (a recorded node's files with
a cpufreq directory added, each value as the kernel's cpufreq.rst attributes print them), and a
user's words in a public ticket (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import shutil

import pytest

from rulekit import NODES, facts, fired, recorded_paste_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot


def _node(tmp_path, **files):
    root = tmp_path / "node"
    shutil.copytree(NODES / "cpu-kvm-2core", root)
    d = root / "fs" / "sys" / "devices" / "system" / "cpu" / "cpu0" / "cpufreq"
    d.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (d / name).write_text(f"{value}\n")
    return pipeline.gather(ReplaySysRoot(root), Options())


_RANGE = {"cpuinfo_min_freq": 800000, "cpuinfo_max_freq": 3100000}


def test_the_generic_powersave_governor_under_intel_cpufreq_pins_the_minimum(tmp_path):
    g = _node(tmp_path, scaling_driver="intel_cpufreq", scaling_governor="powersave", scaling_min_freq=800000,
              scaling_max_freq=3100000, scaling_cur_freq=800000, **_RANGE)
    assert g["facts"]["cpu"]["cpufreq"]["scaling_driver"] == "intel_cpufreq"
    (f,) = fired("cpu-governor-pins-min-frequency", g)
    assert f.severity == "warning" and "generic powersave governor (driver intel_cpufreq)" in f.message
    assert f.fix.startswith("cpupower frequency-info") and "srun --cpu-freq=Performance" in f.fix


def test_a_userspace_governor_at_the_minimum_and_a_capped_maximum(tmp_path):
    g = _node(tmp_path, scaling_driver="acpi-cpufreq", scaling_governor="userspace", scaling_setspeed=800000,
              scaling_min_freq=800000, scaling_max_freq=3100000, **_RANGE)
    (f,) = fired("cpu-governor-pins-min-frequency", g)
    assert "userspace governor holds the frequency at 800000 kHz" in f.message
    g = _node(tmp_path / "b", scaling_driver="acpi-cpufreq", scaling_governor="ondemand", scaling_min_freq=800000,
              scaling_max_freq=800000, **_RANGE)
    (f,) = fired("cpu-governor-pins-min-frequency", g)
    assert "capped at the hardware's minimum" in f.message


@pytest.mark.parametrize("driver, governor", [
    ("intel_pstate", "powersave"),      # intel_pstate's own algorithm under that name: it scales
    ("amd-pstate-epp", "powersave"),
    ("acpi-cpufreq", "schedutil"),
    ("acpi-cpufreq", "performance"),
])
def test_governors_that_scale_are_silent(tmp_path, driver, governor):
    g = _node(tmp_path, scaling_driver=driver, scaling_governor=governor, scaling_min_freq=800000,
              scaling_max_freq=3100000, **_RANGE)
    assert not fired("cpu-governor-pins-min-frequency", g)


def test_no_cpufreq_is_unknown_and_silent():
    g = facts("h100-kvm-1gpu")
    assert not isinstance(g["facts"].get("cpu", {}).get("cpufreq"), dict)
    assert not fired("cpu-governor-pins-min-frequency", g)


def test_the_users_words_are_info():
    (f,) = fired("cpu-governor-pins-min-frequency", recorded_paste_facts("auto-cpufreq-284-powersave-governor-pins-min-frequency.txt"))
    assert f.severity == "info" and "locked at 800 MHZ" in f.message


@pytest.mark.parametrize("paste", ["likwid-459-perf-event-paranoid-blocks-uncore-events.txt", "gcc-12-mpi-h-missing.txt"])
def test_silent_in_pastes_that_say_nothing_of_the_governor(paste):
    assert not fired("cpu-governor-pins-min-frequency", recorded_paste_facts(paste))


# The firmware's form: acpi-cpufreq's bios_limit (cpufreq.rst: the upper limit the platform firmware
# tells the OS to apply) at the hardware's minimum, as a node stuck in a BIOS low-power state shows it;
# a policy of the shape acpi-cpufreq reports (kHz), the lowest clock as ddf-pipeline#85's nodes ran (1 GHz).
_POLICY = {"scaling_driver": "acpi-cpufreq", "scaling_governor": "ondemand", "cpuinfo_min_freq": 1000000,
           "cpuinfo_max_freq": 3700000, "scaling_min_freq": 1000000, "scaling_max_freq": 3700000}


def test_a_firmware_limit_at_the_minimum_holds_every_cpu_low(tmp_path):
    g = _node(tmp_path, bios_limit=1000000, scaling_cur_freq=1000000, **_POLICY)
    assert g["facts"]["cpu"]["cpufreq"]["bios_limit"] == 1000000
    (f,) = fired("cpu-governor-pins-min-frequency", g)
    assert f.severity == "warning" and "bios_limit" in f.message and "3700000 kHz" in f.message
    assert "cpufreq/bios_limit" in f.fix


def test_a_firmware_limit_at_the_maximum_is_no_limit(tmp_path):
    assert not fired("cpu-governor-pins-min-frequency", _node(tmp_path, bios_limit=3700000, **_POLICY))


def test_no_bios_limit_file_is_no_limit_known(tmp_path):
    g = _node(tmp_path, **_POLICY)
    assert not isinstance(g["facts"]["cpu"]["cpufreq"].get("bios_limit"), int)
    assert not fired("cpu-governor-pins-min-frequency", g)
