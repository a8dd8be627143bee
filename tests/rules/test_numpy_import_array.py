"""numpy-abi-mismatch on NumPy's closing ImportError alone ("numpy.core.multiarray failed to import",
numpy's generate_numpy_api.py import_array): a warning, on real public pastes (tests/fixtures/pastes,
SOURCES.md there); a line that says which way keeps the error."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


@pytest.mark.parametrize("paste,line", [("optbinning-85-numpy-multiarray-stale-numpy.txt", 1),
                                        ("anaconda-support-71-cv2-multiarray-failed.txt", 1)])
def test_the_closing_import_error_alone_is_a_warning(paste, line):
    (f,) = fired("numpy-abi-mismatch", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"line {line}" in f.message and "another NumPy" in f.message
    assert "numpy.__file__" in f.fix and "pip check" in f.fix


def test_a_line_that_says_which_way_keeps_the_error():
    # pytorch-413: "module compiled against API version 0xa but this version of numpy is 0x9" before it
    (f,) = fired("numpy-abi-mismatch", recorded_paste_facts("pytorch-413-numpy-api-0xa-on-0x9.txt"))
    assert f.severity == "error"


@pytest.mark.parametrize("text", ["ImportError: numpy.core.umath failed to import\n",
                                  "ImportError: numpy._core.multiarray failed to import\n",
                                  "AttributeError: _UFUNC_API not found\n"])
def test_every_import_array_wording(tmp_path, text):
    # the format strings of numpy v1.26.4 / v2.3.5 generate_numpy_api.py and generate_ufunc_api.py
    assert fired("numpy-abi-mismatch", paste_facts(tmp_path, text))


@pytest.mark.parametrize("text", ["RuntimeError: FATAL: module compiled as little endian, but detected different endianness at runtime\n",
                                  "ImportError: numpy.core._multiarray_umath failed to import\n"])
def test_a_byte_order_or_a_missing_numpy_is_not_a_version_mismatch(tmp_path, text):
    findings, _ = run_rule("numpy-abi-mismatch", paste_facts(tmp_path, text))
    assert findings == []
