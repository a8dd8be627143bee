"""All-reduce for the benchmark payload: one process per GPU (gloo on CPU), bus bandwidth as
nccl-tests computes it. Standard library and torch only: it runs in the job's Python."""

import json
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its sibling, as bench_probe.py explains
from bench_timing import MIN_SAMPLES, err, secs, would_take  # noqa: E402


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
                                      "Python and import torch each)" % secs(seconds))
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
