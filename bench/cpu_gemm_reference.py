"""hpcdoctor's CPU GEMM figure against a careful standalone reference, in the same run.

Runs the benchmark payload (as `check --bench` does) with the given interpreter; then, in one
process of the same interpreter, alternates ROUNDS times the payload's own CPU GEMM function at the
size the payload chose and a plain reference loop at that size and thread count (3 warm-up calls,
then N individually timed calls of torch.matmul, the median), so that a shared, busy machine
drifts over both alike. Prints the medians over the rounds and the median of the rounds' ratios.

    python bench/cpu_gemm_reference.py --python .venv/bin/python [--tier quick] [--budget 20] [--calls 50]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

PAYLOAD = Path(__file__).resolve().parent.parent / "hpcdoctor" / "payload" / "bench_probe.py"

REFERENCE = r"""
import json, statistics, sys, time
import torch
sys.path.insert(0, sys.argv[6])
import bench_probe
n, threads, calls, dtype, rounds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
torch.set_num_threads(threads)
dt = torch.bfloat16 if dtype == "bf16" else torch.float32
a, b = torch.randn(n, n, dtype=dt), torch.randn(n, n, dtype=dt)

def reference():
    for _ in range(3):
        torch.matmul(a, b)
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter()
        torch.matmul(a, b)
        samples.append(time.perf_counter() - t0)
    return 2.0 * n ** 3 / statistics.median(samples) / 1e9

ours, refs = [], []
for _ in range(rounds):
    got = bench_probe.cpu_gemm(torch, dtype, n, 60.0, calls, "cpu." + dtype)
    ours.append(got["gflops"])
    refs.append(reference())
# each round's pair ran back to back: the median of the pairs' ratios is what load drift spares
print(json.dumps({"ours": statistics.median(ours), "ref": statistics.median(refs),
                  "ratio": statistics.median(o / r for o, r in zip(ours, refs))}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--tier", default="quick")
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    res = subprocess.run([args.python, str(PAYLOAD), "--tier", args.tier, "--budget", str(args.budget),
                          "--max-allreduce-bytes", "8192"], capture_output=True, text=True)
    cpu = {}
    for line in res.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("at", [None])[0] == "cpu":
            cpu[rec["at"][1]] = rec["value"]
    print("%-6s %6s %8s %14s %14s %7s" % ("dtype", "n", "threads", "hpcdoctor", "reference", "ratio"))
    worst = 0.0
    for dtype in ("fp32", "bf16"):
        got = cpu.get(dtype) or {}
        if "gflops" not in got:
            print("%-6s not measured by hpcdoctor: %s" % (dtype, got.get("skipped")))
            continue
        ref = json.loads(subprocess.run([args.python, "-c", REFERENCE, str(got["n"]), str(cpu["threads"]),
                                         str(args.calls), dtype, str(args.rounds), str(PAYLOAD.parent)],
                                        capture_output=True, text=True).stdout)
        ratio = ref["ratio"]
        worst = max(worst, abs(ratio - 1))
        print("%-6s %6d %8d %9.1f GF/s %9.1f GF/s %7.3f   (check's own run: %.1f GF/s)"
              % (dtype, got["n"], cpu["threads"], ref["ours"], ref["ref"], ratio, got["gflops"]))
    print("worst deviation %.1f%% (target 5%%)" % (worst * 100))


if __name__ == "__main__":
    main()
