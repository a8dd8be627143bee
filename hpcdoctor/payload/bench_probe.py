"""hpcdoctor benchmark payload. Runs inside the *target* interpreter: standard library and torch.

Measures what the node really does: GEMM per GPU and precision, device and host copies, CPU GEMM,
all-reduce across the local GPUs (one process per GPU; gloo on CPU). GPU work is timed with CUDA
events (HIP events on ROCm), CPU work with perf_counter, on random data, as the median of repeats.

Every measurement first times one call, then picks the iterations (and where it must, a smaller
size) that fit its share of what is left of the budget; one that cannot fit is skipped with "would
take about N s, M s left". Each figure goes to stdout as one JSON line, flushed, the moment it is
measured, so a run that is killed, crashes or runs out of memory keeps every figure before it:

    {"plan": [[name, path], ...]}               what will be measured, in order
    {"start": name, "left_s": S}                a measurement begins (the one a crash cuts)
    {"at": path, "value": V, "name": name}      a figure (or {"skipped": reason}) at its path
    {"end": true, "elapsed_s": S}

Progress goes to stderr: "hpcdoctor bench: ..." once per finished measurement,
"hpcdoctor bench-status: ..." when one starts (the live status on a terminal).

    bench_probe.py --tier quick|full [--budget S] [--cpu-ranks N] [--max-allreduce-bytes B]
                   [--gemm-n N] [--cpu-n N]

Test knobs (environment): HPCDOCTOR_BENCH_SLOW="cpu.bf16:140" repeats every call of that
measurement 140 times, as a CPU that emulates bf16 would be slow; HPCDOCTOR_BENCH_CRASH=
"cpu.bf16:kill" (or ":segv", ":hang") ends the process the way the OOM killer or a crashing torch
would, or hangs it there.
"""

import argparse
import json
import os
import socket
import statistics
import sys
import tempfile
import time

TIERS = {
    # GEMM sizes that fill an H100-class chip; repeats; all-reduce sizes; CPU GEMM size; the most
    # timed calls per CPU measurement.
    "quick": {"gemm_n": [8192], "repeats": 5, "iters": 10, "copy_bytes": 1 << 30, "ar_max": 1 << 30,
              "ar_iters": 10, "cpu_n": 1024, "cpu_samples": 30},
    "full": {"gemm_n": [4096, 8192, 16384], "repeats": 7, "iters": 20, "copy_bytes": 2 << 30, "ar_max": 4 << 30,
             "ar_iters": 20, "cpu_n": 2048, "cpu_samples": 60},
}
CPU_N = {k: v["cpu_n"] for k, v in TIERS.items()}
CPU_PROBE_N = 64       # the size of the first, timed call that sizes a CPU measurement: small
                       # enough to stay well under a second even at 1 GFLOP/s
MIN_SAMPLES = 3        # fewer timed calls than this is not a figure
RESERVE_S = 0.15       # kept back to write the last lines before the deadline
GPU_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")
CPU_CASES = ("fp32", "bf16", "fp32_bf16_fastmath")


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
    return NoFit("%swould take about %s s, %s s left" % (what, _secs(need), _secs(max(0.0, left))))


def _secs(s):
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


def _timed(fn):
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

def gemm_case(torch, dev, dtype_name, n):
    """(callable, flops per call) for one GEMM, or raise with the reason it cannot run."""
    if dtype_name == "fp8":
        if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
            raise RuntimeError("this torch has no fp8 matmul")
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()  # column-major, as _scaled_mm needs
        one = torch.tensor(1.0, device=dev)

        def fn():
            return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
        # Random normal data: zeros or constants let the hardware skip work and flatter the figure.
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        out = torch.empty(n, n, device=dev, dtype=dtype)

        def fn():
            return torch.matmul(a, b, out=out)
    fn()  # fails here, not inside the timing, if the case cannot run
    return fn, 2.0 * n ** 3


