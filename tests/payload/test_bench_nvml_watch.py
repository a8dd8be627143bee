"""The benchmark's NVML watch: samples filed under the measurement the payload announced, other
processes told from the payload's own, and a node without NVML said so, never a traceback."""

import os
import subprocess
import sys
import time
from types import SimpleNamespace

from hpcdoctor.probes.nvml_watch import Watch, _ours


class FakeNVML:
    """pynvml's read-only calls, answering from a mutable state the test changes as it goes."""

    NVML_CLOCK_SM = 1

    def __init__(self, procs):
        self.procs = procs
        self.sm, self.reasons = 1980, 0x4

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        pass

    def nvmlDeviceGetCount(self):
        return 1

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetComputeRunningProcesses(self, h):
        return [SimpleNamespace(pid=p, usedGpuMemory=mib << 20) for p, mib in self.procs]

    def nvmlDeviceGetClockInfo(self, h, kind):
        return self.sm

    def nvmlDeviceGetMaxClockInfo(self, h, kind):
        return 1980

    def nvmlDeviceGetPowerUsage(self, h):
        return 699_000

    def nvmlDeviceGetEnforcedPowerLimit(self, h):
        return 700_000

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return self.reasons


def test_samples_are_filed_under_the_announced_measurement_and_others_are_named():
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        nv = FakeNVML([(other.pid, 21650)])
        w = Watch(nv, period=0.01)
        assert w.start()
        w.line("hpcdoctor bench-status: 2/11 gpu0.gemm.bf16, 95 s of the budget left")
        time.sleep(0.1)
        nv.sm, nv.reasons = 1380, 0x4 | 0x40
        time.sleep(0.1)
        w.line("hpcdoctor bench: 2/11 gpu0.gemm.bf16: 775.6 TFLOP/s at n=4096; 91 s left")
        w.line("hpcdoctor bench-status: 8/11 cpu.fp32, 78 s of the budget left")
        time.sleep(0.05)
        out = w.stop()
    finally:
        other.kill()
        other.wait()
    assert list(out) == [0] and list(out[0]) == ["gemm.bf16"]
    c = out[0]["gemm.bf16"]
    assert c["samples"] >= 5
    assert c["sm_mhz"]["min"] == 1380 and c["sm_mhz"]["max"] == 1980 and c["sm_max_mhz"] == 1980
    assert c["power_w"]["max"] == 699.0 and c["power_limit_w"] == 700.0
    assert c["clock_event_reasons"]["sw_power_cap"] == 1.0
    assert 0 < c["clock_event_reasons"]["hw_thermal_slowdown"] < 1
    assert c["other_processes"] == [{"pid": other.pid, "used_mib": 21650}]


def test_the_payloads_own_session_is_not_another_process():
    # Started as run_process starts the payload: a session of its own, led by our child.
    own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        assert _ours(own.pid) is True
        assert _ours(os.getppid()) is False
    finally:
        own.kill()
        own.wait()


def test_a_pid_this_namespace_cannot_see_is_not_claimed_as_another_process():
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    nv = FakeNVML([(gone.pid, 512)])
    nv.procs = []
    w = Watch(nv, period=0.01)
    assert w.start()
    nv.procs = [(gone.pid, 512)]  # appears after the start, and no process here has that pid
    w.line("hpcdoctor bench-status: 7/11 gpu0.memory, 79 s of the budget left")
    time.sleep(0.08)
    c = w.stop()[0]["memory"]
    assert c["other_processes"] == [] and c["unattributed_pids"] == [gone.pid]


def test_no_nvml_is_a_reason_not_a_crash():
    class Broken:
        def nvmlInit(self):
            raise RuntimeError("NVML Shared Library Not Found")

    w = Watch(Broken())
    assert w.start() is False
    assert "NVML Shared Library Not Found" in w.error


def test_the_payload_is_judged_while_it_lives_not_after_it_exits():
    own = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.3)"], start_new_session=True)
    nv = FakeNVML([])
    w = Watch(nv, period=0.01)
    assert w.start()
    nv.procs = [(own.pid, 1024)]
    w.line("hpcdoctor bench-status: 2/11 gpu0.gemm.fp32, 95 s of the budget left")
    time.sleep(0.1)
    own.wait()  # gone before the watch stops, as the payload is
    c = w.stop()[0]["gemm.fp32"]
    assert c["other_processes"] == [] and c["unattributed_pids"] == []
