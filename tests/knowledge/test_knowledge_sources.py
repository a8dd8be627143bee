"""Every entry of the wheel tables the resolver installs from carries its source and the date it
was read (issue 27): an entry without one is a figure from memory, and the resolver would print a
fix built on it. The schema requires both; these tests hold the shipped table to it and show that a
dateless or sourceless entry of each kind is caught."""

from __future__ import annotations

import copy
import json
import re

import jsonschema
import pytest

from hpcdoctor import knowledge

SCHEMA = json.loads((knowledge.KNOWLEDGE_DIR / "schema" / "torch_wheels.json").read_text(encoding="utf-8"))
KINDS = ("wheel", "rocm_wheel", "python", "companion")
# Words that mark a value nobody read anywhere (how earlier guesses were labelled).
UNREAD = re.compile(r"\b(?:from memory|as remembered|assumed|guess(?:ed)?|TODO)\b", re.I)


def test_every_entry_names_its_source_and_read_date():
    table = knowledge.load("torch_wheels")
    seen = 0
    for kind in KINDS:
        for entry in table.get(kind) or []:
            seen += 1
            where = f"[[{kind}]] torch {entry.get('torch')}"
            assert len(str(entry.get("source") or "")) >= 8, where
            assert re.fullmatch(r"20\d\d-\d\d-\d\d", str(entry.get("read") or "")), where
            assert not UNREAD.search(entry["source"]), where
    assert seen >= 60  # the four kinds are all there (24 + 19 + 16 + 11 when written)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("field", ["source", "read"])
def test_an_entry_without_its_source_or_date_is_refused(kind, field):
    data = copy.deepcopy(knowledge.load("torch_wheels"))
    data[kind][0].pop(field)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_torch_27_cu128_carries_sm_120_ptx():
    from hpcdoctor.knowledge import wheels

    assert "compute_120" in wheels.wheel_arch_list("2.7.0+cu128")["arch"]
    assert "compute_120" not in wheels.wheel_arch_list("2.8.0+cu128")["arch"]  # +PTX left with 2.8 (#157516)


def test_the_python_lists_reach_the_releases_pypi_lists():
    from hpcdoctor.knowledge import releases

    assert releases.has_wheels_for("2.14", "3.10") is True and releases.has_wheels_for("2.14", "3.9") is False
    assert releases.has_wheels_for("2.15", "3.10") is False
    assert releases.has_wheels_for("2.16", "3.12") is None  # not in the table: unknown, never guessed