def gpu_gemm_skip(torch, cc, dtype_name):
    """Why this dtype is not measured on this GPU, or None."""
    hip = getattr(torch.version, "hip", None)
    if dtype_name == "tf32" and cc < (8, 0):
        return "no TF32 before compute capability 8.0"
    if dtype_name == "bf16" and cc < (8, 0) and not hip:
        return "no bf16 tensor cores before compute capability 8.0"
    if dtype_name == "fp8" and (hip or cc < (8, 9)):
        return "fp8 needs compute capability 8.9 or newer (CUDA)"
    return None


def gpu_gemm(torch, index, dtype_name, sizes, tier, seconds, name):
    """The best TFLOP/s of one dtype over the sizes that fit `seconds`, smallest first."""
    dev = torch.device("cuda", index)
    torch.cuda.set_device(dev)
    reason = gpu_gemm_skip(torch, torch.cuda.get_device_capability(dev), dtype_name)
    if reason:
        return {"skipped": reason}
    deadline = time.monotonic() + seconds
    allow = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
    best, notes = None, []
    try:
        for k, n in enumerate(sizes):
            share = (deadline - time.monotonic()) / (len(sizes) - k)
            try:
                fn, flops = gemm_case(torch, dev, dtype_name, n)
                sec, calls = fit_device(torch, slowed(fn, name), share, TIERS[tier]["iters"], TIERS[tier]["repeats"])
            except NoFit as exc:
                notes.append("n=%d %s" % (n, exc))
                continue
            except RuntimeError as exc:
                if is_oom(exc):
                    notes.append("n=%d: out of memory" % n)
                    continue
                raise
            finally:
                fn = None
                torch.cuda.empty_cache()
            tflops = flops / sec / 1e12
            if best is None or tflops > best["tflops"]:
                best = {"n": n, "tflops": round(tflops, 2), "ms": round(sec * 1e3, 4), "calls": calls}
    except Exception as exc:  # an unsupported dtype on this GPU/torch: say why, carry on
        best, notes = None, [err(exc)]
    finally:
        torch.backends.cuda.matmul.allow_tf32 = allow
    out = best or {"skipped": "; ".join(notes) or "no size measured"}
    if best and notes:
        out["notes"] = notes
    return out


# --- GPU memory -------------------------------------------------------------------------------------

def gpu_copies(torch, index, nbytes, seconds, name):
    dev = torch.device("cuda", index)
    deadline = time.monotonic() + seconds
    out = {}

    def share(parts):
        return (deadline - time.monotonic()) / parts

    try:
        src = torch.empty(nbytes, dtype=torch.uint8, device=dev).random_()
        dst = torch.empty_like(src)
        # A device-to-device copy reads and writes every byte: count both, as STREAM and DCGM do.
        sec, _ = fit_device(torch, slowed(lambda: dst.copy_(src), name), share(3), 5, 5)
        out["d2d_gbs"] = round(2 * nbytes / sec / 1e9, 1)
    except (RuntimeError, NoFit) as exc:
        out["d2d_gbs"] = {"skipped": str(exc) if isinstance(exc, NoFit) else err(exc)}
    finally:
        src = dst = None
        torch.cuda.empty_cache()
    host_bytes = min(nbytes, 512 << 20)
    for k, pinned in enumerate((True, False)):
        key = "pinned" if pinned else "pageable"
        try:
            host = torch.empty(host_bytes, dtype=torch.uint8).random_()
            if pinned:
                host = host.pin_memory()
            devbuf = torch.empty(host_bytes, dtype=torch.uint8, device=dev)
            sec, _ = fit_device(torch, slowed(lambda: devbuf.copy_(host, non_blocking=pinned), name),
                                share(2 * (2 - k)), 3, 5)
            out["h2d_%s_gbs" % key] = round(host_bytes / sec / 1e9, 1)
            sec, _ = fit_device(torch, slowed(lambda: host.copy_(devbuf, non_blocking=pinned), name),
                                share(2 * (2 - k) - 1), 3, 5)
            out["d2h_%s_gbs" % key] = round(host_bytes / sec / 1e9, 1)
        except (RuntimeError, NoFit) as exc:
            why = {"skipped": str(exc) if isinstance(exc, NoFit) else err(exc)}
            out.setdefault("h2d_%s_gbs" % key, why)
            out.setdefault("d2h_%s_gbs" % key, why)
        finally:
            host = devbuf = None
    return out


