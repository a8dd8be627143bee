"""hpcdoctor cluster payload: node leaders post their node's report to rank 0 through
torch.distributed's TCPStore. Runs inside the *target* interpreter (standard library and torch).

Only one rank per node runs this (the node leader, local rank 0). The node's other ranks leave
their small rank reports in a node-local folder (``--local-dir``, private to the user); the leader
forwards them, so a node costs one torch import and one node check whatever its rank count.

Every post is enciphered (a SHAKE-256 keystream under the job's key and a fresh nonce: the store
answers anyone who can reach its port, and a node's report is the user's) and then signed with
HMAC-SHA256 over nonce and ciphertext (``HPCDOCTOR_CLUSTER_KEY`` in the environment, never on the
command line); rank 0 drops and counts posts that fail, are too large, or name another job.

No value a peer chose the size of reaches a reader (issue 27). TCPStore has no way to learn a
value's size before ``get``, and any peer can ``append`` to a key it knows without limit (a get of
it then allocates whatever the peer sent). So posts never travel as plain keys where the store can
avoid it: torch 2.8+ with the libuv store (the default) carries them in queues, whose every item the
server refuses past 8 MiB (MAX_PAYLOAD_LEN in TCPStoreLibUvBackend.cpp, tried: a 8 MiB + 1 push
resets the pusher's connection) and which no append reaches; rank 0 pops one item at a time. An
older store has no queues and no way to list its keys either, so there each post goes under a name
only the job key derives, which a peer cannot find to append to. A store that lists keys but has
no queues (the legacy backend of torch 2.10+) is refused. Never bounded here: what a peer makes the
store *hold* in rank 0's process (torch's server keeps every key and queue item it is sent); a
port reachable by others is that exposure, and the job's firewall or a private network is its fix.
Nor can a peer be kept from popping posts out of a queue: the ranks are then reported missing, a
denial, never a read (posts are enciphered).

    cluster_probe.py --report LOCAL.json --out GATHERED.json [--timeout S] [--local-dir D]
                     [--local-count N] [--bench quick|full] [--bench-budget S]

Rank, world size and rendezvous come from torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR,
MASTER_PORT), else from Slurm's (SLURM_PROCID, SLURM_NTASKS, the first host of the node list).
"""

import argparse
import datetime
import hashlib
import hmac
import json
import os
import re
import statistics
import sys
import time

POSTS = "hpcdoctor/posts"
DONE = "hpcdoctor/done"
PLAN = "hpcdoctor/bench-plan/%d"  # one channel per node leader
MAX_POST = 4 << 20  # a node report is ~40 KB; anything this large is not ours
QUEUE_ITEM_MAX = 8 << 20  # what the libuv store server accepts in one item
MAX_REASONS = 64  # rejected posts named one by one; past this they are only counted
MAX_RANK_FILE = 64 << 10
MAX_DEPTH = 64  # a report nests a dozen levels; deeper is refused before anything walks it
NONCE = 16


def max_posts(world):
    """The most posts a job of ``world`` ranks makes: each rank's report (forwarded alone at
    worst), a node report and a bench result per leader, and a margin."""
    return 4 * world + 64


def _keystream(key, nonce, n):
    return hashlib.shake_256(b"hpcdoctor-cluster-stream\0" + key + nonce).digest(n)


def _xor(data, stream):
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def _too_deep(value):
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (dict, list)):
            if level > MAX_DEPTH:
                return True
            items = node.values() if isinstance(node, dict) else node
            stack.extend((c, level + 1) for c in items if isinstance(c, (dict, list)))
    return False


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


def sign(key, body):
    nonce = os.urandom(NONCE)
    sealed = nonce + _xor(body, _keystream(key, nonce, len(body)))
    return hmac.new(key, sealed, hashlib.sha256).hexdigest().encode("ascii") + sealed


