"""Rank 0's store under a hostile peer, with torch's real TCPStore in this process (issue 27): no
value a peer chose the size of reaches rank 0 or a node leader. The peer does what any user who can
reach the port can do: lists the keys, appends megabytes to every one it finds or can guess, pushes
the largest queue items the server takes, and tries a larger one."""

from __future__ import annotations

import datetime
import json
import os
import time

import pytest

from hpcdoctor.payload import cluster_wire as wire

MiB = 1 << 20
TIMEOUT = datetime.timedelta(seconds=10)
dist = None  # torch.distributed, once _torch has imported it


@pytest.fixture(scope="module")
def _torch():
    """Import torch for the tests of its store, not at collection: every pytest-xdist worker
    collects every module, and torch's import is seconds of CPU a worker that runs none of these
    tests should not pay."""
    global dist
    try:
        import torch.distributed
    except ImportError:  # CI's oldest-Python run has no torch in-process; its default-Python run must
        if os.environ.get("CI") == "true" and os.environ.get("HPCDOCTOR_TEST_TORCH_PYTHON") is None:
            raise
        pytest.skip("no torch in this interpreter: the store is tested in-process on the Python that has it "
                    "(CI's default-Python run)")
    dist = torch.distributed


@pytest.fixture
def server(_torch):
    store = dist.TCPStore("127.0.0.1", 0, 2, True, timeout=TIMEOUT, wait_for_workers=False)
    yield store
    del store


def _client(server):
    return dist.TCPStore("127.0.0.1", server.port, 2, False, timeout=TIMEOUT)


def _grow_every_known_key(server, names, times=6, listing=True):
    """Append 8 MiB `times` times to each key the peer can list or guess (48 MiB each)."""
    peer = _client(server)
    listed = peer.list_keys() if listing and hasattr(peer, "list_keys") else []
    for name in set(listed) | set(names):
        for _ in range(times):
            peer.append(name, b"x" * (8 * MiB))
    return peer


def _honest_post(server, key, kind, rank=1):
    channel = wire.Channel(_client(server), key, wire.POSTS, 2, kind)
    body = {"from": rank, "node": {"facts": {"system": {"hostname": "node-b"}}}, "ranks": {str(rank): {"cpus": "0-1"}}}
    wire.post(channel, key, "job", body)


def _collect(server, key, kind):
    c = wire.Collector(server, key, "job", 2, kind)
    end = time.monotonic() + 10
    while time.monotonic() < end and 1 not in c.ranks:
        c.poll(end)
        time.sleep(0.05)
    return c


def test_the_libuv_store_of_this_torch_gives_posts_a_bounded_queue(server):
    assert wire.store_kind(server) == "queue"


def test_appending_to_every_key_the_peer_can_list_never_reaches_rank_0(server):
    key = os.urandom(32)
    _honest_post(server, key, "queue")
    # Before the fix rank 0 read posts with get("hpcdoctor/post/<i>"): 48 MiB a post here, and as
    # much as a peer cared to append.
    _grow_every_known_key(server, ["hpcdoctor/post/1", "hpcdoctor/post/2", wire.POSTS, wire.PLAN % 0])
    peer = _client(server)
    for _ in range(3):  # the largest items the server takes, then one byte more (refused by it)
        peer.queue_push(wire.POSTS, b"y" * (8 * MiB))
    with pytest.raises(Exception):
        _client(server).queue_push(wire.POSTS, b"y" * (8 * MiB + 1))
    c = _collect(server, key, "queue")
    assert c.ranks[1]["cpus"] == "0-1" and c.nodes[1]["facts"]["system"]["hostname"] == "node-b"
    assert max(c.post_bytes) <= wire.QUEUE_ITEM_MAX, c.post_bytes
    assert sum(c.post_bytes) <= 4 * wire.QUEUE_ITEM_MAX
    assert c.rejected_count == 3 and {r["reason"] for r in c.rejected} == {"larger than %d bytes" % wire.MAX_POST}