# --- CPU GEMM ---------------------------------------------------------------------------------------

def cpu_gemm(torch, case, n_target, seconds, max_samples, name):
    """GFLOP/s of one CPU GEMM case at n_target, or at the largest halving of it that fits
    `seconds` as judged from one timed call at a small size."""
    deadline = time.monotonic() + seconds
    dtype = torch.bfloat16 if case == "bf16" else torch.float32
    mk = getattr(getattr(torch.backends, "mkldnn", None), "matmul", None)
    old = None
    if case == "fp32_bf16_fastmath":
        if mk is None or not hasattr(mk, "fp32_precision"):
            return {"skipped": "this torch has no torch.backends.mkldnn.matmul.fp32_precision"}
        old = mk.fp32_precision
        mk.fp32_precision = "bf16"  # oneDNN's BF16 fast math for fp32 matmuls
    try:
        # Time one call at a small size, then double the size while one more call and
        # MIN_SAMPLES timed ones still fit: each step costs an eighth of the next.
        n = min(CPU_PROBE_N, n_target)
        a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
        fn = slowed(lambda: torch.matmul(a, b), name)
        fn()  # the first call builds oneDNN's kernels: not representative
        one = _timed(fn)
        while n < n_target:
            nxt = min(2 * n, n_target)
            need = one * (float(nxt) / n) ** 3 * (1 + MIN_SAMPLES)
            if need > deadline - time.monotonic():
                break
            n = nxt
            a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
            one = _timed(fn)
        while True:
            per_sample = max(1, int(0.002 / one))  # keep each timing well above the clock's resolution
            left = deadline - time.monotonic()
            samples = int(left / (one * per_sample))
            if samples >= MIN_SAMPLES:
                break
            if n <= min(CPU_PROBE_N, n_target):
                exc = would_take(one * (float(n_target) / n) ** 3 * (1 + MIN_SAMPLES), left, "GEMM n=%d " % n_target)
                exc.rate = 2.0 * n ** 3 / one / 1e9
                raise exc
            # the first call at this size ran slower than the smaller one foretold: step back
            n //= 2
            a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
            fn()
            one = _timed(fn)
        samples = min(samples, max_samples)
        sec = time_host(fn, samples, per_sample, warmup=0)
    except NoFit as exc:
        out = {"skipped": str(exc)}
        if getattr(exc, "rate", None):
            out["probe_gflops"] = round(exc.rate, 2)  # from the calls that sized it: a hint, not a figure
        return out
    except Exception as exc:
        return {"skipped": err(exc)}
    finally:
        if old is not None:
            mk.fp32_precision = old
    out = {"gflops": round(2.0 * n ** 3 / sec / 1e9, 1), "n": n, "calls": samples * per_sample,
           "ms": round(sec * 1e3, 3)}
    if n != n_target:
        out["reduced_from"] = n_target
    return out


# --- all-reduce -------------------------------------------------------------------------------------

def busbw(algbw, n):
    """nccl-tests' bus bandwidth for all-reduce: algbw x 2(n-1)/n."""
    return algbw * 2.0 * (n - 1) / n


def allreduce_sizes(max_bytes):
    sizes, s = [], 8 << 10
    while s <= max_bytes:
        sizes.append(s)
        s *= 8
    if sizes and sizes[-1] != max_bytes:
        sizes.append(max_bytes)
    return sizes