def verify(key, raw, job):
    """The post's body as a dict, or (None, reason). Size is checked before anything is parsed."""
    if len(raw) > MAX_POST:
        return None, "larger than %d bytes" % MAX_POST
    mac, sealed = raw[:64], raw[64:]
    if len(sealed) < NONCE or not hmac.compare_digest(mac, hmac.new(key, sealed, hashlib.sha256).hexdigest().encode("ascii")):
        return None, "bad or missing signature"
    nonce, cipher = sealed[:NONCE], sealed[NONCE:]
    body = _xor(cipher, _keystream(key, nonce, len(cipher)))
    try:
        doc = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        return None, "signed but not JSON"
    if _too_deep(doc):
        return None, "signed but nested deeper than %d levels" % MAX_DEPTH
    if not isinstance(doc, dict) or doc.get("job") != job:
        return None, "signed for another job"
    return doc, None


def _secret_name(key, name, i):
    tag = hmac.new(key, ("%s\0%d" % (name, i)).encode("utf-8"), hashlib.sha256).hexdigest()[:32]
    return "hpcdoctor/s/" + tag


def store_kind(store):
    """'queue' (bounded items), 'secret' (unlisted names) or None (neither holds for this store)."""
    libuv = bool(getattr(store, "libuvBackend", False))
    if libuv and hasattr(store, "queue_pop") and hasattr(store, "queue_len"):
        return "queue"
    if hasattr(store, "list_keys"):
        return None
    return "secret"


class Channel:
    """Posts to one reader over the store, read one at a time, each at most QUEUE_ITEM_MAX bytes
    (queue) or only under names a peer cannot know (secret); see the module's docstring."""

    def __init__(self, store, key, name, world, kind):
        self.store, self.key, self.name, self.world, self.kind = store, key, name, world, kind
        self.seen = 0
        self.pending = set()
        self.counter_refused = None

    def send(self, raw):
        if self.kind == "queue":
            self.store.queue_push(self.name, raw)
            return
        i = self.store.add(self.name, 1)
        self.store.set(_secret_name(self.key, self.name, i), raw)

    def receive(self, deadline=None):
        """The posts waiting now, one (post number, raw bytes) at a time."""
        if self.kind == "queue":
            n = 0
            while deadline is None or time.monotonic() < deadline:
                if self.store.queue_len(self.name) <= 0:
                    return
                try:
                    raw = self.store.queue_pop(self.name, False)
                except Exception as exc:  # QueueEmptyError: another reader took it
                    if type(exc).__name__ == "QueueEmptyError":
                        return
                    raise
                n += 1
                yield self.seen + n, raw
            return
        top = self.store.add(self.name, 0)
        limit = max_posts(self.world)
        if not isinstance(top, int) or top > limit:
            # A peer's add(name, 2e8) must not become 2e8 keys to wait for (MemoryError).
            self.counter_refused = top
            top = limit if isinstance(top, int) else self.seen
        self.pending.update(range(self.seen + 1, top + 1))
        self.seen = max(self.seen, top)
        for i in sorted(self.pending):
            name = _secret_name(self.key, self.name, i)
            if self.store.check([name]):
                self.pending.discard(i)
                yield i, self.store.get(name)


def post(channel, key, job, doc):
    body = json.dumps(dict(doc, job=job), separators=(",", ":")).encode("utf-8")
    channel.send(sign(key, body))
    return len(body)


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


class Collector:
    """Rank 0's side: read and check every post; a rank counts as arrived once its info is in."""

    def __init__(self, store, key, job, world, kind="queue"):
        self.key, self.job, self.world = key, job, world
        self.channel = Channel(store, key, POSTS, world, kind)
        self.nodes = {}  # leader rank -> node report
        self.ranks = {}  # rank -> rank report
        self.rejected = []
        self.rejected_count = 0
        self.bench = {}  # leader rank -> bench result
        self.post_bytes = []
        self.counter_noted = False
        self.store_error = None

    def _reject(self, post, reason):
        self.rejected_count += 1
        if len(self.rejected) < MAX_REASONS:
            self.rejected.append({"post": post, "reason": reason})

    def poll(self, deadline=None):
        if self.store_error:
            return
        try:
            for i, raw in self.channel.receive(deadline):
                self.post_bytes.append(len(raw))
                self._accept(i, raw)
                raw = None
        except Exception as exc:  # a peer can close rank 0's connection (add on a non-number)
            self.store_error = "%s: %s" % (exc.__class__.__name__, str(exc).splitlines()[0][:200] if str(exc) else "")
        top = self.channel.counter_refused
        if top is not None and not self.counter_noted:
            self.counter_noted = True
            self._reject(top, "post counter past what %d ranks post (%d)" % (self.world, max_posts(self.world)))

    def _accept(self, i, raw):
        doc, why = verify(self.key, raw, self.job)
        if doc is None:
            self._reject(i, why)
            return
        sender = doc.get("from")
        if not isinstance(sender, int) or not 0 <= sender < self.world:
            self._reject(i, "no valid sender rank")
            return
        if isinstance(doc.get("node"), dict):
            self.nodes[sender] = doc["node"]
        for r, info in (doc.get("ranks") or {}).items():
            if str(r).isdecimal() and int(r) < self.world and isinstance(info, dict):
                self.ranks[int(r)] = dict(info, leader=sender)
        if isinstance(doc.get("bench"), dict):
            self.bench[sender] = doc["bench"]

    def complete(self):
        return len(self.ranks) == self.world


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


