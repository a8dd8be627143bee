"""The reporter registry: every format the command line offers is one render(doc) -> str, and
each renders a recorded node's report."""

from __future__ import annotations

import json

import pytest

from conftest import NODES, check_from
from hpcdoctor import cli_args, report


def test_the_command_line_offers_exactly_the_registered_formats():
    check = next(a for a in cli_args.build_parser()._subparsers._group_actions[0].choices["check"]._actions
                 if a.dest == "format")
    assert tuple(check.choices) == tuple(report.REPORTERS) == cli_args.FORMATS


@pytest.mark.parametrize("fmt", sorted(report.REPORTERS))
def test_each_reporter_renders_a_recorded_node(fmt):
    doc = check_from(NODES / "h100-kvm-1gpu", "--fail-on", "never")["doc"]
    text = report.render(doc, fmt)
    assert isinstance(text, str) and text.strip()
    if fmt == "json":
        assert json.loads(text)["findings"] == doc["findings"]
    else:  # every finding's code reaches the reader, whatever the format
        for f in doc["findings"]:
            assert f["code"] in text or f["symbol"] in text, (fmt, f["code"])


def test_an_unknown_format_is_refused():
    with pytest.raises(KeyError):
        report.reporter("yaml")
