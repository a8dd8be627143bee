"""hpcdoctor cluster payload: node leaders post their node's report to rank 0 through
torch.distributed's TCPStore. Runs inside the *target* interpreter (standard library and torch).

Only one rank per node runs this (the node leader, local rank 0). The node's other ranks leave
their small rank reports in a node-local folder (``--local-dir``, private to the user); the leader
forwards them, so a node costs one torch import and one node check whatever its rank count.

The store's side (sealed posts, bounded channels, rank 0's collector) is cluster_wire.py.

    cluster_probe.py --report LOCAL.json --out GATHERED.json [--timeout S] [--local-dir D]
                     [--local-count N] [--bench quick|full] [--bench-budget S]

Rank, world size and rendezvous come from torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), else from Slurm's (SLURM_PROCID, SLURM_NTASKS, the first host of the node list).
"""

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import time

try:  # imported as hpcdoctor.payload.cluster_probe
    from . import cluster_wire as wire
except ImportError:  # run as a script by the target interpreter: the folder is on sys.path
    import cluster_wire as wire

MAX_RANK_FILE = 64 << 10


def first_host(nodelist):
    """The first host of a Slurm node list: "gpu[001-004,010],cpu7" -> "gpu001"."""
    m = re.match(r"^([^,\[]+)(?:\[([^\]]+)\])?", nodelist or "")
    if not m:
        return None
    prefix, ranges = m.group(1), m.group(2)
    if not ranges:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def rendezvous(env=None):
    env = os.environ if env is None else env
    # mpirun inside an allocation: its ranks share the Slurm task's SLURM_PROCID, so its own come first.
    rank = next((env[k] for k in ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID") if k in env), None)
    world = next((env[k] for k in ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS") if k in env), None)
    host = env.get("MASTER_ADDR") or first_host(env.get("SLURM_JOB_NODELIST", env.get("SLURM_NODELIST", "")))
    job = env.get("SLURM_JOB_ID", "0")
    port = int(env.get("MASTER_PORT") or 20000 + int(re.sub(r"\D", "", job) or 0) % 20000)
    if rank is None or world is None or not host:
        raise SystemExit("hpcdoctor cluster: no rank/world size/master (run under srun or torchrun)")
    return int(rank), int(world), host, port


def read_local(folder, done, since=0.0):
    """Rank reports that the node's other ranks left in the node folder, not yet forwarded; files
    older than ``since`` are a previous run's (same port, no job id) and are dropped."""
    found = {}
    try:
        names = os.listdir(folder)
    except OSError:
        return found
    for name in names:
        m = re.match(r"^rank-(\d+)\.json$", name)
        if not m or int(m.group(1)) in done:
            continue
        path = os.path.join(folder, name)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                fresh = os.fstat(fh.fileno()).st_mtime >= since
                data = fh.read(MAX_RANK_FILE + 1)
            info = json.loads(data.decode("utf-8")) if fresh and len(data) <= MAX_RANK_FILE else None
        except (OSError, ValueError):
            continue
        if isinstance(info, dict):
            found[int(m.group(1))] = info
        try:
            os.unlink(path)
        except OSError:
            pass
    return found


def _pairs(n):
    """Ring neighbours (i, i+1 mod n) in rounds of disjoint pairs: 2 rounds for even n, 3 for odd,
    so the pass takes the same time at 4 nodes as at 4,096 and each pair is timed alone."""
    edges = [(i, (i + 1) % n) for i in range(n if n > 2 else n - 1)]
    rounds = []
    while edges:
        used, this, rest = set(), [], []
        for a, b in edges:
            (rest if a in used or b in used else this).append((a, b))
            if (a, b) in this:
                used.update((a, b))
        rounds.append(this)
        edges = rest
    return rounds


def _test_delay():
    # A test-only knob that slows this "node" on purpose so that a test can prove it is named.
    if os.environ.get("HPCDOCTOR_TESTING") == "1":
        return float(os.environ.get("HPCDOCTOR_TEST_SLOW_S") or 0)
    return 0.0


def links_bench(torch, dist, me, n, tier, budget_end):
    """All-reduce across the node leaders, then the ring of node pairs, each pair alone."""
    gpu = torch.cuda.is_available()
    dev = torch.device("cuda", 0) if gpu else torch.device("cpu")
    sizes = [1 << 20, 16 << 20, 64 << 20] if gpu else [1 << 20, 4 << 20]
    if tier == "full":
        sizes.append(256 << 20 if gpu else 16 << 20)
    iters = 5
    out = {"backend": dist.get_backend(), "nodes": n, "allreduce": [], "pairs": []}

    def sync():
        if gpu:
            torch.cuda.synchronize()

    for size in sizes:
        if time.monotonic() > budget_end:
            out["stopped"] = "budget exhausted"
            break
        t = torch.ones(size // 4, dtype=torch.float32, device=dev)
        dist.all_reduce(t)
        sync()
        dist.barrier()
        start = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(t)
        sync()
        took = torch.tensor([time.perf_counter() - start], dtype=torch.float64, device=dev)
        dist.all_reduce(took, op=dist.ReduceOp.MAX)  # the slowest rank sets the pace, as in nccl-tests
        sec = took.item() / iters
        algbw = size / sec / 1e9
        out["allreduce"].append({"bytes": size, "time_s": sec, "algbw_gbs": algbw,
                                 "busbw_gbs": algbw * 2 * (n - 1) / n})
    size = sizes[-1] if gpu else 4 << 20
    buf = torch.ones(size // 4, dtype=torch.float32, device=dev)
    delay = _test_delay()
    for rnd in _pairs(n):
        dist.barrier()
        for a, b in rnd:
            if me not in (a, b):
                continue
            peer = b if me == a else a
            start = time.perf_counter()
            for _ in range(iters):
                # a sends then receives, b the reverse: one round trip moves 2 x size over the pair
                for turn in ((a, b), (b, a)):
                    if delay and turn[0] == me:
                        time.sleep(delay)
                    if turn[0] == me:
                        dist.send(buf, dst=peer)
                    else:
                        dist.recv(buf, src=peer)
            sync()
            sec = time.perf_counter() - start
            if me == a:
                out["pairs"].append({"a": a, "b": b, "bytes": size, "gbs": 2 * size * iters / sec / 1e9})
    dist.barrier()
    return out


def run_bench(store, key, job, rank, args, deadline, world, kind):
    """A leader's part of the links pass: wait for rank 0's signed plan, join, measure, post."""
    import torch
    import torch.distributed as dist

    plan = wire.read_plan(store, key, job, rank, world, kind, deadline)
    if not plan or rank not in (plan.get("leaders") or []):
        return None
    leaders = plan["leaders"]
    me, n = leaders.index(rank), len(leaders)
    if n < 2:
        return {"skipped": "one node: no link between nodes to measure"}
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    # In ROCm builds of torch, RCCL answers to the name "nccl".
    if backend == "nccl":
        torch.cuda.set_device(0)  # the first GPU this rank sees; NCCL's barrier needs a current device
    # torch's own rendezvous reads these keys whole: a round name from the signed, enciphered plan
    # keeps them where a peer cannot name them (on a store that cannot list its keys).
    prefix = dist.PrefixStore("hpcdoctor/bench/%s" % plan["round"], store)
    try:
        dist.init_process_group(backend, store=prefix, rank=me, world_size=n,
                                timeout=datetime.timedelta(seconds=max(5.0, deadline - time.monotonic())))
        try:
            return links_bench(torch, dist, me, n, args.bench, time.monotonic() + args.bench_budget)
        finally:
            dist.destroy_process_group()
    except Exception as exc:  # one failed pass is a finding of its own, never a traceback
        return {"error": "%s: %s" % (exc.__class__.__name__, str(exc)[:300])}


def spawn_store_server(port, world, timeout):
    """Start rank 0's store in its own process under a memory ceiling (store_server.py); its torch
    import overlaps rank 0's own. The process, or the reason it could not start."""
    import subprocess

    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "store_server.py")
    try:
        return subprocess.Popen([sys.executable, script, str(port), str(world), str(timeout)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError as exc:
        return "could not start: %s" % exc


def await_store_server(proc, timeout):
    """(process, kind, ceiling) once it serves, or (None, None, why) when it did not in ``timeout``."""
    import select

    if isinstance(proc, str):
        return None, None, proc
    end = time.monotonic() + timeout
    line = b""
    while time.monotonic() < end and not line.endswith(b"\n") and len(line) < 200:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        got = os.read(proc.stdout.fileno(), 200)
        if not got:
            break
        line += got
    words = line.decode("ascii", "replace").split()
    if len(words) == 3 and words[0] == "ready" and words[2].isdigit():
        return proc, (None if words[1] == "None" else words[1]), int(words[2])
    stop_store_server(proc)
    return None, None, "did not start (exit %s)" % proc.returncode


def start_store_server(port, world, timeout):
    return await_store_server(spawn_store_server(port, world, timeout), timeout)


def stop_store_server(proc):
    if proc is None:
        return
    try:
        proc.stdin.close()
        proc.wait(5)
    except Exception:
        proc.kill()
        proc.wait()


def await_report(path, timeout):
    """This node's report, once hpcdoctor has written it. The node check runs while this process
    imports torch, and either may finish first: on a loaded node the check was still running when a
    quick import ended, and opening the file at once failed (FileNotFoundError). The report is
    written whole (os.replace), so a file that exists is complete."""
    give_up = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > give_up:
            raise SystemExit("hpcdoctor cluster: this node's check wrote no report in %.0f s" % timeout)
        time.sleep(0.05)
    with open(path) as fh:
        return json.load(fh)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--local-dir")
    ap.add_argument("--local-count", type=int, default=0, help="ranks on this node, 0 when unknown")
    ap.add_argument("--since", type=float, default=0.0, help="ignore rank files older than this (epoch s)")
    ap.add_argument("--bench", choices=("quick", "full"))
    ap.add_argument("--bench-budget", type=float, default=30.0)
    args = ap.parse_args()
    rank, world, host, port = rendezvous()
    key = bytes.fromhex(os.environ.get("HPCDOCTOR_CLUSTER_KEY", ""))
    job = os.environ.get("HPCDOCTOR_CLUSTER_JOB", "")
    if not key:
        raise SystemExit("hpcdoctor cluster: no job key in the environment")
    spawned = spawn_store_server(port, world, args.timeout) if rank == 0 else None
    from torch.distributed import TCPStore

    mine = await_report(args.report, args.timeout)
    deadline = time.monotonic() + args.timeout
    server, server_kind, ceiling = await_store_server(spawned, args.timeout) if rank == 0 else (None, None, None)
    # Where the server would not start (no /proc, an odd interpreter) rank 0 hosts it as torch does,
    # without the ceiling, and says so in its result.
    store = TCPStore(host, port, world, rank == 0 and server is None,
                     timeout=datetime.timedelta(seconds=args.timeout), wait_for_workers=False)
    kind = wire.store_kind(store) if server is None else server_kind
    if kind is None:
        stop_store_server(server)
        raise SystemExit("hpcdoctor cluster: this torch's store lists its keys but has no bounded queues "
                         "(not the libuv backend): a peer could make rank 0 read a value of any size")
    if rank == 0:
        wire.greet(store, key)
    elif not wire.store_is_rank0s(store, key, deadline):
        raise SystemExit("hpcdoctor cluster: the store at %s:%d did not show this job's key in %.0f s "
                         "(rank 0 not there, or another process on its port)" % (host, port, args.timeout))
    done = wire.secret_name(key, wire.DONE, 0)
    posts = wire.Channel(store, key, wire.POSTS, world, kind)
    collector = wire.Collector(store, key, job, world, kind) if rank == 0 else None
    t0 = time.perf_counter()
    size = wire.post(posts, key, job, {"from": rank, "node": mine["node"], "ranks": {str(rank): mine["rank"]}})
    timing = {"node_post_bytes": size, "node_post_s": time.perf_counter() - t0}
    forwarded = {rank}
    local_done = not args.local_dir or args.local_count == 1
    while time.monotonic() < deadline:
        if args.local_dir and not local_done:
            batch = read_local(args.local_dir, forwarded, args.since)
            if batch:
                forwarded.update(batch)
                wire.post(posts, key, job, {"from": rank, "ranks": {str(r): v for r, v in batch.items()}})
            local_done = args.local_count > 0 and len(forwarded) >= args.local_count
        if collector is not None:
            collector.poll(deadline)
            if collector.complete() or collector.store_error:
                break
        elif local_done or store.check([done]):
            break
        time.sleep(0.05)
    bench_deadline = deadline + (args.bench_budget + 10 if args.bench else 0)
    if collector is None:
        if args.bench:
            result = run_bench(store, key, job, rank, args, bench_deadline, world, kind)
            if result is not None:
                wire.post(posts, key, job, {"from": rank, "bench": result})
        # Stay until rank 0 has read everything: the store lives in rank 0's process.
        while time.monotonic() < bench_deadline and not store.check([done]):
            time.sleep(0.1)
        return
    links = None
    if args.bench and not collector.store_error:
        leaders = sorted(collector.nodes)
        plan = wire.sign(key, json.dumps({"job": job, "leaders": leaders, "round": os.urandom(16).hex()}).encode("utf-8"))
        for leader in leaders:
            wire.Channel(store, key, wire.PLAN % leader, world, kind).send(plan)
        own = run_bench(store, key, job, 0, args, bench_deadline, world, kind)
        if own is not None:
            collector.bench[0] = own
        while time.monotonic() < bench_deadline and len(collector.bench) < len(leaders) and not collector.store_error:
            collector.poll(bench_deadline)
            time.sleep(0.05)
        links = {"leaders": leaders, "results": {str(r): v for r, v in sorted(collector.bench.items())}}
    try:
        store.set(done, "1")
    except Exception:  # rank 0's connection closed by a peer: the others stop at their timeout
        pass
    out = {"world_size": world, "arrived": sorted(collector.ranks),
           "missing": [r for r in range(world) if r not in collector.ranks],
           "nodes": {str(r): doc for r, doc in sorted(collector.nodes.items())},
           "ranks": {str(r): info for r, info in sorted(collector.ranks.items())},
           "rejected": collector.rejected, "rejected_count": collector.rejected_count,
           "store_error": collector.store_error, "store_kind": kind, "links": links,
           "store": dict(timing, posts_read=len(collector.post_bytes),
                         server=(("own process, data capped at %d MiB" % (ceiling >> 20) if ceiling
                                  else "own process, uncapped (no /proc/self/status)") if server is not None
                                 else "in rank 0's process, uncapped: " + str(ceiling)),
                         bytes_read=sum(collector.post_bytes),
                         median_post_bytes=statistics.median(collector.post_bytes) if collector.post_bytes else 0)}
    with open(args.out, "w") as fh:
        json.dump(out, fh)
    time.sleep(0.3)  # let the others see DONE before the store goes away
    stop_store_server(server)


if __name__ == "__main__":
    sys.exit(main())