def _ar_rank(rank, world, port, backend, sizes, iters, result_path, deadline):
    """One rank. Rank 0 appends one JSON line per size to result_path as it is measured; every rank
    agrees on the iterations each size can afford before the deadline (time.monotonic is one clock
    for all processes of the machine), so none waits on a collective another skipped."""
    import datetime

    import torch
    import torch.distributed as dist

    dist.init_process_group(backend, init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    gpu = backend in ("nccl", "rccl")
    if gpu:
        torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank) if gpu else torch.device("cpu")

    def sync():
        if gpu:
            torch.cuda.synchronize()

    out = open(result_path, "a") if rank == 0 else None
    for nbytes in sizes:
        t = torch.randn(nbytes // 4, device=dev)
        t0 = time.perf_counter()
        dist.all_reduce(t)
        sync()
        one = time.perf_counter() - t0
        # the slowest rank's call and the least time left, agreed by all
        agree = torch.tensor([one, -(deadline - time.monotonic())], device=dev, dtype=torch.float64)
        dist.all_reduce(agree, op=dist.ReduceOp.MAX)
        one, left = float(agree[0].item()), -float(agree[1].item())
        fit = min(iters, int(left / max(one, 1e-7)) - 3)
        if fit < MIN_SAMPLES:
            if out:
                out.write(json.dumps({"stopped": "%d bytes %s" % (nbytes, would_take((3 + MIN_SAMPLES) * one, left))}) + "\n")
            break
        for _ in range(2):
            dist.all_reduce(t)
        sync()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(fit):
            dist.all_reduce(t)
        sync()
        sec = (time.perf_counter() - t0) / fit
        # The slowest rank sets the time of a collective.
        worst = torch.tensor([sec], device=dev, dtype=torch.float64)
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        sec = float(worst.item())
        alg = nbytes / sec / 1e9
        if out:
            out.write(json.dumps({"bytes": nbytes, "time_us": round(sec * 1e6, 2), "algbw_gbs": round(alg, 3),
                                  "busbw_gbs": round(busbw(alg, world), 3), "iters": fit}) + "\n")
            out.flush()
    if out:
        out.close()
    dist.destroy_process_group()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def allreduce(torch, world, backend, max_bytes, iters, seconds, import_s=0.0):
    if world < 2:
        return {"not_applicable": "one device: an all-reduce has nobody to talk to"}
    # Each rank is a new Python that imports torch, all at once: at least this payload's own
    # import time, more where the ranks share few cores.
    start_s = 1.5 * import_s + 0.5
    if start_s > seconds:
        return {"skipped": "starting %d ranks %s" % (world, would_take(start_s, seconds)),
                "backend": backend, "world_size": world}
    import torch.multiprocessing as mp

    sizes = allreduce_sizes(max_bytes)
    out = {"backend": backend, "world_size": world}
    deadline = time.monotonic() + seconds
    fd, path = tempfile.mkstemp(prefix="hpcdoctor-ar-", suffix=".json")
    os.close(fd)
    try:
        # the ranks stop measuring a little before the payload stops waiting for them
        ctx = mp.start_processes(_ar_rank, args=(world, free_port(), backend, sizes, iters, path, deadline - 0.3),
                                 nprocs=world, join=False, start_method="spawn")
        try:
            while not ctx.join(timeout=0.2):
                if time.monotonic() > deadline:
                    for p in ctx.processes:
                        p.kill()
                    out["stopped"] = ("not finished within its %s s share of the budget (the ranks start a "
                                      "Python and import torch each)" % _secs(seconds))
                    break
        except Exception as exc:
            out["stopped"] = err(exc)
        rows = []
        with open(path) as fh:
            for line in fh:
                try:
                    row = json.loads(line)
                except ValueError:
                    continue  # a rank killed mid-line
                if "stopped" in row:
                    out["stopped"] = row["stopped"]
                else:
                    rows.append(row)
    except Exception as exc:
        return dict(out, stopped=err(exc))
    finally:
        os.unlink(path)
    out["results"] = rows
    if not rows:
        out.setdefault("stopped", "no size measured")
        out = {"skipped": out["stopped"], "backend": backend, "world_size": world}
    return out


# --- locking ----------------------------------------------------------------------------------------

class GpuLock:
    """An exclusive lock per GPU, so ranks started together do not measure each other."""

    def __init__(self, key, wait):
        import fcntl

        self.fcntl = fcntl
        lockdir = os.environ.get("HPCDOCTOR_LOCK_DIR") or tempfile.gettempdir()
        self.path = os.path.join(lockdir, "hpcdoctor-bench-%s.lock" % "".join(c if c.isalnum() else "_" for c in key))
        try:
            self.fh = open(self.path, "a")
        except OSError as exc:
            raise TimeoutError("cannot create the lock %s (%s): measuring without it could measure another "
                               "rank's benchmark; set HPCDOCTOR_LOCK_DIR to a writable directory"
                               % (self.path, exc.strerror or exc))
        self.waited = 0.0
        deadline = time.monotonic() + wait
        t0 = time.monotonic()
        while True:
            try:
                fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.fh.close()
                    raise TimeoutError("another benchmark holds %s" % self.path)
                time.sleep(0.1)
        self.waited = round(time.monotonic() - t0, 3)

    def release(self):
        self.fcntl.flock(self.fh, self.fcntl.LOCK_UN)
        self.fh.close()


# --- main -------------------------------------------------------------------------------------------

def describe(name, value):
    """The progress line of one finished measurement."""
    if not isinstance(value, dict):
        return "%s: %s" % (name, value)
    if "skipped" in value:
        return "%s: not measured (%s)" % (name, value["skipped"])
    if "gflops" in value:
        return "%s GEMM: %.1f GFLOP/s at n=%d" % (name, value["gflops"], value["n"])
    if "tflops" in value:
        return "%s: %.1f TFLOP/s at n=%d" % (name, value["tflops"], value["n"])
    if "results" in value:
        last = value["results"][-1]
        return "%s: busbw %.2f GB/s at %d bytes%s" % (name, last["busbw_gbs"], last["bytes"],
                                                     " (%s)" % value["stopped"] if value.get("stopped") else "")
    figures = ["%s %s" % (k, v) for k, v in sorted(value.items()) if isinstance(v, (int, float))]
    return "%s: %s" % (name, ", ".join(figures) or value)


class Runner:
    """Runs the planned measurements in order, each with its share of what is left (by weight),
    emitting each result as it comes."""

    def __init__(self, budget, budget_s):
        self.budget, self.budget_s = budget, budget_s
        self.plan = []  # [name, path, weight, fn(seconds) -> value]

    def add(self, name, path, fn, weight=1.0):
        self.plan.append([name, path, weight, fn])

    def run(self):
        emit({"plan": [[name, path] for name, path, _, _ in self.plan]})
        total = len(self.plan)
        for k, (name, path, weight, fn) in enumerate(self.plan):
            left = self.budget.left()
            share = left * weight / sum(w for _, _, w, _ in self.plan[k:])
            emit({"start": name, "left_s": round(left, 2)})
            status("%d/%d %s, %s s of the budget left" % (k + 1, total, name, _secs(max(0.0, left))))
            maybe_crash(name)
            if left <= 0.05:
                value = {"skipped": "the budget was spent before it (%s s)" % _secs(self.budget_s)}
            else:
                try:
                    value = fn(share)
                except Exception as exc:
                    value = {"skipped": err(exc)}
            emit({"at": path, "value": value, "name": name})
            log("%d/%d %s; %s s left" % (k + 1, total, describe(name, value), _secs(max(0.0, self.budget.left()))))


def main():
    started = time.monotonic()
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", choices=sorted(TIERS), default="quick")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--cpu-ranks", type=int, default=2, help="gloo ranks for the CPU all-reduce")
    ap.add_argument("--max-allreduce-bytes", type=int, default=None)
    ap.add_argument("--gemm-n", type=int, default=None)
    ap.add_argument("--cpu-n", type=int, default=None)
    args = ap.parse_args()
    budget = Budget(args.budget, started)
    emit({"at": ["payload"], "value": "bench_probe"})
    emit({"at": ["tier"], "value": args.tier})
    emit({"at": ["budget_s"], "value": args.budget})
    status("importing torch, %s s of the budget left" % _secs(max(0.0, budget.left())))
    t_import = time.monotonic()
    try:
        import torch
    except BaseException as exc:
        emit({"at": ["stopped"], "value": "torch cannot be imported: %s" % err(exc)})
        emit({"end": True, "elapsed_s": round(time.monotonic() - started, 3)})
        return
    import_s = time.monotonic() - t_import
    tier = TIERS[args.tier]
    emit({"at": ["torch"], "value": torch.__version__})
    gpu_kind = "rocm" if getattr(torch.version, "hip", None) else "cuda"
    n_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    emit({"at": ["device_kind"], "value": gpu_kind if n_gpus else "cpu"})
    emit({"at": ["gpus"], "value": []})
    runner = Runner(budget, args.budget)
    locks = {}
    for i in range(n_gpus):
        runner.add("gpu%d.lock" % i, ["gpus", i, "lock"], lambda s, i=i: gpu_lock(torch, i, s, locks))
        for dtype_name in GPU_DTYPES:
            sizes = [args.gemm_n] if args.gemm_n else tier["gemm_n"]
            runner.add("gpu%d.gemm.%s" % (i, dtype_name), ["gpus", i, "gemm", dtype_name],
                       lambda s, i=i, d=dtype_name, z=sizes: locked(locks, i, lambda: gpu_gemm(
                           torch, i, d, z, args.tier, s, "gpu%d.gemm.%s" % (i, d))), weight=len(sizes))
        runner.add("gpu%d.memory" % i, ["gpus", i, "memory"],
                   lambda s, i=i: locked(locks, i, lambda: gpu_copies(torch, i, tier["copy_bytes"], s, "gpu%d.memory" % i),
                                         release=True), weight=2)
    cpu_n = args.cpu_n or tier["cpu_n"]
    emit({"at": ["cpu", "threads"], "value": torch.get_num_threads()})
    emit({"at": ["cpu", "n"], "value": cpu_n})
    for case in CPU_CASES:
        runner.add("cpu.%s" % case, ["cpu", case],
                   lambda s, c=case: cpu_gemm(torch, c, cpu_n, s, tier["cpu_samples"], "cpu.%s" % c))
    max_ar = args.max_allreduce_bytes or (tier["ar_max"] if n_gpus else 64 << 20)
    if n_gpus:
        runner.add("allreduce", ["allreduce"],
                   lambda s: allreduce(torch, n_gpus, "nccl", max_ar, tier["ar_iters"], s, import_s), weight=2)
    else:
        runner.add("allreduce", ["allreduce"],
                   lambda s: allreduce(torch, args.cpu_ranks, "gloo", max_ar, 5, s, import_s), weight=2)
    runner.run()
    emit({"end": True, "elapsed_s": round(time.monotonic() - started, 3)})
    sys.stderr.flush()
    # Everything is written; tearing down torch and its thread pools can take seconds on a busy
    # node, which the budget has no room for.
    os._exit(0)


def gpu_lock(torch, i, seconds, locks):
    """Take GPU i's lock (waiting at most a quarter of the share): its measurements run only under it."""
    emit({"at": ["gpus", i, "index"], "value": i})
    emit({"at": ["gpus", i, "name"], "value": torch.cuda.get_device_name(i)})
    props = torch.cuda.get_device_properties(i)
    uuid = str(getattr(props, "uuid", "") or "")
    emit({"at": ["gpus", i, "uuid"], "value": uuid})
    try:
        lock = GpuLock(uuid or "gpu%d" % i, wait=min(30.0, seconds / 4))
    except TimeoutError as exc:
        locks[i] = str(exc)
        emit({"at": ["gpus", i, "stopped"], "value": str(exc)})
        return {"skipped": str(exc)}
    locks[i] = lock
    emit({"at": ["gpus", i, "lock_wait_s"], "value": lock.waited})
    return {"waited_s": lock.waited}


def locked(locks, i, fn, release=False):
    lock = locks.get(i)
    if not isinstance(lock, GpuLock):
        return {"skipped": lock or "GPU %d was not locked" % i}
    try:
        return fn()
    finally:
        if release:
            lock.release()
            locks[i] = "released"


if __name__ == "__main__":
    main()
