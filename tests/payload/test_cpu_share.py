"""The CPU-load sample the benchmark takes before its CPU GEMMs (payload/cpu_share.py), on this
machine's real /proc/stat: the sample must see a process spinning on the same CPUs, whatever the
machine, and the judgement must pass over records a user's snapshot may hold in any shape."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from hpcdoctor.payload import cpu_share


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="Linux only: the sample reads /proc/stat")
def test_a_process_spinning_on_the_same_cpus_is_counted():
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        load = cpu_share.other_load(1.0)
    finally:
        hog.kill()
        hog.wait()
    assert set(load) == {"cpus", "other_busy_cpus", "steal_cpus", "seconds", "resolution_cpus"}
    assert load["cpus"] == len(os.sched_getaffinity(0))
    # The spinning process holds one CPU (more if the machine is busy besides): never less than
    # most of one, never more than the CPUs there are.
    assert 0.7 <= load["other_busy_cpus"] <= load["cpus"], load
    assert 0.9 <= load["seconds"] < 5 and 0 < load["resolution_cpus"] < 0.5, load
    assert cpu_share.shared({"other_load": load}) is not None


def test_no_cpu_of_ours_in_proc_stat_is_unknown_not_idle():
    assert cpu_share._jiffies({10 ** 6}) is None


@pytest.mark.parametrize("record", [None, [], "busy", {"other_busy_cpus": "2"}, {"other_busy_cpus": True},
                                    {"other_busy_cpus": 0.4, "steal_cpus": 0.0},
                                    {"other_busy_cpus": 0.9, "resolution_cpus": 1.5}])
def test_what_is_not_a_measured_share_is_not_called_one(record):
    assert cpu_share.shared({"other_load": record}) is None
    assert cpu_share.shared(record) is None


def test_steal_counts_as_work_taken_from_the_gemm():
    got = cpu_share.shared({"other_load": {"cpus": 8, "other_busy_cpus": 0.2, "steal_cpus": 1.1,
                                           "resolution_cpus": 0.2}})
    assert got is not None and got["taken"] == 1.3
