"""module-unknown (ENV015): an Lmod name typed with its modulefile's .lua suffix is the name, not a
missing module (TACC/Lmod#200)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


def test_a_name_with_the_lua_suffix_is_answered_with_the_bare_name():
    [hit] = fired("module-unknown", recorded_paste_facts("lmod-200-module-name-with-lua-suffix.txt"))
    assert hit.severity == "info" and "module load gcc/6.2.0 " in hit.fix + " "


def test_a_plain_unknown_name_stays_an_error():
    g = told_facts("Lmod has detected the following error:  The following module(s) are unknown: \"gcc/6.2.9\"\n")
    [hit] = fired("module-unknown", g)
    assert hit.severity == "error"
    assert not fired("module-not-loadable", g)
