"""Sizes as the emitters print them, in GiB (hpcdoctor.parse.sizes): the spellings are taken from
real pastes in tests/fixtures (torch's "Tried to allocate 108.00 MiB", TensorFlow 1.x's
"totalMemory: 7.92GiB freeMemory: 6.59GiB", R's "cannot allocate vector of size 4.5 Gb", NumPy's
"Unable to allocate 201. GiB")."""

from __future__ import annotations

import pytest

from hpcdoctor.parse.sizes import gib, parse_gib, unit_gib


@pytest.mark.parametrize("text,expected", [
    ("108.00 MiB", 108 / 1024), ("13.31 GiB", 13.31), ("7.92GiB", 7.92), ("6.59GiB", 6.59),
    ("0 bytes", 0.0), ("1.50 KiB", 1.5 / 1024 ** 2), ("512B", 512 / 1024 ** 3), ("4.5 Gb", 4.5), ("201. GiB", 201.0),
    ("2 TiB", 2048.0),
])
def test_sizes_in_powers_of_1024(text, expected):
    assert parse_gib(text) == pytest.approx(expected)


@pytest.mark.parametrize("text", ["", "MiB", "12 Mbit", "x GiB", "1.5 gigs", "-3 GiB", "1e9 B", "9" * 20 + " B"])
def test_what_is_not_a_size_is_none(text):
    assert parse_gib(text) is None


def test_units_alone():
    assert unit_gib("GB") == unit_gib("GiB") == unit_gib("Gb") == 1.0
    assert unit_gib("bytes") == unit_gib("B") == 2.0 ** -30
    assert unit_gib("Gbit") is None and unit_gib("") is None and unit_gib("%") is None
    assert gib(3, "MB") == pytest.approx(3 / 1024) and gib(3, "furlong") is None
