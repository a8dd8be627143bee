"""Rank 0's store as a hostile peer sees it (issue 27): every count read from it is bounded, the
key is one no other user can derive, forged nodes are refused and reports cannot be read on the
wire. No torch: the collector runs over a store of dicts with TCPStore's methods."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import time
import tracemalloc

import pytest

from hpcdoctor.cluster import orchestrate
from hpcdoctor.payload import cluster_wire as wire


class FakeStore:
    def __init__(self):
        self.kv, self.counters = {}, {}

    def add(self, key, n):
        self.counters[key] = self.counters.get(key, 0) + n
        return self.counters[key]

    def set(self, key, value):
        self.kv[key] = value if isinstance(value, bytes) else str(value).encode()

    def get(self, key):
        return self.kv[key]

    def check(self, keys):
        return all(k in self.kv for k in keys)


def test_a_huge_post_counter_costs_neither_memory_nor_time():
    store = FakeStore()
    # A peer's add("hpcdoctor/posts", 2e8) was a set of 2e8 keys to wait for (MemoryError); 200,000
    # shows the same without taking the machine down where the old code runs.
    store.add(wire.POSTS, 200_000)
    c = wire.Collector(store, b"k" * 32, "job", world=4, kind="secret")  # the counter of stores without queues
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        c.poll()
        c.poll()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - t0 < 2 and peak < 5 << 20, peak
    assert len(c.channel.pending) <= wire.max_posts(4)
    assert [r["reason"] for r in c.rejected].count("post counter past what 4 ranks post (80)") == 1


def test_the_default_key_comes_from_a_private_secret_not_from_public_facts(tmp_path):
    identity = orchestrate.job_identity({"SLURM_JOB_ID": "7"}, "gpu001", 20007)
    key, how = orchestrate.job_key({"HOME": str(tmp_path)}, identity)
    secret = tmp_path / ".hpcdoctor" / "cluster-secret"
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600 and "private" in how
    assert orchestrate.job_key({"HOME": str(tmp_path)}, identity)[0] == key  # the next node agrees
    # What anyone could compute from the job id, master and port (the old default) signs nothing now.
    public = hashlib.sha256(b"hpcdoctor-cluster-job\0" + identity.encode()).digest()
    assert key != public
    forged = json.dumps({"job": "j", "from": 1, "node": {"facts": {"system": {"hostname": "intruder"}}}}).encode()
    for raw in (wire.sign(public, forged), hmac.new(public, forged, hashlib.sha256).hexdigest().encode() + forged):
        doc, why = wire.verify(key, raw, "j")
        assert doc is None and why == "bad or missing signature"


def test_a_secret_file_others_can_read_is_refused(tmp_path):
    folder = tmp_path / ".hpcdoctor"
    folder.mkdir()
    (folder / "cluster-secret").write_text("ab" * 32 + "\n")
    os.chmod(folder / "cluster-secret", 0o644)
    with pytest.raises(orchestrate.ClusterError, match="not a private secret"):
        orchestrate.job_key({"HOME": str(tmp_path)}, "id")


def test_posts_cannot_be_read_on_the_wire_and_still_verify():
    key = os.urandom(32)
    body = json.dumps({"job": "j", "from": 0, "node": {"facts": {"system": {"hostname": "secret-node-42"}}}}).encode()
    raw = wire.sign(key, body)
    assert b"secret-node-42" not in raw and b"hostname" not in raw
    doc, why = wire.verify(key, raw, "j")
    assert why is None and doc["node"]["facts"]["system"]["hostname"] == "secret-node-42"


def test_a_signed_post_nested_too_deep_is_refused():
    key = os.urandom(32)
    body = ('{"job": "j", "from": 0, "node": %s}' % ("[" * 900 + "]" * 900)).encode()
    assert wire.verify(key, wire.sign(key, body), "j") == (None, "signed but nested deeper than 64 levels")


def test_the_node_folder_name_cannot_be_taken_in_advance(tmp_path):
    a = orchestrate.local_dir({}, "id", "node", create=False, key=b"one")
    b = orchestrate.local_dir({}, "id", "node", create=False, key=b"two")
    assert a != b
