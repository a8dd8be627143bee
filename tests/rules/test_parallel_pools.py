"""parallel-pool-ports-blocked on MATLAB's own words (knowledge/messages/matlab.toml), replayed from
public pastes (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_a_port_range_that_cannot_be_bound_names_the_bind_error():
    (f,) = fired("parallel-pool-ports-blocked", recorded_paste_facts("spinach-25-matlab-pool-port-range-bind-failed.txt"))
    assert f.severity == "error" and "[27370 28370]" in f.message and "::1:28370: Cannot assign requested address" in f.message
    assert "on no interface of this machine" in f.message and "pctconfig('hostname'" in f.fix


def test_the_catapult_endpoint_that_cannot_be_bound_is_the_same_cause():
    (f,) = fired("parallel-pool-ports-blocked", recorded_paste_facts("csdn-139688102-matlab-pool-no-ports-to-bind.txt"))
    assert "line 10" in f.message and "2968710" in f.message and "portrange" in f.fix


def test_silent_without_the_pools_own_words():
    # MATLAB driving xterms over ssh: a MATLAB user's paste, no pool port in it
    assert not fired("parallel-pool-ports-blocked", recorded_paste_facts("unix-se-117159-xterm-forwarded-display-refused.txt"))
