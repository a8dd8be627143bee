"""GNU ld's undefined references, in the languages binutils ships (knowledge/messages/ld_undefined.toml),
on real pastes: each is read as the library it names missing from the link line, and a paste that
holds nothing else is answered, not refused (issue 24)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import alarms, report_of
from hpcdoctor.triage.messages import find_messages

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PASTES = FIXTURES / "pastes"


def _read_text(text: str):
    return {s["id"] for s in find_messages(text, ["ld_undefined"])}


def _read(path: Path):
    return _read_text(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name, entry", [
    ("devvm-gcc12-ld240-undefined-omp", "openmp-runtime-not-linked"),        # GNU ld 2.40, recorded here
    ("positionbaseddynamics-74-ld-undefined-openmp", "openmp-runtime-not-linked"),  # ld before 2.31: "In function"
    ("nicp-6-shared-library-undefined-openmp", "openmp-runtime-not-linked"),  # a shared library's references
    ("opal-1205-ld-undefined-openmp-es", "openmp-runtime-not-linked"),        # Spanish: "referencia a `X' sin definir"
    ("ncnn-2865-ld-undefined-openmp-zh-cn", "openmp-runtime-not-linked"),     # Chinese: "对‘X’未定义的引用"
    ("ostep-code-18-ld-undefined-pthread", "pthread-library-not-linked"),
    ("chat-server-1-ld-undefined-pthread-fr", "pthread-library-not-linked"),  # French: « X »
    ("libfacedetection-302-dso-missing-openmp", "dso-missing-from-command-line"),
])
def test_a_real_link_failure_is_read_as_the_library_it_misses(name, entry):
    got = _read(PASTES / f"{name}.txt")
    assert f"ld_undefined:{entry}" in got, got
    # one reading per line: the catch-all never doubles a symbol that a library's entry owns
    assert "ld_undefined:symbol-not-linked" not in got, got


def test_the_dso_form_is_not_also_read_as_a_plain_reference_to_a_word():
    got = _read(PASTES / "libfacedetection-302-dso-missing-openmp.txt")
    assert got == {"ld_undefined:dso-missing-from-command-line"}, got


def test_gcc_own_in_function_context_is_not_read_as_the_linkers():
    # GCC's compile diagnostics open with "<file>: In function 'main':" too; only ld's follows an object
    text = ("src/thread2.cpp: In function 'int main()':\n"
            "src/thread2.cpp:23:66: warning: cast to pointer from integer of different size [-Wint-to-pointer-cast]\n")
    assert not _read_text(text)


def test_a_symbol_of_the_program_itself_is_read_by_the_catch_all():
    text = "main.o: In function `main':\nmain.c:(.text+0x1f): undefined reference to `solver_step'\n"
    assert _read_text(text) == {"ld_undefined:in-function-context", "ld_undefined:symbol-not-linked"}


def test_chinese_prose_with_the_words_alone_is_not_a_reference():
    # "对" opens ld's Chinese message only before a quote: a sentence using it is not read as one
    assert "ld_undefined:symbol-not-linked" not in _read_text("我对这个问题很困惑，一直报错未定义的引用\n")


@pytest.mark.parametrize("name", ["frcnn-8-link-libgomp-healthy", "libpabod-4-fopenmp-missing-healthy"])
def test_set_v_healthy_link_errors_are_answered_without_an_alarm(name):
    """Set V's two healthy controls (a user's own link line without -fopenmp, one in Chinese) were
    refused as unreadable; they are read now, with no error or warning: a build error is not the node's."""
    path = FIXTURES / "tickets_blind_v" / f"{name}.txt"
    doc = report_of("check", "--from", str(path))
    assert any("ld_undefined:openmp-runtime-not-linked" in r for r in doc["source"]["recognised"]), doc["source"]
    assert not alarms(path)
