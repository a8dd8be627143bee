"""wheel-bundled-library-conflict on real pastes (tests/fixtures/pastes/SOURCES.md): a glibc heap abort
that the user says depends on import order is info, and a bare heap abort fires nothing."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts



@pytest.mark.parametrize("paste", [
    "open3d-1207-free-invalid-pointer-import-order.txt",
    "../tickets_blind_t/ngt-52-pip-opencv-wheel-library-conflict.txt",   # set T, unsealed
])
def test_heap_abort_that_follows_import_order_is_info(paste):
    (f,) = fired("wheel-bundled-library-conflict", recorded_paste_facts(paste))
    assert f.severity == "info" and "free(): invalid pointer" in f.message and "import order" in f.message
    assert "/proc/" in f.fix


def test_a_bare_heap_abort_fires_nothing():
    # shell_gpt#320: "free(): invalid pointer" alone, a program's bug as far as the paste shows
    assert not fired("wheel-bundled-library-conflict", recorded_paste_facts("shell-gpt-320-free-invalid-pointer.txt"))
