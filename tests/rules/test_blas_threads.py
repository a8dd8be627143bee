"""openblas-openmp-conflict (rules/blas_threads.py) on public pastes of OpenBLAS's own warning
(tests/fixtures/pastes, SOURCES.md there) and its format string at OpenBLAS v0.3.28; silent on
real pastes holding OpenBLAS's other words and on a thread-count note."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

WORMS_2 = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_f" / "worms-2-openblas-rlimit-nproc-512.txt"


@pytest.mark.parametrize("paste, line", [
    ("ezinstall-26-openblas-pthreads-in-openmp-loop.txt", 4),
    ("qiskit-aer-76-openblas-pthreads-in-openmp-warning.txt", 9),   # retyped: "OpenBLAS Warning: Detect ..."
])
def test_openblas_warning_is_read_and_the_fix_is_one_blas_thread(paste, line):
    (f,) = fired("openblas-openmp-conflict", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"(line {line}:" in f.message
    assert "called from inside OpenMP threads" in f.message
    assert f.fix.startswith("export OPENBLAS_NUM_THREADS=1") and "USE_OPENMP=1" in f.fix and "libopenblas0-openmp" in f.fix


def test_the_format_string_of_blas_server_is_read():
    # driver/others/blas_server.c @ v0.3.28 line 818, as fprintf prints it
    text = ("OpenBLAS Warning : Detect OpenMP Loop and this application may hang. "
            "Please rebuild the library with USE_OPENMP=1 option.\n")
    assert [s["id"] for s in find_messages(text)] == ["threads:openblas-openmp-loop"]
    assert fired("openblas-openmp-conflict", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def test_silent_on_openblas_other_words_and_on_a_live_node(tmp_path):
    assert not fired("openblas-openmp-conflict", paste_facts(tmp_path, WORMS_2.read_text()))
    assert not fired("openblas-openmp-conflict",
                     recorded_paste_facts("comfyui-fizznodes-83-numexpr-thread-note-healthy.txt"))
    assert not fired("openblas-openmp-conflict", facts("h100-kvm-1gpu"))
