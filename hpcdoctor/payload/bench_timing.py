"""Timing for the benchmark payload: a budget, the timed-call loops (CUDA/HIP events on a GPU,
perf_counter on the CPU), and the test knobs that slow or crash a measurement on purpose.
Standard library only, as bench_probe.py: it runs in the job's Python."""

import json
import os
import statistics
import sys
import time

MIN_SAMPLES = 3        # fewer timed calls than this is not a figure
RESERVE_S = 0.15       # kept back to write the last lines before the deadline


def log(msg):
    sys.stderr.write("hpcdoctor bench: %s\n" % msg)
    sys.stderr.flush()


def status(msg):
    sys.stderr.write("hpcdoctor bench-status: %s\n" % msg)
    sys.stderr.flush()


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class Budget:
    def __init__(self, seconds, started=None):
        self.deadline = (started if started is not None else time.monotonic()) + seconds - RESERVE_S

    def left(self):
        return self.deadline - time.monotonic()


class NoFit(Exception):
    """A measurement that cannot fit what is left: its message is the reason."""


def would_take(need, left, what=""):
    return NoFit("%swould take about %s s, %s s left" % (what, secs(need), secs(max(0.0, left))))


def secs(s):
    return "%.1f" % s if s < 10 else "%.0f" % s


def err(exc):
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0][:300] if text else "")


def is_oom(exc):
    return "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"


def _knob(var):
    """{measurement name: value} from "name:value,name:value"."""
    out = {}
    for part in (os.environ.get(var) or "").split(","):
        name, _, value = part.strip().rpartition(":")
        if name:
            out[name] = value
    return out


def slowed(fn, name):
    """fn, repeated as HPCDOCTOR_BENCH_SLOW asks for this measurement (a test knob)."""
    try:
        times = max(1, int(_knob("HPCDOCTOR_BENCH_SLOW").get(name, 1)))
    except ValueError:
        times = 1
    if times == 1:
        return fn

    def many():
        for _ in range(times):
            r = fn()
        return r
    return many


def maybe_crash(name):
    how = _knob("HPCDOCTOR_BENCH_CRASH").get(name)
    if how == "kill":
        import signal

        os.kill(os.getpid(), signal.SIGKILL)
    elif how == "hang":
        while True:  # a wedged driver call: only the parent's deadline ends it
            time.sleep(1)
    elif how == "segv":
        import ctypes
        import faulthandler

        faulthandler.disable()
        ctypes.string_at(0)


# --- timing -----------------------------------------------------------------------------------------

def time_device(torch, fn, iters, repeats, warmup=3):
    """Seconds per call of fn on the current GPU: events around `iters` calls, median of repeats."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / 1000.0 / iters)
    return statistics.median(samples)


def fit_device(torch, fn, seconds, iters_cap, repeats_cap, warmup=3):
    """Seconds per call of fn on the GPU, with as many events-timed calls as fit in `seconds`: one
    call is timed first, and NoFit says how long the least measurement would take."""
    t0 = time.monotonic()
    one = time_device(torch, fn, 1, 1, warmup=0)  # the callers ran fn once already (GEMM: in gemm_case)
    left = seconds - (time.monotonic() - t0)
    calls = int(left / max(one, 1e-7))
    if calls < warmup + MIN_SAMPLES:
        raise would_take((warmup + MIN_SAMPLES) * one, left)
    calls -= warmup
    iters = min(iters_cap, max(1, calls // repeats_cap))
    repeats = min(repeats_cap, max(MIN_SAMPLES, calls // iters))
    return time_device(torch, fn, iters, repeats, warmup), iters * repeats


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return max(time.perf_counter() - t0, 1e-7)


def time_host(fn, samples, per_sample=1, warmup=1):
    """Seconds per call: `samples` timings of `per_sample` calls each, the median."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(per_sample):
            fn()
        out.append((time.perf_counter() - t0) / per_sample)
    return statistics.median(out)


# --- GPU GEMM ---------------------------------------------------------------------------------------
