"""hpcdoctor benchmark payload. Runs inside the *target* interpreter: standard library and torch.

Measures what the node really does: GEMM per GPU and precision, device and host copies, CPU GEMM,
all-reduce across the local GPUs (one process per GPU; gloo on CPU). GPU work is timed with CUDA
events (HIP events on ROCm) after a warm-up, on random data, as the median of repeats. One JSON
document on stdout; progress on stderr. A budget bounds the whole run: what does not fit is
reported as not measured, with the reason.

    bench_probe.py --tier quick|full [--budget S] [--cpu-ranks N] [--max-allreduce-bytes B] [--gemm-n N]
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
    # GEMM sizes that fill an H100-class chip; repeats; all-reduce sizes.
    "quick": {"gemm_n": [8192], "repeats": 5, "iters": 10, "copy_bytes": 1 << 30, "ar_max": 1 << 30, "ar_iters": 10},
    "full": {"gemm_n": [4096, 8192, 16384], "repeats": 7, "iters": 20, "copy_bytes": 2 << 30, "ar_max": 4 << 30, "ar_iters": 20},
}
CPU_N = {"quick": 1024, "full": 2048}


def log(msg):
    sys.stderr.write("hpcdoctor bench: %s\n" % msg)
    sys.stderr.flush()


class Budget:
    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds

    def left(self):
        return self.deadline - time.monotonic()


def err(exc):
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0][:300] if text else "")


def is_oom(exc):
    return "out of memory" in str(exc).lower() or type(exc).__name__ == "OutOfMemoryError"


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


def time_host(fn, iters, repeats, warmup=2):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        samples.append((time.perf_counter() - t0) / iters)
    return statistics.median(samples)


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


def gpu_gemm(torch, index, tier, budget, sizes):
    dev = torch.device("cuda", index)
    torch.cuda.set_device(dev)
    cc = torch.cuda.get_device_capability(dev)
    out = {}
    for dtype_name in ("fp32", "tf32", "bf16", "fp16", "fp8"):
        if budget.left() < 2:
            out[dtype_name] = {"skipped": "budget exhausted"}
            continue
        if dtype_name == "tf32" and cc < (8, 0):
            out[dtype_name] = {"skipped": "no TF32 before compute capability 8.0"}
            continue
        if dtype_name == "bf16" and cc < (8, 0) and not getattr(torch.version, "hip", None):
            out[dtype_name] = {"skipped": "no bf16 tensor cores before compute capability 8.0"}
            continue
        if dtype_name == "fp8" and (getattr(torch.version, "hip", None) or cc < (8, 9)):
            out[dtype_name] = {"skipped": "fp8 needs compute capability 8.9 or newer (CUDA)"}
            continue
        allow = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
        try:
            best = None
            for n in sizes:
                try:
                    fn, flops = gemm_case(torch, dev, dtype_name, n)
                    sec = time_device(torch, fn, TIERS[tier]["iters"], TIERS[tier]["repeats"])
                except RuntimeError as exc:
                    if is_oom(exc):
                        torch.cuda.empty_cache()
                        out.setdefault("notes", []).append("%s n=%d: out of memory" % (dtype_name, n))
                        continue
                    raise
                tflops = flops / sec / 1e12
                if best is None or tflops > best["tflops"]:
                    best = {"n": n, "tflops": round(tflops, 2), "ms": round(sec * 1e3, 4)}
                log("GPU %d gemm %s n=%d: %.1f TFLOP/s" % (index, dtype_name, n, tflops))
            out[dtype_name] = best or {"skipped": "out of memory at every size"}
        except Exception as exc:  # an unsupported dtype on this GPU/torch: say why, carry on
            out[dtype_name] = {"skipped": err(exc)}
        finally:
            torch.backends.cuda.matmul.allow_tf32 = allow
            torch.cuda.empty_cache()
    return out


# --- memory -----------------------------------------------------------------------------------------

def gpu_copies(torch, index, nbytes, budget):
    dev = torch.device("cuda", index)
    out = {}
    try:
        src = torch.empty(nbytes, dtype=torch.uint8, device=dev).random_()
        dst = torch.empty_like(src)
        # A device-to-device copy reads and writes every byte: count both, as STREAM and DCGM do.
        sec = time_device(torch, lambda: dst.copy_(src), 5, 5)
        out["d2d_gbs"] = round(2 * nbytes / sec / 1e9, 1)
        del src, dst
        torch.cuda.empty_cache()
    except RuntimeError as exc:
        out["d2d_gbs"] = {"skipped": err(exc)}
    host_bytes = min(nbytes, 512 << 20)
    for pinned in (True, False):
        if budget.left() < 2:
            break
        key = "pinned" if pinned else "pageable"
        try:
            host = torch.empty(host_bytes, dtype=torch.uint8).random_()
            if pinned:
                host = host.pin_memory()
            devbuf = torch.empty(host_bytes, dtype=torch.uint8, device=dev)
            sec = time_device(torch, lambda: devbuf.copy_(host, non_blocking=pinned), 3, 5)
            out["h2d_%s_gbs" % key] = round(host_bytes / sec / 1e9, 1)
            sec = time_device(torch, lambda: host.copy_(devbuf, non_blocking=pinned), 3, 5)
            out["d2h_%s_gbs" % key] = round(host_bytes / sec / 1e9, 1)
        except RuntimeError as exc:
            out["h2d_%s_gbs" % key] = {"skipped": err(exc)}
    log("GPU %d copies: %s" % (index, out))
    return out


# --- CPU GEMM ---------------------------------------------------------------------------------------

def cpu_gemm(torch, tier, n=None):
    n = n or CPU_N[tier]
    out = {"threads": torch.get_num_threads(), "n": n}
    for name, dtype in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        try:
            a, b = torch.randn(n, n, dtype=dtype), torch.randn(n, n, dtype=dtype)
            sec = time_host(lambda: torch.matmul(a, b), 3, 5)
            out[name] = {"gflops": round(2.0 * n ** 3 / sec / 1e9, 1)}
        except Exception as exc:
            out[name] = {"skipped": err(exc)}
    mk = getattr(getattr(torch.backends, "mkldnn", None), "matmul", None)
    if mk is not None and hasattr(mk, "fp32_precision"):
        old = mk.fp32_precision
        try:
            mk.fp32_precision = "bf16"  # oneDNN's BF16 fast math for fp32 matmuls
            a, b = torch.randn(n, n), torch.randn(n, n)
            sec = time_host(lambda: torch.matmul(a, b), 3, 5)
            out["fp32_bf16_fastmath"] = {"gflops": round(2.0 * n ** 3 / sec / 1e9, 1)}
        except Exception as exc:
            out["fp32_bf16_fastmath"] = {"skipped": err(exc)}
        finally:
            mk.fp32_precision = old
    else:
        out["fp32_bf16_fastmath"] = {"skipped": "this torch has no torch.backends.mkldnn.matmul.fp32_precision"}
    log("CPU gemm: %s" % out)
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


def _ar_rank(rank, world, port, backend, sizes, iters, result_path):
    import datetime

    import torch
    import torch.distributed as dist

    dist.init_process_group(backend, init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    gpu = backend in ("nccl", "rccl")
    if gpu:
        torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank) if gpu else torch.device("cpu")
    rows = []
    for nbytes in sizes:
        t = torch.randn(nbytes // 4, device=dev)
        for _ in range(3):
            dist.all_reduce(t)
        if gpu:
            torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        if gpu:
            torch.cuda.synchronize()
        sec = (time.perf_counter() - t0) / iters
        # The slowest rank sets the time of a collective.
        worst = torch.tensor([sec], device=dev, dtype=torch.float64)
        dist.all_reduce(worst, op=dist.ReduceOp.MAX)
        sec = float(worst.item())
        alg = nbytes / sec / 1e9
        rows.append({"bytes": nbytes, "time_us": round(sec * 1e6, 2), "algbw_gbs": round(alg, 3),
                     "busbw_gbs": round(busbw(alg, world), 3)})
    if rank == 0:
        with open(result_path, "w") as fh:
            json.dump(rows, fh)
    dist.destroy_process_group()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def allreduce(torch, world, backend, max_bytes, iters, budget):
    if world < 2:
        return {"not_applicable": "one device: an all-reduce has nobody to talk to"}
    import torch.multiprocessing as mp

    sizes = allreduce_sizes(max_bytes)
    fd, path = tempfile.mkstemp(prefix="hpcdoctor-ar-", suffix=".json")
    os.close(fd)
    try:
        ctx = mp.start_processes(_ar_rank, args=(world, free_port(), backend, sizes, iters, path), nprocs=world,
                                 join=False, start_method="spawn")
        deadline = time.monotonic() + max(5.0, budget.left() - 1)
        while not ctx.join(timeout=0.5):
            if time.monotonic() > deadline:
                for p in ctx.processes:
                    p.kill()
                return {"backend": backend, "world_size": world, "stopped": "the collective did not finish within the budget (hung?)"}
        with open(path) as fh:
            rows = json.load(fh)
    except Exception as exc:
        return {"backend": backend, "world_size": world, "stopped": err(exc)}
    finally:
        os.unlink(path)
    log("all-reduce %s x%d: %s" % (backend, world, rows[-1] if rows else None))
    return {"backend": backend, "world_size": world, "results": rows}


# --- locking ----------------------------------------------------------------------------------------

class GpuLock:
    """An exclusive lock per GPU, so ranks started together do not measure each other."""

    def __init__(self, key, wait):
        import fcntl

        self.fcntl = fcntl
        lockdir = os.environ.get("HPCDOCTOR_LOCK_DIR") or tempfile.gettempdir()
        self.path = os.path.join(lockdir, "hpcdoctor-bench-%s.lock" % "".join(c if c.isalnum() else "_" for c in key))
        self.fh = open(self.path, "a")
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

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tier", choices=sorted(TIERS), default="quick")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--cpu-ranks", type=int, default=2, help="gloo ranks for the CPU all-reduce")
    ap.add_argument("--max-allreduce-bytes", type=int, default=None)
    ap.add_argument("--gemm-n", type=int, default=None)
    ap.add_argument("--cpu-n", type=int, default=None)
    args = ap.parse_args()
    budget = Budget(args.budget)
    started = time.monotonic()
    out = {"payload": "bench_probe", "tier": args.tier, "budget_s": args.budget}
    try:
        import torch
    except BaseException as exc:
        out["stopped"] = "torch cannot be imported: %s" % err(exc)
        print(json.dumps(out))
        return
    tier = TIERS[args.tier]
    out["torch"] = torch.__version__
    gpu_kind = "rocm" if getattr(torch.version, "hip", None) else "cuda"
    n_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    out["device_kind"] = gpu_kind if n_gpus else "cpu"
    out["gpus"] = []
    for i in range(n_gpus):
        g = {"index": i, "name": torch.cuda.get_device_name(i)}
        if budget.left() < 3:
            g["stopped"] = "budget exhausted before this GPU"
            out["gpus"].append(g)
            continue
        try:
            props = torch.cuda.get_device_properties(i)
            g["uuid"] = str(getattr(props, "uuid", "") or "")
            lock = GpuLock(g["uuid"] or "gpu%d" % i, wait=min(30.0, budget.left() / 2))
        except TimeoutError as exc:
            g["stopped"] = str(exc)
            out["gpus"].append(g)
            continue
        try:
            g["lock_wait_s"] = lock.waited
            sizes = [args.gemm_n] if args.gemm_n else tier["gemm_n"]
            g["gemm"] = gpu_gemm(torch, i, args.tier, budget, sizes)
            if budget.left() > 2:
                g["memory"] = gpu_copies(torch, i, tier["copy_bytes"], budget)
            else:
                g["memory"] = {"skipped": "budget exhausted"}
        except Exception as exc:
            g["stopped"] = err(exc)
        finally:
            lock.release()
        out["gpus"].append(g)
    if budget.left() > 2:
        out["cpu"] = cpu_gemm(torch, args.tier, args.cpu_n)
    max_ar = args.max_allreduce_bytes or (tier["ar_max"] if n_gpus else 64 << 20)
    if budget.left() > 3:
        if n_gpus:
            out["allreduce"] = allreduce(torch, n_gpus, "nccl", max_ar, tier["ar_iters"], budget)
        else:
            out["allreduce"] = allreduce(torch, args.cpu_ranks, "gloo", max_ar, 5, budget)
    else:
        out["allreduce"] = {"stopped": "budget exhausted"}
    out["elapsed_s"] = round(time.monotonic() - started, 3)
    sys.stdout.write(json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
