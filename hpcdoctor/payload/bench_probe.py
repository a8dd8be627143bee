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
import os
import sys
import time

# The payload runs as a script in the job's Python, where hpcdoctor may not be installed: its sibling
# modules are imported from its own folder, whether it runs as a script or is imported by a test.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_allreduce import allreduce  # noqa: E402
from bench_lock import gpu_lock, locked  # noqa: E402
from cpu_share import other_load  # noqa: E402
from bench_timing import (MIN_SAMPLES, Budget, NoFit, emit, err, fit_device, is_oom,  # noqa: E402
                          log, maybe_crash, secs, slowed, status, time_host, timed, would_take)

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
GPU_DTYPES = ("fp32", "tf32", "bf16", "fp16", "fp8")
CPU_CASES = ("fp32", "bf16", "fp32_bf16_fastmath")


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
            # Filled, not randomised: PCIe does not compress, and random_() on 512 MiB took the
            # quick tier's whole memory share on the H100 node before a pinned copy was timed.
            host = torch.empty(host_bytes, dtype=torch.uint8).fill_(1)
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
        one = timed(fn)
        while n < n_target:
            nxt = min(2 * n, n_target)
            need = one * (float(nxt) / n) ** 3 * (1 + MIN_SAMPLES)
            if need > deadline - time.monotonic():
                break
            n = nxt
            a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
            one = timed(fn)
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
            one = timed(fn)
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


# --- main -------------------------------------------------------------------------------------------

def describe(name, value):
    """The progress line of one finished measurement."""
    if not isinstance(value, dict):
        return "%s: %s" % (name, value)
    if "skipped" in value:
        return "%s: not measured (%s)" % (name, value["skipped"])
    if "gflops" in value:
        return "%s GEMM: %.1f GFLOP/s at n=%d" % (name, value["gflops"], value["n"])
    if "other_busy_cpus" in value:
        return "%s: %g of %d CPUs busy with other work, %g as steal" % (
            name, value["other_busy_cpus"], value["cpus"], value["steal_cpus"])
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
            status("%d/%d %s, %s s of the budget left" % (k + 1, total, name, secs(max(0.0, left))))
            maybe_crash(name)
            if left <= 0.05:
                value = {"skipped": "the budget was spent before it (%s s)" % secs(self.budget_s)}
            else:
                try:
                    value = fn(share)
                except Exception as exc:
                    value = {"skipped": err(exc)}
            emit({"at": path, "value": value, "name": name})
            log("%d/%d %s; %s s left" % (k + 1, total, describe(name, value), secs(max(0.0, self.budget.left()))))


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
    status("importing torch, %s s of the budget left" % secs(max(0.0, budget.left())))
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
    # Taken first, while no GEMM of ours runs: who else holds these CPUs (cpu_share.py says why).
    runner.add("cpu.other_load", ["cpu", "other_load"],
               lambda s: other_load(min(0.5, s / 2)) or {"skipped": "/proc/stat cannot be read"}, weight=0.2)
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


if __name__ == "__main__":
    main()
