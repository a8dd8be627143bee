"""hpcdoctor cluster payload: gathers every rank's report on rank 0 through torch.distributed's
TCPStore. Runs inside the *target* interpreter (standard library and torch).

Each rank posts its report under its own key; rank 0 hosts the store and collects the keys that
arrive before the timeout, so a rank that never comes gives a partial result, not a hang.

    cluster_probe.py --report LOCAL.json --out GATHERED.json [--timeout S]

Rank, world size and rendezvous come from torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), else from Slurm's (SLURM_PROCID, SLURM_NTASKS, the first host of the node list).
"""

import argparse
import datetime
import json
import os
import re
import sys
import time

KEY = "hpcdoctor/report/%d"
DONE = "hpcdoctor/done"


def first_host(nodelist):
    """The first host of a Slurm node list: "gpu[001-004,010],cpu7" -> "gpu001"."""
    m = re.match(r"^([^,\[]+)(?:\[([^\]]+)\])?", nodelist or "")
    if not m:
        return None
    prefix, ranges = m.group(1), m.group(2)
    if not ranges:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def rendezvous():
    env = os.environ
    rank = env.get("RANK", env.get("SLURM_PROCID"))
    world = env.get("WORLD_SIZE", env.get("SLURM_NTASKS"))
    host = env.get("MASTER_ADDR") or first_host(env.get("SLURM_JOB_NODELIST", env.get("SLURM_NODELIST", "")))
    job = env.get("SLURM_JOB_ID", "0")
    port = int(env.get("MASTER_PORT") or 20000 + int(re.sub(r"\D", "", job) or 0) % 20000)
    if rank is None or world is None or not host:
        raise SystemExit("hpcdoctor cluster: no rank/world size/master (run under srun or torchrun)")
    return int(rank), int(world), host, port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    rank, world, host, port = rendezvous()
    from torch.distributed import TCPStore

    with open(args.report) as fh:
        mine = fh.read()
    deadline = time.monotonic() + args.timeout
    store = TCPStore(host, port, world, rank == 0, timeout=datetime.timedelta(seconds=args.timeout),
                     wait_for_workers=False)
    store.set(KEY % rank, mine)
    if rank != 0:
        # Stay until rank 0 has read everything: the store lives in rank 0's process.
        try:
            store.wait([DONE], datetime.timedelta(seconds=max(1.0, deadline - time.monotonic())))
        except Exception:
            pass
        return
    arrived = {}
    while time.monotonic() < deadline:
        for r in range(world):
            if r not in arrived and store.check([KEY % r]):
                arrived[r] = json.loads(store.get(KEY % r).decode("utf-8"))
        if len(arrived) == world:
            break
        time.sleep(0.2)
    store.set(DONE, "1")
    out = {"world_size": world, "arrived": sorted(arrived), "missing": [r for r in range(world) if r not in arrived],
           "reports": {str(r): doc for r, doc in sorted(arrived.items())}}
    with open(args.out, "w") as fh:
        json.dump(out, fh)
    time.sleep(0.5)  # let the others see DONE before the store goes away


if __name__ == "__main__":
    sys.exit(main())
