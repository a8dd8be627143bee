"""Every knowledge table has a JSON schema beside it (hpcdoctor/knowledge/schema/) and follows it:
a table that loses an entry's source, or gains a value of the wrong kind, fails here and not in a
rule at a user's node."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import jsonschema
import pytest

from hpcdoctor import knowledge
from hpcdoctor.knowledge import messages

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

SCHEMAS = knowledge.KNOWLEDGE_DIR / "schema"
TABLES = sorted(p.stem for p in knowledge.KNOWLEDGE_DIR.glob("*.toml"))


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", TABLES)
def test_every_table_follows_its_schema(name):
    assert (SCHEMAS / f"{name}.json").is_file(), f"knowledge/{name}.toml has no schema/{name}.json"
    jsonschema.validate(knowledge.load(name), _schema(name))


@pytest.mark.parametrize("path", sorted(messages.MESSAGES_DIR.glob("*.toml")), ids=lambda p: p.stem)
def test_every_message_family_follows_the_catalogue_schema(path: Path):
    with open(path, "rb") as fh:
        jsonschema.validate(tomllib.load(fh), _schema("messages"))


def test_no_schema_without_its_table():
    assert {p.stem for p in SCHEMAS.glob("*.json")} - set(TABLES) == {"messages"}


@pytest.mark.parametrize("name, break_it", [
    ("torch_wheels", lambda d: d["wheel"][0].pop("source")),
    ("torch_wheels", lambda d: d["wheel"][0]["arch"].append("sm80")),
    ("gpus", lambda d: d["sku"][0].update(fp32="fast")),
    ("systems", lambda d: d["system"][0].update(read="last week")),
    ("thresholds", lambda d: d["shm"].pop("source")),
])
def test_a_broken_table_is_caught(name, break_it):
    data = copy.deepcopy(knowledge.load(name))
    break_it(data)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, _schema(name))
