"""The needle index (hpcdoctor.triage.scan.NeedleIndex) answers exactly as a search of the text
would, for every catalogue needle, on the real pastes of the ticket corpus: it may only skip
searches, never change what is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.knowledge import messages
from hpcdoctor.triage.scan import NeedleIndex, NeedleSet, lower

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "tickets"
NEEDLES = sorted({n.lower() for fam in messages.families()
                  for n in [f.needle for f in fam.forms] + [x for e in fam.entries if e.pattern is not None for x in e.needles]})


@pytest.mark.parametrize("paste", sorted(CORPUS.glob("*.txt")), ids=lambda p: p.stem[:40])
def test_every_catalogue_needle_is_found_exactly_where_a_search_finds_it(paste):
    low = lower(paste.read_text(encoding="utf-8", errors="surrogateescape"))
    index = NeedleIndex(low)
    assert [n for n in NEEDLES if index.holds(n) != (n in low)] == []
    # the whole catalogue at once (find_messages' way) is the same answer, needle for needle
    assert index.held(_FILED) == {n for n in NEEDLES if n in low}


_FILED = NeedleSet(NEEDLES)


@pytest.mark.parametrize("text, needle, held", [
    ("libcuda error: 999", "cuda error: ", True),        # a needle's edge word runs on in the text
    ("cuda errors: 999", "cuda error: ", False),
    ("ncclwarn net/ib : no device", " : no device", True),  # a needle of separators and a word
    ("[#####] 100%", " [#", False),
    ("a [## b", " [#", True),
    ("gpu é fault", "é fault", True),                     # non-ASCII characters are word bytes
    ("gpu éfault", "é fault", False),
    ("", "xid", False),
    ("nvrm: xid (pci:0000:3b:00): 79", "xid (pci:", True),
    ("x\nsegmentation\nfault", "segmentation fault", False),  # lines are not joined by the index
])
def test_edges_of_words_separators_and_non_ascii(text, needle, held):
    assert NeedleIndex(text).holds(needle) is held is (needle in text)


@pytest.mark.parametrize("step", [1, 3, 7, 64])
def test_words_split_a_piece_at_a_time_are_the_words_of_the_whole(step):
    from hpcdoctor.triage.scan import _bytes, _distinct_words

    low = lower((CORPUS / "fooocus-1313-driver-found-11040-nvsmi.txt").read_text(encoding="utf-8"))
    low += " " + "x" * 200 + " tail"  # a word longer than a piece
    b = _bytes(low)
    assert _distinct_words(b, step) == frozenset(b.split())
