"""python-headers-missing on a recording (gcc 12 compiling #include <Python.h> without headers) and
real public pastes (tests/fixtures/pastes/SOURCES.md); silent on another header's absence."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste", ["gcc-12-python-h-missing.txt", "restatic-2-psutil-python-h-missing.txt"])
def test_a_compile_that_finds_no_python_h_is_an_error(paste):
    (f,) = fired("python-headers-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and "development headers are not installed" in f.message
    assert "sudo apt-get install python3-dev" in f.fix and "sudo dnf install python3-devel" in f.fix


def test_the_python_version_in_the_include_path_names_its_package():
    (f,) = fired("python-headers-missing", recorded_paste_facts("psenet-104-python27-python-h-missing.txt"))
    assert "Python 2.7's development headers" in f.message and "python2.7-dev" in f.fix and "python2-devel" in f.fix


def test_inductors_warning_names_the_include_directory_it_looked_in():
    # torch 2.13.0 torch/_inductor/cpp_builder.py's warning, the directory filled in (frameworks.toml's example)
    text = "UserWarning: Can't find Python.h in /usr/include/python3.11\n"
    (f,) = fired("python-headers-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "Python 3.11's" in f.message and "python3.11-dev" in f.fix and "python3.11-devel" in f.fix


def test_silent_when_the_header_missing_is_mpis():
    assert not fired("python-headers-missing", recorded_paste_facts("gcc-12-mpi-h-missing.txt"))
