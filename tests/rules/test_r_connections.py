"""cpu-oversubscribed on R's "all connections are in use" (r_parallel.toml): a warning where the paste names
detectCores() as what sized the workers, info where it names nothing (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste", ["ssgsea2-0-32-detectcores-ignores-allocation.txt",
                                   "decent-10-all-connections-detectcores.txt"])
def test_workers_sized_by_detectcores_oversubscribe_the_allocation(paste):
    (f,) = fired("cpu-oversubscribed", recorded_paste_facts(paste))
    assert f.severity == "warning" and "detectCores()" in f.message and "allocation" in f.message
    assert "parallelly::availableCores()" in f.fix


def test_the_error_alone_is_only_quoted_at_info():
    (f,) = fired("cpu-oversubscribed", recorded_paste_facts("doubletdecon-17-all-connections-no-cores-named.txt"))
    assert f.severity == "info" and "128" in f.message
