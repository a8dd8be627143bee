"""hpcdoctor.app: a Request in, the report document out, the same one the command line prints;
one budget table for every command."""

from __future__ import annotations

import pytest

from conftest import NODES, check_from
from hpcdoctor import app, budgets


def test_diagnose_a_request_gives_the_command_lines_report():
    node = NODES / "cpu-kvm-2core"
    doc = app.diagnose(app.Request(sources=(str(node),)))
    printed = check_from(node, "--fail-on", "never")["doc"]
    assert doc["source"] == {"mode": "replay", "path": str(node)}
    assert [f["code"] for f in doc["findings"]] == [f["code"] for f in printed["findings"]]
    assert doc["findings"], "the recorded CPU node has findings; an empty list would prove nothing"


def test_select_and_ignore_reach_the_rules():
    node = str(NODES / "cpu-kvm-2core")
    every = {f["code"] for f in app.diagnose(app.Request(sources=(node,)))["findings"]}
    one = sorted(every)[0]
    assert {f["code"] for f in app.diagnose(app.Request(sources=(node,), select=(one,)))["findings"]} == {one}
    assert one not in {f["code"] for f in app.diagnose(app.Request(sources=(node,), ignore=(one,)))["findings"]}


@pytest.mark.parametrize("command,bench,expected", [
    ("check", None, budgets.COMMAND["check"]), ("nhc", None, budgets.COMMAND["nhc"]),
    ("snapshot", None, budgets.COMMAND["snapshot"]), ("env", None, budgets.COMMAND["env"]),
    ("check", "quick", budgets.BENCH["quick"]), ("check", "full", budgets.BENCH["full"]),
])
def test_each_command_takes_its_budget_from_the_one_table(command, bench, expected):
    opts = app.options(app.Request(command=command, bench=bench))
    assert opts.budget == expected
    assert opts.depth == ("deep" if bench else "fast")


def test_a_snapshot_and_pastes_together_are_refused_in_one_line():
    with pytest.raises(app.RequestError, match="one snapshot"):
        app.diagnose(app.Request(sources=(str(NODES / "cpu-kvm-2core"), "-")))


@pytest.mark.parametrize("budget", [0.0, -1.0, float("nan"), float("inf")])
def test_a_budget_that_bounds_nothing_is_refused(budget):
    with pytest.raises(app.RequestError):
        app.options(app.Request(budget=budget))
