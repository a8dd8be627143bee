"""knowledge/messages/libmalloc.toml on real macOS pastes (tests/fixtures/pastes, SOURCES.md there): each
wording of libmalloc's refused region gives its size in bytes, and heap corruption is the program's."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

PASTES = Path(__file__).resolve().parents[1] / "fixtures" / "pastes"


def _read(name: str) -> list:
    return [s for s in find_messages((PASTES / name).read_text()) if s["family"] == "libmalloc"]


@pytest.mark.parametrize("paste,key,size", [
    ("libmalloc-nwjs-1216-mach-vm-map-484mb.txt", "cant-allocate-region-old", 484315136),           # libmalloc <= 140
    ("libmalloc-pandas-8525-200tb-memoryerror.txt", "cant-allocate-region-old", 200447690256384),
    ("libmalloc-commandcenter-93-128tib-region.txt", "cant-allocate-region-flags", 140732750573568),  # >= 283.100.5
])
def test_each_refused_region_is_read_with_its_size(paste, key, size):
    (s,) = [s for s in _read(paste) if s["id"] != "libmalloc:set-breakpoint-malloc-error-break"]
    assert s["id"] == f"libmalloc:{key}" and int(s["bytes"]) == size and s["kr"] == "3"


def test_the_2019_wording_reads_its_size_too():
    # libmalloc-166 .. 283.60.1's malloc_zone_error format, as IIC2133-PUC/2019-2#50 shows it
    text = ("decode(27472,0x115ae15c0) malloc: can't allocate region\n"
            "*** mach_vm_map(size=18446744056529682432) failed (error code=3)\n")
    (s,) = [s for s in find_messages(text) if s["family"] == "libmalloc"]
    assert s["id"] == "libmalloc:cant-allocate-region" and s["bytes"] == "18446744056529682432"


def test_heap_corruption_is_the_programs_and_feeds_no_rule():
    (s,) = [s for s in _read("libmalloc-lsd2-13-incorrect-checksum.txt") if s["id"] != "libmalloc:set-breakpoint-malloc-error-break"]
    assert s["id"] == "libmalloc:incorrect-checksum-for-freed-object"
    fam = {f.id: f for f in messages.families()}["libmalloc"]
    refusals = {e.id for e in fam.entries if e.get("cause") == "resource"}
    for e in fam.entries:
        assert ("host-memory-insufficient" in e.get("rules", [])) <= (e.id in refusals), e.id
    assert fam.entries and all(e.get("cause") == "program" and not e.get("rules") for e in fam.entries
                               if "corrupt" in e.id or "free" in e.id and "segment" not in e.id)
