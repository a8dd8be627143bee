"""tensorflow-wheel-unavailable on public pastes of pip's refusals (tests/fixtures/pastes, SOURCES.md
there), answered from PyPI's published tensorflow wheels (knowledge/tensorflow_wheels.toml)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor import knowledge



def test_a_jetson_with_python_36_has_no_tensorflow_wheel():
    (f,) = fired("tensorflow-wheel-unavailable", recorded_paste_facts("tensorflow-31058-no-aarch64-wheel-jetson-xavier.txt"))
    assert "from versions: none" in f.message and "Python 3.6" in f.message
    assert "this machine is Linux aarch64, whose wheels begin at 2.10.0" in f.message
    assert "-m venv" in f.fix and "tensorflow==" in f.fix


def test_a_pinned_release_missing_from_the_list_names_its_pythons():
    (f,) = fired("tensorflow-wheel-unavailable", recorded_paste_facts("watermark-removal-25-colab-tensorflow-1.15.txt"))
    assert "tensorflow 1.15.0 has no wheel for this interpreter" in f.message and "Python 2.7-3.7" in f.message
    assert "python3.7 -m venv ~/tf-py37 && ~/tf-py37/bin/pip install tensorflow==1.15.0" in f.fix


def test_the_table_is_pypis_files():
    rel = {r["version"]: r for r in knowledge.load("tensorflow_wheels")["release"]}
    assert "linux_aarch64" not in rel["2.9.0"] and rel["2.10.0"]["linux_aarch64"][0] == "3.7"
    assert "3.6" in rel["1.14.0"]["linux_x86_64"] and "macos_arm64" in rel["2.13.0"]


def test_torchs_refusal_and_a_tensorflow_install_that_worked_are_not_this_rule():
    torch = ("ERROR: Could not find a version that satisfies the requirement torch==1.13.1 (from versions: 2.2.0, 2.2.1)\n"
             "ERROR: No matching distribution found for torch==1.13.1\n")
    assert not fired("tensorflow-wheel-unavailable", told_facts(torch))
    assert not fired("tensorflow-wheel-unavailable", told_facts("Successfully installed tensorflow-2.15.0\n"))


def test_the_aarch64_build_tensorflow_requires_missing_for_a_pin_is_named():
    # tensorflow#60204 (set N): tensorflow==2.11.1 on Graviton pulls tensorflow-cpu-aws==2.11.1, which had no
    # wheel for that Python; pip's own list shows 2.11.0 and 2.12.0, which the reporter says install
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_n"
            / "tensorflow-60204-aarch64-wheel-missing-py310.txt").read_text()
    (f,) = fired("tensorflow-wheel-unavailable", told_facts(text))
    assert f.severity == "error" and "pip refused tensorflow-cpu-aws==2.11.1, which tensorflow requires where" in f.message
    assert "pip lists 2.9.1 to 2.12.0 for it, without 2.11.1" in f.message
    assert "pip install tensorflow==2.11.0" in f.fix and "pip install tensorflow==2.12.0" in f.fix


def test_a_release_candidate_whose_aarch64_build_is_missing():
    (f,) = fired("tensorflow-wheel-unavailable", recorded_paste_facts("tensorflow-59731-cpu-aws-rc-only-py311.txt"))
    assert "tensorflow-cpu-aws 2.12.0-rc0 has no file this interpreter can install" in f.message
    assert "pip install tensorflow==2.11.0" in f.fix and "tensorflow==2.12" not in f.fix

