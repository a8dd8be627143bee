"""The careful reference that bench/gpu_acceptance.py holds hpcdoctor's GPU figures against.

Runs in the job's interpreter (torch, and nvidia-ml-py where installed), written apart from
hpcdoctor's payload on purpose: plain ``torch.matmul`` (``torch._scaled_mm`` for fp8), 10 warm-up
calls, then CUDA events around 50 timed calls; copies the same way. The SM clock, power, clock
event reasons and other processes are read from NVML before and after each figure, so a figure
taken while another process held the GPU or the card sat at its power cap says so.

    python bench/gpu_reference.py --gemm bf16:8192 --gemm fp32:8192 --copy-bytes 1073741824

prints one JSON document on stdout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

WARMUP, TIMED = 10, 50


def nvml_state(index):
    try:
        import pynvml as nv

        nv.nvmlInit()
        h = nv.nvmlDeviceGetHandleByIndex(index)
        state = {"sm_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                 "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
                 "power_limit_w": nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
                 "clock_event_mask": int(nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
                 "other_processes": len(nv.nvmlDeviceGetComputeRunningProcesses(h))}
        nv.nvmlShutdown()
        return state
    except Exception as exc:  # the reference still runs; the state is unknown, and says why
        return {"unknown": repr(exc)}


def timed(torch, fn, calls=TIMED):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / calls


def gemm(torch, dev, dtype, n):
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    if dtype == "fp8":
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()  # _scaled_mm wants column-major b
        one = torch.tensor(1.0, device=dev)
        fn = lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
    else:
        dt = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
        a, b = torch.randn(n, n, device=dev, dtype=dt), torch.randn(n, n, device=dev, dtype=dt)
        c = torch.empty(n, n, device=dev, dtype=dt)
        fn = lambda: torch.matmul(a, b, out=c)  # noqa: E731
    sec = timed(torch, fn)
    return 2.0 * n ** 3 / sec / 1e12


def device_copy(torch, dev, nbytes):
    # Bytes read plus written, as STREAM and DCGM count; the buffers go when this returns.
    src = torch.empty(nbytes, dtype=torch.uint8, device=dev).random_()
    dst = torch.empty_like(src)
    return 2 * nbytes / timed(torch, lambda: dst.copy_(src)) / 1e9


def copies(torch, dev, nbytes, host_bytes):
    out = {"d2d_gbs": device_copy(torch, dev, nbytes)}
    torch.cuda.empty_cache()
    for pinned in (True, False):
        key = "pinned" if pinned else "pageable"
        host = torch.empty(host_bytes, dtype=torch.uint8).random_()
        if pinned:
            host = host.pin_memory()
        devbuf = torch.empty(host_bytes, dtype=torch.uint8, device=dev)
        out[f"h2d_{key}_gbs"] = host_bytes / timed(torch, lambda: devbuf.copy_(host, non_blocking=pinned), 20) / 1e9
        out[f"d2h_{key}_gbs"] = host_bytes / timed(torch, lambda: host.copy_(devbuf, non_blocking=pinned), 20) / 1e9
    return out


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--gpu", type=int, default=0)
    p.add_argument("--gemm", action="append", default=[], help="dtype:n, repeatable")
    p.add_argument("--copy-bytes", type=int, default=1 << 30)
    p.add_argument("--host-bytes", type=int, default=512 << 20)
    p.add_argument("--repeats", type=int, default=3, help="median of this many timed runs per figure")
    args = p.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        json.dump({"skipped": "no CUDA device visible to this torch"}, sys.stdout)
        return 0
    dev = torch.device("cuda", args.gpu)
    cc = torch.cuda.get_device_capability(dev)
    out = {"gpu": torch.cuda.get_device_name(dev), "cc": list(cc), "gemm": {}, "state": {}}
    for spec in args.gemm:
        dtype, n = spec.split(":")
        if dtype == "fp8" and cc < (8, 9):
            out["gemm"][dtype] = {"skipped": "fp8 needs compute capability 8.9+"}
            continue
        before = nvml_state(args.gpu)
        try:
            figures = [gemm(torch, dev, dtype, int(n)) for _ in range(args.repeats)]
            out["gemm"][dtype] = {"n": int(n), "tflops": statistics.median(figures), "runs": figures}
        except RuntimeError as exc:
            out["gemm"][dtype] = {"skipped": str(exc).splitlines()[0]}
        out["state"][f"gemm_{dtype}"] = {"before": before, "after": nvml_state(args.gpu)}
        torch.cuda.empty_cache()
    before = nvml_state(args.gpu)
    runs = [copies(torch, dev, args.copy_bytes, args.host_bytes) for _ in range(args.repeats)]
    out["memory"] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    out["memory_runs"] = {k: [r[k] for r in runs] for k in runs[0]}
    out["state"]["copies"] = {"before": before, "after": nvml_state(args.gpu)}
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
