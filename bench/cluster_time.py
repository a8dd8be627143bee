"""Wall time of `hpcdoctor check --cluster` with N local ranks standing for one node's tasks,
against one `check --deep` (issue 16's target: N = 16 within 3x), and the store's per-post cost.

    python bench/cluster_time.py [--ranks 16] [--python PY] [--runs 3] [--post-kib 40]

Ranks get RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE and MASTER_ADDR=127.0.0.1 with a free
port, as torchrun would give them; every rank is a fresh `hpcdoctor` process. Loopback only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time

POST_PROBE = r"""
import datetime, json, sys, time
from torch.distributed import TCPStore
port, n, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
server = TCPStore("127.0.0.1", port, 1, True, timeout=datetime.timedelta(seconds=30), wait_for_workers=False)
client = TCPStore("127.0.0.1", port, 1, False, timeout=datetime.timedelta(seconds=30))
value = b"x" * size
times = []
for i in range(n):
    # a post as a node leader makes it: take a slot from the counter, fill it
    t = time.perf_counter(); j = client.add("count", 1); client.set("k%d" % j, value); times.append(time.perf_counter() - t)
t = time.perf_counter()
for i in range(1, n + 1):
    server.check(["k%d" % i]); server.get("k%d" % i)
get_s = (time.perf_counter() - t) / n
times.sort()
print(json.dumps({"set_median_s": times[n // 2], "set_p90_s": times[int(n * 0.9)], "get_mean_s": get_s}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cmd() -> list:
    exe = shutil.which("hpcdoctor")
    return [exe] if exe else [sys.executable, "-m", "hpcdoctor"]


STORE: dict = {}


def one_cluster(n: int, python: str, extra: list) -> float:
    port = _free_port()
    procs = []
    start = time.perf_counter()
    for r in range(n):
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(n), LOCAL_RANK=str(r), LOCAL_WORLD_SIZE=str(n),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        procs.append(subprocess.Popen(_cmd() + ["check", "--cluster", "--python", python, "--format", "json", *extra],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outs = [p.communicate(timeout=600) for p in procs]
    elapsed = time.perf_counter() - start
    if procs[0].returncode not in (0, 1):
        sys.stderr.write(outs[0][1].decode(errors="replace"))
        raise SystemExit(f"rank 0 exited {procs[0].returncode}")
    report = json.loads(outs[0][0])
    if report.get("missing_ranks"):
        raise SystemExit(f"ranks missing: {report['missing_ranks']}")
    STORE.update(report.get("store") or {})
    return elapsed


def one_check(python: str) -> float:
    start = time.perf_counter()
    res = subprocess.run(_cmd() + ["check", "--deep", "--python", python, "--format", "json"], capture_output=True)
    if res.returncode not in (0, 1):
        raise SystemExit(res.stderr.decode(errors="replace"))
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--python", default=sys.executable, help="an interpreter with torch (default: this one)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--post-kib", type=int, default=40, help="value size for the per-post figure")
    ap.add_argument("--target", type=float, default=3.0, help="ratio; exit 1 when above")
    ap.add_argument("extra", nargs="*", help="arguments after -- go to every rank's hpcdoctor check")
    args = ap.parse_args()
    one_check(args.python)  # warm the page cache, as a second run on a node would be
    single = statistics.median(one_check(args.python) for _ in range(args.runs))
    cluster = statistics.median(one_cluster(args.ranks, args.python, args.extra) for _ in range(args.runs))
    post = json.loads(subprocess.run([args.python, "-c", POST_PROBE, str(_free_port()), "200",
                                      str(args.post_kib * 1024)], capture_output=True, text=True, check=True).stdout)
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"one check --deep: {single:.2f} s (median of {args.runs})")
    print(f"{args.ranks} local ranks, check --cluster: {cluster:.2f} s (median of {args.runs})"
          f" = {cluster / single:.1f}x one deep check (target <= {args.target:g}x)")
    print(f"TCPStore over loopback, {args.post_kib} KiB value: set median {post['set_median_s'] * 1e3:.2f} ms,"
          f" p90 {post['set_p90_s'] * 1e3:.2f} ms (add + set); rank 0 reads one in {post['get_mean_s'] * 1e3:.2f} ms"
          f" (check + get)")
    if STORE:
        print(f"rank 0 read {STORE.get('posts_read')} posts, {STORE.get('bytes_read')} bytes; median post"
              f" {STORE.get('median_post_bytes')} bytes; node report post {STORE.get('node_post_bytes')} bytes")
    return 0 if cluster / single <= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
