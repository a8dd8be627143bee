"""Lines that name no node fault are read (so the paste is answered, not refused) and fire nothing:
OpenMM's blown-up simulation, MPICH's deliberate PMI-2 lookup of a missing key, libtpu's lock."""

from __future__ import annotations

import pytest

from hpcdoctor.triage.messages import find_messages

CASES = [
    ("This is a general issue regarding the 'Exception: Particle coordinate is nan'. Some simulations crash.",
     "md_engines:openmm-particle-coordinate-nan"),
    ("PMI2_KVS_Get:_pmi2_kvs_get failed\n_pmi2_kvs_get:key [-NONEXIST-KEY] was not found.\n",
     "cray_mpich:pmi2-nonexist-key-lookup"),
    ("there were repeated warning messages `libtpu.so already in used by another process. Not attempting to load "
     "libtpu.so in this process.`", "frameworks:libtpu-in-use"),
]


@pytest.mark.parametrize("text,sid", CASES)
def test_read_and_feeding_no_rule(text, sid):
    found = [s for s in find_messages(text) if s["id"] == sid]
    assert found and found[0]["rules"] == []


def test_a_key_of_the_program_is_not_the_harmless_lookup():
    assert not [s for s in find_messages("_pmi2_kvs_get:key [PMI_process_mapping] was not found.\n")
                if s["id"] == "cray_mpich:pmi2-nonexist-key-lookup"]


def test_cray_pmis_nonexist_key_paste_is_read_whole_and_raises_no_alarm():
    # pmodels/mpich#6687 (set X's healthy control): both of Cray PMI's lines are read, neither alarms
    from conftest import alarms
    from rulekit import PASTES
    path = PASTES / "mpich-6687-pmi2-nonexist-key-harmless-healthy.txt"
    ids = {s["id"] for s in find_messages(path.read_text())}
    assert {"cray_mpich:cray-pmi2-kvs-get-failed", "cray_mpich:pmi2-nonexist-key-lookup"} <= ids
    assert "cray_mpich:cray-pmi2-key-not-found" not in ids
    assert alarms(path) == {}


def test_a_key_of_flux_missing_under_cray_pmi_is_read_as_the_other_miss():
    found = {s["id"] for s in find_messages("_pmi2_kvs_get:key [flux.instance-level] was not found.\n")}
    assert "cray_mpich:cray-pmi2-key-not-found" in found and "cray_mpich:pmi2-nonexist-key-lookup" not in found