def read_plan(store, key, job, rank, world, kind, deadline):
    """Rank 0's signed plan from this leader's own channel; posts that do not verify are skipped."""
    channel = Channel(store, key, PLAN % rank, world, kind)
    tries = 0
    while time.monotonic() < deadline and tries < max_posts(world):
        try:
            for _, raw in channel.receive(deadline):
                tries += 1
                plan, _why = verify(key, raw, job)
                if plan is not None and isinstance(plan.get("round"), str):
                    return plan
        except Exception:  # a peer closed this leader's connection: no links pass for this node
            return None
        time.sleep(0.1)
    return None


def run_bench(store, key, job, rank, args, deadline, world, kind):
    """A leader's part of the links pass: wait for rank 0's signed plan, join, measure, post."""
    import torch
    import torch.distributed as dist

    plan = read_plan(store, key, job, rank, world, kind, deadline)
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
    from torch.distributed import TCPStore

    with open(args.report) as fh:
        mine = json.load(fh)
    deadline = time.monotonic() + args.timeout
    store = TCPStore(host, port, world, rank == 0, timeout=datetime.timedelta(seconds=args.timeout),
                     wait_for_workers=False)
    kind = store_kind(store)
    if kind is None:
        raise SystemExit("hpcdoctor cluster: this torch's store lists its keys but has no bounded queues "
                         "(not the libuv backend): a peer could make rank 0 read a value of any size")
    done = _secret_name(key, DONE, 0)
    posts = Channel(store, key, POSTS, world, kind)
    collector = Collector(store, key, job, world, kind) if rank == 0 else None
    t0 = time.perf_counter()
    size = post(posts, key, job, {"from": rank, "node": mine["node"], "ranks": {str(rank): mine["rank"]}})
    timing = {"node_post_bytes": size, "node_post_s": time.perf_counter() - t0}
    forwarded = {rank}
    local_done = not args.local_dir or args.local_count == 1
    while time.monotonic() < deadline:
        if args.local_dir and not local_done:
            batch = read_local(args.local_dir, forwarded, args.since)
            if batch:
                forwarded.update(batch)
                post(posts, key, job, {"from": rank, "ranks": {str(r): v for r, v in batch.items()}})
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
                post(posts, key, job, {"from": rank, "bench": result})
        # Stay until rank 0 has read everything: the store lives in rank 0's process.
        while time.monotonic() < bench_deadline and not store.check([done]):
            time.sleep(0.1)
        return
    links = None
    if args.bench and not collector.store_error:
        leaders = sorted(collector.nodes)
        plan = sign(key, json.dumps({"job": job, "leaders": leaders, "round": os.urandom(16).hex()}).encode("utf-8"))
        for leader in leaders:
            Channel(store, key, PLAN % leader, world, kind).send(plan)
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
                         bytes_read=sum(collector.post_bytes),
                         median_post_bytes=statistics.median(collector.post_bytes) if collector.post_bytes else 0)}
    with open(args.out, "w") as fh:
        json.dump(out, fh)
    time.sleep(0.3)  # let the others see DONE before the store goes away


if __name__ == "__main__":
    sys.exit(main())
