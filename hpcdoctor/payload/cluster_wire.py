"""What travels through rank 0's TCPStore in a cluster check, and how it is read: posts sealed
and signed under the job's key, channels that never hand a reader a value a peer chose the size
of, and rank 0's collector. Standard library only (the store object comes from the caller); it runs
inside the *target* interpreter beside cluster_probe.py.

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
no queues (the legacy backend of torch 2.10+) is refused. What a peer makes the store *hold*
(torch's server keeps every key and queue item it is sent) is bounded apart: rank 0 runs the server
in a process of its own under a memory ceiling (store_server.py). A peer can still pop posts out of
a queue or fill the store to its ceiling: the ranks are then reported missing or the store lost, a
denial, never a read (posts are enciphered). A process that takes the port before rank 0 would be
the leaders' server, answering reads with lengths of its choosing, so a leader reads nothing until
the store has shown the job key's number (store_is_rank0s).
"""

import hashlib
import hmac
import json
import os
import time

POSTS = "hpcdoctor/posts"
DONE = "hpcdoctor/done"
PLAN = "hpcdoctor/bench-plan/%d"  # one channel per node leader
MAX_POST = 4 << 20  # a node report is ~40 KB; anything this large is not ours
QUEUE_ITEM_MAX = 8 << 20  # what the libuv store server accepts in one item
MAX_REASONS = 64  # rejected posts named one by one; past this they are only counted
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


def secret_name(key, name, i):
    tag = hmac.new(key, ("%s\0%d" % (name, i)).encode("utf-8"), hashlib.sha256).hexdigest()[:32]
    return "hpcdoctor/s/" + tag


HELLO = "hpcdoctor/hello"


def hello_value(key):
    """The number rank 0 adds under a secret name once its store serves: only the job key gives it."""
    return 1 + int.from_bytes(hmac.new(key, b"hpcdoctor-hello", hashlib.sha256).digest()[:7], "big")


def greet(store, key):
    """Rank 0's side: show the job key's number to the ranks."""
    store.add(secret_name(key, HELLO, 0), hello_value(key))


def store_is_rank0s(store, key, deadline):
    """Whether the store shows the job key's number before ``deadline``. A leader asks this before it
    reads anything: whoever took the port first answers reads with lengths of its choosing (torch's
    client allocates what the server announces), and ``add`` is the one call whose answer is a
    fixed 8 bytes."""
    want, name = hello_value(key), secret_name(key, HELLO, 0)
    while True:
        try:
            if store.add(name, 0) == want:
                return True
        except Exception:  # the store closed this connection
            return False
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


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
        self.store.set(secret_name(self.key, self.name, i), raw)

    def receive(self, deadline=None):
        """The posts waiting now, one (post number, raw bytes) at a time."""
        if self.kind == "queue":
            while deadline is None or time.monotonic() < deadline:
                if self.store.queue_len(self.name) <= 0:
                    return
                try:
                    raw = self.store.queue_pop(self.name, False)
                except Exception as exc:  # QueueEmptyError: another reader took it
                    if type(exc).__name__ == "QueueEmptyError":
                        return
                    raise
                self.seen += 1
                yield self.seen, raw
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
            name = secret_name(self.key, self.name, i)
            if self.store.check([name]):
                self.pending.discard(i)
                yield i, self.store.get(name)


def post(channel, key, job, doc):
    body = json.dumps(dict(doc, job=job), separators=(",", ":")).encode("utf-8")
    channel.send(sign(key, body))
    return len(body)


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
