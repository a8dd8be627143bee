"""The batch systems' own error tables (issue 24, b1): HTCondor's HoldReasonCode table
(htcondor.toml), read as each code's meaning wherever condor_q -l or the event log prints a code,
and a policy expression that only names codes not read as a hold (real pastes, SOURCES.md)."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

PASTES = FIXTURES / "pastes"


def _read(name):
    return find_messages((PASTES / name).read_text(encoding="utf-8"))


def _family(name):
    return next(f for f in messages.families() if f.id == name)


def test_htcondor_table_holds_every_hold_code_of_the_header():
    # condor_holdcodes.h @ 987397a: 0..48 are hold codes (1000+ are vacate codes, another attribute)
    assert sorted(_family("htcondor").by_code) == list(range(0, 49))


def test_a_periodic_release_expression_naming_codes_is_not_a_hold():
    found = _read("crabserver-5327-periodic-release-holdreasoncode-expression.txt")
    assert [s["id"] for s in found if s["family"] == "htcondor"] == []
