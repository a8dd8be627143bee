"""The message catalogues (hpcdoctor/knowledge/messages/*.toml) held to their schema, every
example read back as its own entry, and the matcher's behaviour on wrapped, unlisted and huge input."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hpcdoctor import engine
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import MAX_PER_FAMILY, find_messages, find_unlisted_errors

FAMILIES = messages.families()


def _known_rules() -> frozenset:
    rules, _ = engine.load_rules()
    return frozenset(r.symbol for r in rules)


@pytest.mark.parametrize("fam", FAMILIES, ids=[f.id for f in FAMILIES])
def test_family_follows_the_schema(fam):
    assert messages.problems(fam, _known_rules()) == []


def _examples():
    for fam in FAMILIES:
        named = set()
        for form in fam.forms:
            if form.example and form.id not in named:  # a form of several needles: one example
                named.add(form.id)
                yield pytest.param(fam, form if not fam.entries else None, form.example, id=f"{fam.id}-form-{form.id}")
        for entry in fam.entries:
            if entry.get("example"):
                yield pytest.param(fam, entry, str(entry.get("example")), id=entry.id)


@pytest.mark.parametrize("fam, entry, example", list(_examples()))
def test_every_example_is_read_as_its_own_entry_only(fam, entry, example):
    # a listing (all = true: every NCCL WARN line) gathers lines that are other entries' messages
    # A generic family's form yields a line to any specific family that reads it (errorlines' "FATAL: "
    # to apptainer.toml's own entry): the form is tried on its family alone. A specific family reads
    # the same lines whichever families run beside it (find_messages: only generic families skip what
    # others read), so it is tried alone too; a generic family's entries are tried with every family.
    alone = not fam.generic or isinstance(entry, messages.Form)
    got = [s for s in find_messages(example, families=[fam.id] if alone else None) if s["family"] == fam.id
           and not (s.get("listing") and (entry is None or s["id"] != entry.id))]
    if isinstance(entry, messages.Form):
        # a family of forms only (errorlines): its example is read by that form, naming its emitter,
        # and by no other form of the family
        assert [(s.get("form"), s.get("emitter")) for s in got] == [(entry.id, entry.emitter)], (example, got)
    elif entry is None:  # a form's example: read as some listed entry of the family, not as unlisted
        assert got and not any(s.get("unlisted") for s in got), (example, got)
    else:
        assert sorted({s["id"] for s in got}) == [entry.id], (example, got)


def test_family_ids_are_unique():
    ids = [f.id for f in FAMILIES]
    assert len(ids) == len(set(ids))


# The matcher's own behaviour, on a family written for the test (the shipped files change; these
# properties must not).
_FAMILY = '''
[family]
id = "demo"
title = "demo errors"
source = "test family"
read = "2026-11-25"

[[form]]
id = "said"
needle = "DEMO error: "
pattern = 'DEMO error: (?P<message>[^\\n]{1,200})'
key = "message"
source = "test"

[[form]]
id = "numbered"
needle = "demo code "
pattern = 'demo code (?P<code>\\d{1,4})'
key = "code"
source = "test"

[[entry]]
key = "demoNoImage"
code = 209
message = "no kernel image is available for execution on the device"
means = "no code for this GPU"
cause = "build"
rules = []

[[entry]]
key = "demoNoImageShort"
code = 210
message = "no kernel image"
means = "a shorter message that is a prefix of the other"
cause = "build"
rules = []

[[entry]]
key = "demo-wrapped"
needle = "is killed by signal"
pattern = 'DataLoader worker \\(pid \\d{1,10}\\) is killed by signal: Bus error'
means = "a worker died of SIGBUS"
cause = "resource"
source = "test"
rules = []
'''


def _only(text, tmp_path, monkeypatch):
    """The catalogues as one test family, ``text``, in place of the shipped ones."""
    (tmp_path / "demo.toml").write_text(text, encoding="utf-8")
    monkeypatch.setattr(messages, "MESSAGES_DIR", tmp_path)
    messages.families.cache_clear()
    yield tmp_path
    messages.families.cache_clear()


@pytest.fixture
def demo(tmp_path, monkeypatch):
    yield from _only(_FAMILY, tmp_path, monkeypatch)


def test_longest_message_wins_and_the_window_runs_on(demo):
    (s,) = find_messages("RuntimeError: DEMO error: no kernel image is available for execution on the device\n"
                         "DEMO kernel errors might be asynchronously reported\n")
    assert s["id"] == "demo:demoNoImage" and s["line"] == 1 and s["code"] == 209


def test_a_message_wrapped_by_a_mail_client_is_read(demo):
    text = "the job died:\nERROR: DataLoader worker (pid 4711) is killed by signal: Bus\nerror. It is possible that\n"
    (s,) = find_messages(text)
    assert s["id"] == "demo:demo-wrapped" and s["line"] == 2


def test_an_unknown_message_of_a_known_form_is_quoted_as_unlisted(demo):
    (s,) = find_messages("x\nDEMO error: the flux capacitor is misaligned\n")
    assert s["id"] == "demo:unlisted" and s["unlisted"] and "flux capacitor" in s["captured"]


def test_two_errors_on_neighbouring_lines_are_both_read(demo):
    got = find_messages("demo code 209\ndemo code 210\n")
    assert [s["id"] for s in got] == ["demo:demoNoImage", "demo:demoNoImageShort"]


def test_a_word_that_only_starts_like_a_message_is_not_it(demo):
    (s,) = find_messages("DEMO error: no kernel imagery here\n")
    assert s["id"] == "demo:unlisted"


def test_findings_per_family_are_bounded(demo):
    text = "".join(f"DEMO error: unknown thing {i}\n" for i in range(500))
    assert len(find_messages(text)) == MAX_PER_FAMILY


def test_a_huge_paste_is_read_in_linear_time(demo):
    line = "DEMO error: " + "x" * 3000 + "\n"

    def cost(n: int) -> float:
        t = time.perf_counter()
        find_messages(line * n + "demo code 209\n")
        return time.perf_counter() - t

    small, large = cost(500), cost(4000)
    assert large < 8 * 5 * max(small, 0.01), (small, large)  # 8x the input; quadratic would be 64x


def test_an_unbounded_pattern_is_refused(demo):
    (demo / "demo.toml").write_text(_FAMILY.replace("{1,200}", "+"), encoding="utf-8")
    messages.families.cache_clear()
    (fam,) = messages.families()
    assert any("unbounded" in p for p in messages.problems(fam))


def test_a_pattern_that_does_not_compile_is_a_problem_of_its_family(demo):
    # Patterns compile when first searched with; the schema check compiles every one, so a broken
    # shipped pattern fails the catalogue test instead of a user's triage.
    (demo / "demo.toml").write_text(_FAMILY.replace("(?P<code>", "(?P<code"), encoding="utf-8")
    messages.families.cache_clear()
    (fam,) = messages.families()
    assert any("numbered" in p and "does not compile" in p for p in messages.problems(fam))


def test_error_lines_no_catalogue_knows_are_quoted_back():
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
            "ValueError: the flux capacitor is misaligned\nSegmentation fault (core dumped)\n")
    got = find_unlisted_errors(text, [])
    assert [(s["line"], s["id"]) for s in got] == [(3, "unlisted-error"), (4, "unlisted-error")]
    assert find_unlisted_errors(text, [{"line": 3}, {"line": 4}]) == []
    # the message read on a traceback's raise line covers the same words on its last line
    assert [s["line"] for s in find_unlisted_errors(text, [{"line": 1, "matched": "the flux capacitor is misaligned"}])] == [4]


def test_failure_messages_in_a_programs_words_are_quoted_back_and_prose_is_not():
    text = ("perfctr: Cannot get access to the flux registers. Please check permissions\n"
            "Can't open frobnicator DB: /scratch/x/db\n"
            "GIZMO ERROR gizmo.cu: 141 something odd\n"
            "WIDGET FATAL: I/O error on /dev/widget0\n"
            "I cannot get it to work on our cluster\n"
            "Could not find the file, can you help?\n"
            "The build failed to link after the upgrade\n"
            "# Cannot kill container running with failed GPU\n")
    got = find_unlisted_errors(text, [])
    assert [s["line"] for s in got] == [1, 2, 3, 4]
    assert all(s["emitter"] == "a line shaped like a program's failure message" for s in got)
    assert find_unlisted_errors(text, [{"line": 1}, {"line": 2}, {"line": 3}, {"line": 4}]) == []


def test_messages_directory_ships_with_the_package():
    assert messages.MESSAGES_DIR == Path(messages.__file__).parent / "messages"
    assert (messages.MESSAGES_DIR / "README.md").is_file()


def test_a_familys_id_is_its_file_name_so_a_check_can_load_only_the_families_it_reads():
    for fam in FAMILIES:
        assert fam.id == fam.path.stem, (fam.path.name, fam.id)
    only = messages.families(("edac", "xid"))
    assert [f.id for f in only] == ["edac", "xid"]
    assert only[1] is next(f for f in FAMILIES if f.id == "xid")  # parsed once, shared


# A family of forms only, as errorlines.toml is: every match quoted back with its form's emitter.
_CONVENTIONS = '''
[family]
id = "demo"
title = "demo error lines"
source = "test family"
read = "2026-11-26"
generic = true

[[form]]
id = "prefix"
emitter = "a demo tool's error"
needles = ["E: ", "Err: "]
line = true
anchored = true
pattern = '(?:E|Err): (?P<message>[A-Z][^\\n]{1,100})'
key = "message"
source = "test"

[[form]]
id = "tail"
emitter = "a demo tool's trailer"
needle = "DEMO "
anchored = true
pattern = 'DEMO (?P<message>[^\\n]{1,100}?) Stacktrace:'
key = "message"
source = "test"
'''


@pytest.fixture
def conventions(tmp_path, monkeypatch):
    yield from _only(_CONVENTIONS, tmp_path, monkeypatch)


def test_an_anchored_form_reads_its_prefix_only_where_the_line_starts(conventions):
    got = find_messages("E: Unable to locate package foo\nthe tool said E: Unable to locate package bar\n  Err: Bad thing\n")
    assert [(s["line"], s["form"], s["captured"]) for s in got] == [(1, "prefix", "Unable to locate package foo"),
                                                                      (3, "prefix", "Bad thing")]
    assert got[0]["means"] == "a demo tool's error, not in hpcdoctor's catalogue" and got[0]["id"] == "demo:unlisted"


def test_an_anchored_window_form_reads_the_lines_below_its_own(conventions):
    (s,) = find_messages("DEMO the thing broke\nStacktrace:\n [1] f()\n")
    assert (s["line"], s["form"], s["captured"]) == (1, "tail", "the thing broke")
    assert find_messages("DEMO the thing broke\nno trace here\n") == []


def test_a_family_of_forms_only_must_name_each_emitter(conventions):
    (conventions / "demo.toml").write_text(_CONVENTIONS.replace('emitter = "a demo tool\'s error"\n', ""), encoding="utf-8")
    messages.families.cache_clear()
    (fam,) = messages.families()
    assert any("prefix" in p and "emitter" in p for p in messages.problems(fam))
