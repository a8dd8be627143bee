"""Python's own error lines, read wherever users paste them (knowledge/python_exceptions.toml):
a traceback's last line behind a log's or a quote's prefix, a built-in exception quoted inside a
sentence or a title, and a traceback cut before its last line, which still shows that a Python
program raised (issue 24: "no refusal of a paste that holds any recognised line"). Replayed from
set U's public tickets (unsealed) and the corpus pastes (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import builtins

import pytest

from conftest import FIXTURES, check_from
from hpcdoctor import knowledge
from hpcdoctor.triage.messages import find_messages, find_unlisted_errors

U = FIXTURES / "tickets_blind_u"   # set U, unsealed on 2026-11-27
PASTES = FIXTURES / "pastes"
TABLE = knowledge.load("python_exceptions")


def _unlisted(path):
    text = path.read_text(encoding="utf-8")
    found = find_messages(text)
    return {s["line"]: s for s in find_unlisted_errors(text, found)}


def test_the_table_names_every_builtin_exception_of_the_python_running_the_tests():
    # CI runs this on the oldest supported Python and the default one: a class a new Python adds
    # fails here until the table has it
    running = {n for n, o in vars(builtins).items()
               if isinstance(o, type) and issubclass(o, BaseException) and not issubclass(o, Warning) and not n.startswith("_")}
    listed = set(TABLE["builtins"]["names"]) | set(TABLE["builtins"]["not_errors"])
    assert running - listed == set()
    assert not set(TABLE["builtins"]["names"]) & set(TABLE["builtins"]["not_errors"])


# (paste, line, what the reply quotes)
READ = [
    # a log collector's timestamp glued to the traceback's last line
    ("numexpr-421-omp-num-threads-list-unsupported.txt", 17, "ValueError: invalid literal for int() with base 10: '4,3,2'"),
    # a built-in exception quoted in the title
    ("numexpr-421-omp-num-threads-list-unsupported.txt", 1, "throws ValueError: invalid literal for int()"),
    # ... and inside a sentence, opened by Markdown's bold-italic
    ("cmt-9-flash-attention-unsupported-on-v100.txt", 3, "RuntimeError: Expected is_sm8x || is_sm75 to be true"),
]


@pytest.mark.parametrize("paste, line, words", READ, ids=[f"{r[0].split('-')[0]}-{r[1]}" for r in READ])
def test_a_python_error_line_is_read_wherever_it_is_quoted(paste, line, words):
    # the generic reader alone (no catalogue read the paste): since set U's classes were built, a
    # catalogue reads some of these lines first, and the generic reader then leaves them to it
    text = (U / paste).read_text(encoding="utf-8")
    got = {s["line"]: s for s in find_unlisted_errors(text, [])}
    assert line in got and words in got[line]["text"], got
    run = check_from(U / paste)
    assert run["rc"] != 2 and run["doc"] is not None, run["stderr"]
    assert any(f": line {line}: " in r for r in run["doc"]["source"]["recognised"])


def test_a_traceback_cut_before_its_last_line_is_quoted_back_by_its_header():
    # dask-jobqueue#207: the paste stops inside the stack; dask-jobqueue#382: IPython's header names the class
    got = _unlisted(U / "dask-jobqueue-207-ib0-without-ipv4-on-workers.txt")
    assert [(n, s["emitter"]) for n, s in got.items()] == [(6, "a Python traceback with no exception line after it in the paste")]
    got = _unlisted(U / "dask-jobqueue-382-interface-differs-login-compute.txt")
    assert [(n, s["emitter"]) for n, s in got.items()] == [
        (26, "a Python traceback of ValueError (IPython's header) with no exception line after it in the paste")]
    for paste in ("dask-jobqueue-207-ib0-without-ipv4-on-workers.txt", "dask-jobqueue-382-interface-differs-login-compute.txt"):
        run = check_from(U / paste)
        assert run["rc"] != 2 and run["doc"] is not None, run["stderr"]
        # a Python error line fires no rule by itself
        assert [f["symbol"] for f in run["doc"]["findings"] if f["severity"] in ("error", "warning")] == []


# Tracebacks whose exception line is in the paste, behind what printed them: never called cut.
WHOLE = [
    ("torch-2.13-tcpstore-server-exited.txt", "a module-qualified class, its words read by torch's catalogue"),
    ("tensorflow-17689-import-libcudnn-so-6.txt", "a chained traceback inside 'ImportError: Traceback ...'"),
    ("torchrun-2.13-rank1-fails-childfailederror.txt", "torchrun's 'traceback : ' field, the class indented less than the frames"),
    ("offline-vm-requests-get.txt", "a last line longer than 300 characters"),
    ("slurm-e3sm-diags-284-submit-filter-no-supported-policy.txt", "a bare 'Exception'"),
]


@pytest.mark.parametrize("paste, why", WHOLE, ids=[w[0].split("-")[0] for w in WHOLE])
def test_a_whole_traceback_is_not_called_cut(paste, why):
    got = _unlisted(PASTES / paste)
    assert not [s for s in got.values() if "traceback" in s.get("emitter", "")], (why, got)


def test_a_log_prefix_on_every_line_is_set_aside_and_a_real_cut_still_shows():
    # docker compose's "face_1  | " before each line of a traceback the paste cut after two frames
    got = _unlisted(PASTES / "insightface-rest-84-trt-plan-library-version.txt")
    assert [n for n, s in got.items() if "traceback" in s.get("emitter", "")] == [5]


def test_an_except_clause_is_not_an_error_line():
    # bonito#157 (a healthy control): "    except OSError:" in the quoted source is code, not an error;
    # the title's "OSError: Unable to open file ..." is one
    got = _unlisted(FIXTURES / "tickets_blind_r" / "bonito-157-corrupted-input-file-healthy.txt")
    text = (FIXTURES / "tickets_blind_r" / "bonito-157-corrupted-input-file-healthy.txt").read_text(encoding="utf-8")
    assert "    except OSError:" in text.splitlines()[14]
    assert 15 not in got