def test_a_leader_reads_its_plan_from_its_own_bounded_channel(server):
    key = os.urandom(32)
    plan = wire.sign(key, json.dumps({"job": "job", "leaders": [0, 1], "round": "r1"}).encode())
    # the peer fills the leader's channel first: junk of the largest size, then a forged plan
    peer = _client(server)
    peer.queue_push(wire.PLAN % 1, b"z" * (8 * MiB))
    peer.queue_push(wire.PLAN % 1, json.dumps({"job": "job", "leaders": [1], "round": "evil"}).encode())
    wire.Channel(server, key, wire.PLAN % 1, 2, "queue").send(plan)
    _grow_every_known_key(server, [])
    got = wire.read_plan(_client(server), key, "job", 1, 2, "queue", time.monotonic() + 10)
    assert got["round"] == "r1" and got["leaders"] == [0, 1]


class Unlisted:
    """The store as torch before 2.8 offers it: no queues and no way to list keys."""

    def __init__(self, store):
        self._s = store

    def add(self, k, n):
        return self._s.add(k, n)

    def set(self, k, v):
        return self._s.set(k, v)

    def get(self, k):
        return self._s.get(k)

    def check(self, keys):
        return self._s.check(keys)


def test_without_queues_posts_go_under_names_a_peer_cannot_derive(server):
    key = os.urandom(32)
    store = Unlisted(server)
    assert wire.store_kind(store) == "secret"
    _honest_post(server, key, "secret")
    # The peer grows every name it could guess from the protocol (not the secret ones; a store of
    # this kind gives it no list of keys to find them).
    _grow_every_known_key(server, ["hpcdoctor/post/1", "hpcdoctor/post/2", wire.DONE], times=2, listing=False)
    c = _collect(store, key, "secret")
    assert c.ranks[1]["cpus"] == "0-1"
    assert max(c.post_bytes) < wire.MAX_POST


def test_a_peer_that_breaks_rank_0s_connection_is_a_reported_error_not_a_traceback(server):
    key = os.urandom(32)
    _client(server).set(wire.POSTS, b"not a number")  # add() on it makes the server drop rank 0
    c = wire.Collector(_client(server), key, "job", 2, "secret")
    c.poll(time.monotonic() + 5)
    assert c.store_error and not c.ranks


def test_a_store_that_lists_keys_without_queues_is_refused():
    class Legacy(Unlisted):
        def list_keys(self):
            return []

    assert wire.store_kind(Legacy(None)) is None


def _vm(pid, field):
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) << 10 for line in fh if line.startswith(field + ":"))


@pytest.mark.slow  # hundreds of MB pushed through a real store: the cost is the thing tested
@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="the ceiling is read from /proc")
def test_a_flood_fills_the_store_process_up_to_its_ceiling_and_no_further(monkeypatch, _torch):
    import socket

    from hpcdoctor.payload import cluster_probe

    monkeypatch.setenv("HPCDOCTOR_TESTING", "1")
    monkeypatch.setenv("HPCDOCTOR_TEST_STORE_GROW_MIB", "64")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc, kind, ceiling = cluster_probe.start_store_server(port, 2, 60)
    try:
        assert proc is not None and kind == "queue" and ceiling > 0
        before = _vm(proc.pid, "VmData")
        refused = 0
        for i in range(16):  # 128 MiB of values against a 64 MiB ceiling
            try:
                peer = dist.TCPStore("127.0.0.1", port, 2, False, timeout=datetime.timedelta(seconds=1))
                peer.set(f"flood/{i}", b"x" * (8 * MiB))
                peer.check([f"flood/{i}"])
            except Exception:
                refused += 1
        assert proc.poll() is None  # the server is still there; the peer's requests were refused
        grown = _vm(proc.pid, "VmData") - before
        assert refused > 0 and grown <= 64 * MiB + 16 * MiB, (refused, grown >> 20)
    finally:
        cluster_probe.stop_store_server(proc)
    assert proc.returncode is not None


def test_a_leader_reads_nothing_from_a_store_that_is_not_rank_0s(server):
    # Whoever takes the port first is the leaders' server, and torch's client allocates whatever
    # length a server announces: a leader first asks for the job key's number, an 8-byte answer.
    key = os.urandom(32)
    leader = _client(server)
    t0 = time.monotonic()
    assert not wire.store_is_rank0s(leader, key, time.monotonic() + 1.0)  # a store rank 0 never greeted
    assert time.monotonic() - t0 < 3
    wire.greet(server, os.urandom(32))  # another job's rank 0 on the same port
    assert not wire.store_is_rank0s(leader, key, time.monotonic() + 0.5)
    wire.greet(server, key)  # this job's rank 0
    assert wire.store_is_rank0s(leader, key, time.monotonic() + 2)
