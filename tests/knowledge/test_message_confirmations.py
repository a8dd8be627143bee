"""An entry's `confirmed_by` (the public documents its text was checked against, issue 24) and
`sdk_message` (the emitter source's text a document's replaced): held to the schema and to each
other, and flexlm.toml's header count of SDK-only entries held to the entries themselves."""

from __future__ import annotations

import copy
import json
import re
import sys

import jsonschema
import pytest

from hpcdoctor import knowledge
from hpcdoctor.knowledge import messages

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

FLEXLM = messages.MESSAGES_DIR / "flexlm.toml"
SCHEMA = json.loads((knowledge.KNOWLEDGE_DIR / "schema" / "messages.json").read_text(encoding="utf-8"))


def _flexlm() -> dict:
    with open(FLEXLM, "rb") as fh:
        return tomllib.load(fh)


def _entry(data: dict, code: int) -> dict:
    return next(e for e in data["entry"] if e.get("code") == code)


@pytest.mark.parametrize("break_it", [
    lambda e: e.update(confirmed_by=["the FlexNet End User Guide"]),  # a document without its address
    lambda e: e.update(confirmed_by=[]),
    lambda e: e.update(confirmed_by="https://docs.revenera.com/"),    # one string, not a list
    lambda e: e.update(sdk_message=""),
])
def test_a_confirmation_without_its_document_is_refused_by_the_schema(break_it):
    data = copy.deepcopy(_flexlm())
    break_it(_entry(data, 15))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_a_replaced_text_must_name_the_document_that_replaced_it(tmp_path):
    data = _flexlm()
    assert _entry(data, 8).get("sdk_message") and _entry(data, 8).get("confirmed_by")
    text = FLEXLM.read_text(encoding="utf-8")
    # drop -8's confirmed_by block: its sdk_message is left with no document behind it
    cut = re.sub(r'(?s)(code = 8\n.*?sdk_message = [^\n]*\n)confirmed_by = \[\n.*?\n\]\n', r"\1", text, count=1)
    assert cut != text
    (tmp_path / "flexlm.toml").write_text(cut, encoding="utf-8")
    got = messages.problems(messages._family(tmp_path / "flexlm.toml"))
    assert got == ["flexlm.toml entry LM_BADCODE: sdk_message without confirmed_by: which document gave the text "
                   "that replaced it?"]


def test_the_sdk_only_count_in_flexlms_header_is_the_entries_without_a_document():
    data = _flexlm()
    header = FLEXLM.read_text(encoding="utf-8").split("[family]", 1)[0]
    said = re.search(r"SDK-only: (\d+) of the (\d+) entries", header)
    assert said, "flexlm.toml's header says how many entries no document confirms"
    sdk_only = [e for e in data["entry"] if not e.get("confirmed_by")]
    assert (int(said.group(1)), int(said.group(2))) == (len(sdk_only), len(data["entry"]))


def test_a_replaced_message_is_still_read_by_its_code():
    # the forms key on the code: -8 with the document's text is found where a program prints -8
    from hpcdoctor.triage.messages import find_messages
    got = [s for s in find_messages("Licensing error: -8,544.\n") if s["family"] == "flexlm"]
    assert [s["id"] for s in got] == ["flexlm:LM_BADCODE"]
    assert got[0]["means"].startswith("the license key or signature")
