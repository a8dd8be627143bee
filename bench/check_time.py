"""Wall time of `hpcdoctor check` as a user runs it: a fresh process each time, median of N.

    python bench/check_time.py [--runs 15] [--json-out FILE] [-- extra check arguments]

The hpcdoctor beside this interpreter is timed, and the probes ask this interpreter (--python
sys.executable) unless the extra arguments name one: run it with the venv's python and
``-- --deep`` measures the torch import, whatever python3 comes first on PATH.

Target (issue 2): at most 1.0 s on a CPU node of the development machine's kind.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--target", type=float, default=1.0, help="seconds; exit 1 when the median is above")
    ap.add_argument("--json-out", metavar="FILE", help="also write the result, machine and date as JSON")
    ap.add_argument("extra", nargs="*", help="arguments after -- go to hpcdoctor check")
    args = ap.parse_args()
    beside = os.path.join(os.path.dirname(sys.executable), "hpcdoctor")
    exe = beside if os.access(beside, os.X_OK) else shutil.which("hpcdoctor")
    cmd = [exe] if exe else [sys.executable, "-m", "hpcdoctor"]
    cmd += ["check", "--format", "json", *args.extra]
    if not any(a == "--python" or a.startswith("--python=") for a in args.extra):
        cmd += ["--python", sys.executable]
    times = []
    subprocess.run(cmd, capture_output=True)  # warm the page cache once, as a second run on a node would be
    for _ in range(args.runs):
        start = time.perf_counter()
        res = subprocess.run(cmd, capture_output=True)
        times.append(time.perf_counter() - start)
        if res.returncode not in (0, 1):
            sys.stderr.write(res.stderr.decode(errors="replace") or f"check exited {res.returncode}: "
                             f"{json.loads(res.stdout or '{}').get('unchecked')}\n")
            return 2
    torch = (json.loads(res.stdout).get("facts") or {}).get("torch") or {}
    if "--deep" in args.extra and not torch.get("version"):
        sys.stderr.write(f"no torch in {torch.get('target_python') or 'the target python'}: --deep measured "
                         "without it (run this script with the venv's python, or pass -- --python PATH)\n")
        return 2
    med = statistics.median(times)
    print(f"command: {' '.join(cmd)}")
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"runs: {args.runs}  median: {med:.3f}s  min: {min(times):.3f}s  max: {max(times):.3f}s  "
          f"target: {args.target:.1f}s  {'OK' if med <= args.target else 'OVER'}")
    import result

    result.write(args.json_out, "check_time", result.invocation(), {
        "check_arguments": args.extra, "runs": args.runs, "median_s": round(med, 3),
        "min_s": round(min(times), 3), "max_s": round(max(times), 3), "target_s": args.target,
        "torch": torch.get("version")})
    return 0 if med <= args.target else 1


if __name__ == "__main__":
    raise SystemExit(main())
