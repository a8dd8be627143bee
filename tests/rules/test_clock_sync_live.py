"""system-clock-wrong (rules/clock.py) judged on the kernel's own NTP state: checks/clock_sync.py's
parser on an adjtimex reading recorded on the development VM (tests/fixtures/pastes/SOURCES.md,
unsynchronised: no time service runs there) and on the documented status bits, the rule on the
facts the check makes, and an unreadable reading left unknown."""

from __future__ import annotations

import json

import pytest

from rulekit import PASTES, facts, fired, run_rule
from hpcdoctor.checks import clock_sync
from hpcdoctor.checks.clock_sync import STA_UNSYNC, TIME_ERROR, timex_facts
from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing

RECORDED = json.loads((PASTES / "adjtimex-debian12-vm-unsynchronised.json").read_text())


def test_recorded_unsynchronised_reading():
    got = timex_facts(RECORDED)
    assert got["synchronised"] is False and got["state"] == "TIME_ERROR" and got["unsync_flag"] is True
    # the kernel's NTP_PHASE_LIMIT: maxerror stops growing at 16 s and STA_UNSYNC is set
    assert got["maxerror_s"] == 16.0 and got["esterror_s"] == 16.0


def test_same_reading_with_the_unsync_bit_cleared_and_time_ok_is_synchronised():
    # what chronyd writes (ADJ_STATUS without STA_UNSYNC, adjtimex then returns TIME_OK 0); no
    # synchronised node was at hand to record, so the documented values are applied to the recording
    synced = dict(RECORDED, rc=0, status=RECORDED["status"] & ~STA_UNSYNC, maxerror=1500, esterror=20)
    got = timex_facts(synced)
    assert got["synchronised"] is True and got["state"] == "TIME_OK" and got["esterror_s"] == 2e-05


def test_either_sign_of_unsync_counts():
    assert timex_facts(dict(RECORDED, rc=TIME_ERROR, status=0))["synchronised"] is False
    assert timex_facts(dict(RECORDED, rc=0, status=STA_UNSYNC))["synchronised"] is False


@pytest.mark.parametrize("raw", [None, {}, dict(RECORDED, rc=99), dict(RECORDED, status="64"), dict(RECORDED, maxerror=True)])
def test_a_reading_not_understood_is_refused(raw):
    with pytest.raises(ValueError):
        timex_facts(raw)


class _Root:
    mode = "replay"

    def __init__(self, result):
        self.result = result

    def probe(self, name, fn):
        assert name == "adjtimex"
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def test_collect_keeps_an_unreadable_or_garbled_reading_unknown():
    out = clock_sync.collect(_Root(Missing("probe adjtimex was not recorded")), None)["clock_sync"]
    assert isinstance(out, Unknown) and "not recorded" in out.reason
    out = clock_sync.collect(_Root({"rc": "x"}), None)["clock_sync"]
    assert isinstance(out, Unknown) and "not understood" in out.reason
    assert clock_sync.collect(_Root(RECORDED), None)["clock_sync"]["synchronised"] is False


def test_live_unsynchronised_clock_is_a_warning():
    (f,) = fired("system-clock-wrong", facts("cpu-kvm-2core", clock_sync=timex_facts(RECORDED)))
    assert f.severity == "warning" and "not synchronised" in f.message and "TIME_ERROR" in f.message
    assert "16 s" in f.message and "chronyc" in f.fix and f.evidence["synchronised"] is False


def test_live_synchronised_clock_says_nothing():
    synced = timex_facts(dict(RECORDED, rc=0, status=0, maxerror=1500, esterror=20))
    assert not fired("system-clock-wrong", facts("cpu-kvm-2core", clock_sync=synced))


def test_live_unread_clock_is_skipped_not_passed():
    g = facts("cpu-kvm-2core")
    g["facts"]["clock_sync"] = None
    g["unknown"]["clock_sync"] = "the kernel's clock state was not read: probe adjtimex was not recorded"
    findings, skipped = run_rule("system-clock-wrong", g)
    assert findings == [] and skipped
