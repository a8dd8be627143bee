"""cpu-governor-pins-min-frequency's firmware form: acpi-cpufreq's bios_limit (cpufreq.rst: the upper
limit the platform firmware tells the OS to apply) at the hardware's minimum, as a node stuck in a BIOS
low-power state shows it (ddf-pipeline#85's nodes at 1 GHz); the sysfs values as the kernel prints them
in a recorded node's files (the way tests/rules/test_cpu_frequency.py builds them)."""

from __future__ import annotations

import shutil

from rulekit import NODES, fired
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot

# A policy of the shape acpi-cpufreq reports (kHz); the lowest clock as ddf-pipeline#85's nodes ran (1 GHz).
_POLICY = {"scaling_driver": "acpi-cpufreq", "scaling_governor": "ondemand", "cpuinfo_min_freq": 1000000,
              "cpuinfo_max_freq": 3700000, "scaling_min_freq": 1000000, "scaling_max_freq": 3700000}


def _node(tmp_path, **files):
    root = tmp_path / "node"
    shutil.copytree(NODES / "cpu-kvm-2core", root)
    d = root / "fs" / "sys" / "devices" / "system" / "cpu" / "cpu0" / "cpufreq"
    d.mkdir(parents=True, exist_ok=True)
    for name, value in files.items():
        (d / name).write_text(f"{value}\n")
    return pipeline.gather(ReplaySysRoot(root), Options())


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
