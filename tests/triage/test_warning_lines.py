"""warninglines.toml: a program's warning line, by its emitter's own convention, is read and quoted
back as not in the catalogue (feeding no rule), so a paste that holds only a warning is answered, not
refused; and the specific families keep the warnings they know."""

from __future__ import annotations

import pytest

from conftest import check_from
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

# a form with several needles is loaded as one form per needle: one test per form's id
FORMS = list({f.id: f for f in next(fam for fam in messages.families() if fam.id == "warninglines").forms}.values())


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.id)
def test_each_forms_example_is_read_by_that_form(form):
    (s,) = find_messages(form.example + "\n")
    assert (s["id"], s["form"], s["emitter"]) == ("warninglines:unlisted", form.id, form.emitter)


def test_a_paste_holding_only_a_warning_is_answered_not_refused(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text("$ python train.py\n/home/u/train.py:12: DeprecationWarning: the frob argument is deprecated\n")
    run = check_from(path)
    assert run["rc"] == 0 and run["doc"]["findings"] == []
    said = " ".join(run["doc"]["source"]["recognised"])
    assert "a Python warning (the warnings module's format), not in hpcdoctor's catalogue" in said


def test_a_warning_a_specific_family_knows_keeps_its_entry():
    text = ("/content/recvis24_a3/main.py:36: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. "
            "Please use `torch.amp.autocast('cuda', args...)` instead.\n")
    assert [s["family"] for s in find_messages(text)] == ["torch_warnings"]


def test_torchs_c10_error_lines_are_errorlines():
    (s,) = find_messages("[rank3]:[E1126 09:06:31.489161483 ProcessGroupNCCL.cpp:1316] frobnication of rank 3 failed\n")
    assert (s["id"], s["form"]) == ("errorlines:unlisted", "c10-log")
    assert find_messages("the [E] key and foo.cpp:12] in a sentence\n") == []
