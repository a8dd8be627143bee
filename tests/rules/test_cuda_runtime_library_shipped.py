"""cuda-runtime-library-missing where the paste's own ls -l shows the library under a longer
version name (ollama#602: libcudart.so.12.0 shipped, libcudart.so.12 asked for): the package's
missing SONAME link, said at info, not a CUDA runtime missing from the node; and the loader's error
without such a listing (CPCL#4, LLMDet#32) keeps its error."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


def test_a_listing_of_the_library_under_a_longer_version_is_the_packages_missing_link():
    (f,) = fired("cuda-runtime-library-missing", recorded_paste_facts("ollama-602-packaged-libcudart-name-healthy.txt"))
    assert f.severity == "info"
    assert "line 17 shows libcudart.so.12.0" in f.message and "without the libcudart.so.12 link" in f.message
    assert f.fix.startswith("find / -xdev -name 'libcudart.so.12.0' 2>/dev/null")
    assert "ln -s libcudart.so.12.0 libcudart.so.12" in f.fix


@pytest.mark.parametrize("paste", ["cpcl-4-libcudart-10-0-cuda-path.txt", "llmdet-32-libcudart-10-1-mmcv.txt"])
def test_the_loaders_error_without_a_listing_stays_an_error(paste):
    (f,) = fired("cuda-runtime-library-missing", recorded_paste_facts(paste))
    assert f.severity in (None, "error") and "longer version" not in f.message
