"""Which Python a pip listing of torch releases belongs to, and which CUDA builds a release has
(hpcdoctor.knowledge.releases / wheels over knowledge/torch_wheels.toml): the release Python lists are
pytorch/test-infra's build matrix at each release's go-live commit, the CUDA variants the wheel tables."""

from __future__ import annotations

import pytest

from hpcdoctor.knowledge import releases, wheels


@pytest.mark.parametrize("python,first,last", [
    ("3.8", "2.0", "2.4"),     # cp38 gone in 2.5's matrix
    ("3.9", "2.0", "2.8"),     # cp39 gone in 2.9's
    ("3.12", "2.2", None),     # 2.0 and 2.1 stop at 3.11
    ("3.13", "2.6", None),
    ("3.14", "2.9", None),
    ("3.7", None, None),       # no torch 2.x at all
])
def test_first_and_last_release_of_each_python(python, first, last):
    assert releases.first_release_for(python) == first
    if last:
        assert releases.last_release_for(python) == last
    if first is None:
        assert releases.last_release_for(python) is None


def test_a_listing_that_starts_at_a_pythons_first_release_names_that_python():
    # ImageBind#139's "from versions": 2.2.0 ... 2.7.1 (2.0/2.1 would be listed for any Python they have)
    listed = "2.2.0, 2.2.1, 2.2.2, 2.3.0, 2.3.1, 2.4.0, 2.4.1, 2.5.0, 2.5.1, 2.6.0, 2.7.0, 2.7.1".split(", ")
    assert releases.python_of_listing(listed) == ["3.12"]
    assert releases.python_of_listing(["2.6.0", "2.7.1"]) == ["3.13"]


def test_a_listing_that_cannot_tell_the_python_says_every_one_it_fits():
    # 2.0.x alone: any of 3.8-3.11; from before the tables (1.11.0) the start says nothing, but 2.7
    # (no cp38) and 2.0 (no cp312) still bound it
    assert releases.python_of_listing(["2.0.0", "2.0.1"]) == ["3.8", "3.9", "3.10", "3.11"]
    assert releases.python_of_listing(["1.11.0", "2.0.0", "2.7.1"]) == ["3.9", "3.10", "3.11"]
    assert releases.python_of_listing(["1.13.1", "0.1.2"]) == []


def test_cuda_builds_of_a_release_per_platform():
    assert wheels.cuda_variants("2.0") == ["11.7", "11.8"]
    assert wheels.cuda_variants("2.1") == ["11.8", "12.1"]
    assert wheels.cuda_variants("2.1", "windows") == ["11.8", "12.1"]
    # a release past the tables, and a platform without CUDA wheels in them, are not invented
    assert wheels.cuda_variants("2.15") == []
    assert wheels.cuda_variants("2.1", "macos", "arm64") == []


@pytest.mark.parametrize("tag,cuda", [("cu121", "12.1"), ("cu92", "9.2"), ("cu110", "11.0"), ("cpu", None),
                                      ("rocm6.2", None), ("", None)])
def test_cuda_of_a_local_version_tag(tag, cuda):
    assert wheels.cuda_of_tag(tag) == cuda
    if cuda:
        assert wheels.cuda_tag(cuda) == tag
