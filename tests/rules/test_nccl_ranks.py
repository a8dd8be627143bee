"""nccl-version-mismatch and nccl-collective-mismatch (rules/nccl_ranks.py): NCCL's own lines about ranks that
disagree, the public pastes of nccl#296 and nccl#969 (tests/fixtures/pastes/SOURCES.md), and silence on a
healthy NCCL run and on a peer that closed its connection."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.knowledge import messages
from hpcdoctor.rules.nccl_ranks import nccl_version
from hpcdoctor.triage.messages import find_messages


def _pasted(text: str):
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


@pytest.mark.parametrize("code, version", [("22304", "2.23.4"), ("22105", "2.21.5"), ("2708", "2.7.8"),
                                           ("21903", "2.19.3"), ("2.25.1", "2.25.1"), ("x", None)])
def test_version_codes_decode_as_nccl_h_defines_them(code, version):
    assert nccl_version(code) == version


def test_the_ranks_version_line_names_both_versions():
    # the catalogue's example: NCCL's src/init.cc format string with values filled in (no public paste of
    # this 2.23+ line was found in the issue corpus)
    example = messages.families(("nccl",))[0].by_key["version-mismatch-ranks"].get("example")
    (f,) = fired("nccl-version-mismatch", _pasted(example))
    assert f.severity == "error" and "rank 8 runs NCCL 2.21.5 and rank 0 NCCL 2.23.4" in f.message
    assert f.evidence["versions"] == ["2.21.5", "2.23.4"] and "torch.cuda.nccl.version()" in f.fix


def test_collective_mismatch_of_nccl_296_is_a_warning_naming_the_rank():
    (f,) = fired("nccl-collective-mismatch", recorded_paste_facts("nccl-296-mismatched-collective.txt"))
    assert f.severity == "warning" and "at and around rank 39" in f.message and "not a fault of this node" in f.message
    assert "NCCL_DEBUG_SUBSYS=COLL" in f.fix


def test_ib_collective_mismatch_of_nccl_969_names_both_sizes():
    gathered = recorded_paste_facts("nccl-969-ib-collective-mismatch.txt")
    (f,) = fired("nccl-collective-mismatch", gathered)
    assert "a send of 496640 bytes to a receive of 65536" in f.message
    assert f.evidence["message"] == "nccl:ib-collective-mismatch"
    assert not fired("nccl-version-mismatch", gathered)


@pytest.mark.parametrize("paste", ["../emitters_gpu/h100-nccl-healthy-info.txt", "nccl-tests-166-proxy-accept-failed.txt"])
def test_silent_on_a_healthy_run_and_a_peer_that_went_away(paste):
    gathered = recorded_paste_facts(paste)
    assert not fired("nccl-version-mismatch", gathered)
    assert not fired("nccl-collective-mismatch", gathered)
