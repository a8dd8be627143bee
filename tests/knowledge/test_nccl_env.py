"""The nccl_env loader: which release reads which variable, and which real name a typo is near."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from hpcdoctor import knowledge
from hpcdoctor.knowledge import nccl_env


def _one(reader, pred):
    return next(e for n in nccl_env.names(reader) for e in nccl_env.entries(n) if e["reader"] == reader and pred(e))


def test_reads_follows_first_and_last_and_refuses_releases_never_read():
    added = _one("nccl", lambda e: e["first"] != nccl_env.scanned("nccl")[0] and "last" not in e)
    before = knowledge.load("nccl_env")["nccl_versions"]
    earlier = before[before.index(added["first"]) - 1]
    assert nccl_env.reads(added, added["first"]) is True
    assert nccl_env.reads(added, earlier) is False
    dropped = _one("nccl", lambda e: "last" in e)
    after = before[before.index(dropped["last"]) + 1]
    assert nccl_env.reads(dropped, dropped["last"]) is True
    assert nccl_env.reads(dropped, after) is False
    # Outside the scanned releases, or not a version at all: unknown, not "does not read".
    assert nccl_env.reads(added, "2.2.13") is None
    assert nccl_env.reads(added, "99.0.0") is None
    assert nccl_env.reads(added, "garbage") is None


def test_torch_is_judged_by_its_minor_release():
    # torch was read at the last patch of each minor: 2.2.0 is judged as 2.2.2 was read.
    e = _one("torch", lambda e: e["first"].startswith("2.2.") and "last" not in e)
    assert nccl_env.reads(e, "2.2.0") is True
    assert nccl_env.reads(e, "2.2.0+cu121") is True
    assert nccl_env.reads(e, "2.1.0") is False


@pytest.mark.parametrize("typo, real", [
    ("NCCL_SOCKET_IFNAMES", "NCCL_SOCKET_IFNAME"),
    ("NCCL_P2P_DISABLED", "NCCL_P2P_DISABLE"),
    ("NCCL_IB_HCAS", "NCCL_IB_HCA"),
    ("TORCH_NCCL_BLOCKING_WAITS", "TORCH_NCCL_BLOCKING_WAIT"),
])
def test_closest_names_the_real_variable(typo, real):
    assert nccl_env.closest(typo) == real


def test_closest_stays_in_the_family_and_says_none_when_nothing_is_near():
    assert nccl_env.closest("NCCL_COMPLETELY_MADE_UP_SETTING") is None
    near = nccl_env.closest("TORCH_NCCL_HEARTBEAT_TIMEOUT_SECS")
    assert near is not None and near.startswith("TORCH_")


def test_every_rename_points_at_a_name_the_table_holds():
    for name in nccl_env.names("torch"):
        for e in nccl_env.entries(name):
            if e.get("renamed_to"):
                assert nccl_env.entries(e["renamed_to"]), (name, e["renamed_to"])
                assert e.get("renamed_in")


def test_first_and_last_are_releases_that_were_read():
    table = knowledge.load("nccl_env")
    for e in table["variable"]:
        versions = table[f"{e['reader']}_versions"]
        assert e["first"] in versions, e["name"]
        assert e.get("last", versions[-1]) in versions, e["name"]
        assert versions.index(e["first"]) <= versions.index(e.get("last", versions[-1])), e["name"]


@pytest.mark.parametrize("break_it", [
    lambda d: d["variable"][0].update(reader="rccl"),
    lambda d: d["variable"][0].pop("source"),
    lambda d: d["variable"][0].update(first="2.30"),
    lambda d: d["variable"][0].update(read="today"),
])
def test_the_schema_catches_a_broken_entry(break_it):
    schema = json.loads((knowledge.KNOWLEDGE_DIR / "schema" / "nccl_env.json").read_text(encoding="utf-8"))
    data = copy.deepcopy(knowledge.load("nccl_env"))
    jsonschema.validate(data, schema)
    break_it(data)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)
