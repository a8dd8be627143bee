"""numpy-abi-mismatch on verbatim cuts of public threads (tests/fixtures/pastes, SOURCES.md there):
NumPy's, Cython's and torch's own words decide which way round the mismatch is, and so the fix."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import open_paste


def test_module_built_for_numpy1_under_numpy2_names_the_version_and_pins_below_2():
    (f,) = fired("numpy-abi-mismatch", recorded_paste_facts("motiongpt3-14-numpy1-module-on-numpy-2.3.txt"))
    # the message that names NumPy 2.3.0 (line 5), not the title's bare "_ARRAY_API not found"
    assert "NumPy 2.3.0" in f.message and "line 5" in f.message
    assert f.fix.startswith('python -m pip install "numpy<2"')


def test_torchs_warning_with_the_old_headers_reason():
    (f,) = fired("numpy-abi-mismatch", recorded_paste_facts("swarmui-205-torch-array-api-not-found.txt"))
    assert "compiled against NumPy 1.x" in f.message and '"numpy<2"' in f.fix


@pytest.mark.parametrize("paste, needs", [
    ("pytorch-413-numpy-api-0xa-on-0x9.txt", "1.10"),           # NumPy's RuntimeError, torch 0.1 on Python 2.7
    ("facechain-97-torch-numpy-api-0x10-on-0xf.txt", "1.23"),   # the same inside torch's "Failed to initialize NumPy"
    # NumPy 1.5-1.10 printed the versions without "0x" (generate_numpy_api.py "%%x"); the user's own quotes
    # around the line are not quoted twice
    ("matplotlib-1749-numpy-api-8-on-4-unprefixed.txt", "1.8"),
])
def test_module_built_for_a_newer_numpy1_asks_for_that_release_and_not_numpy2(paste, needs):
    (f,) = fired("numpy-abi-mismatch", recorded_paste_facts(paste))
    assert f"compiled against NumPy {needs} was imported under an older NumPy" in f.message and "\"\"" not in f.message
    # NumPy 2 would break the module the other way: the upgrade stays below it
    assert f.fix.startswith(f'python -m pip install "numpy>={needs},<2"')


def test_numpy_from_conda_is_answered_with_conda():
    # two real pastes attached together: a collect_env of a conda environment whose numpy came from the
    # defaults channel, and a NumPy 2 refusal
    with open_paste([str(PASTES / "pytorch-35646-pip-and-conda-same-torch-healthy.txt"),
                     str(PASTES / "motiongpt3-14-numpy1-module-on-numpy-2.3.txt")]) as (root, _r, _n):
        g = pipeline.gather(root, Options())
    (f,) = fired("numpy-abi-mismatch", g)
    assert f.fix.startswith('conda install -y "numpy<2"')


def test_the_generic_import_failure_alone_is_read_as_a_warning(tmp_path):
    # every cause of import_array's ImportError but a NumPy that cannot be imported is a mismatch
    # (numpy's generate_numpy_api.py); without the line that says which way it stays a warning
    text = (PASTES / "pytorch-413-numpy-api-0xa-on-0x9.txt").read_text().replace(
        "RuntimeError: module compiled against API version 0xa but this version of numpy is 0x9", "")
    found = find_messages(text)
    assert "numpy:multiarray-failed-to-import" in {s["id"] for s in found}
    from rulekit import paste_facts
    (f,) = fired("numpy-abi-mismatch", paste_facts(tmp_path, text))
    assert f.severity == "warning"


def test_silent_without_a_numpy_message():
    assert not fired("numpy-abi-mismatch", recorded_paste_facts("pytorch-35646-pip-and-conda-same-torch-healthy.txt"))
