"""Linear scanning of a paste: the lines that hold a literal, and the window of lines around one.

Every matcher of pasted text goes through these two, which is what keeps a 16 MiB paste linear:
a pattern runs only where its literal needle is, over a window whose lines are each cut at 4 KB."""

from __future__ import annotations

import bisect
import functools
from typing import Dict, FrozenSet, Iterable, Iterator, List, Tuple

ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
LINE_CAP = 4096
# window_at's reach: the lines before and after a needle's line that its patterns read.
WINDOW_BEFORE, WINDOW_AFTER = 2, 3


def lower(text: str) -> str:
    """ASCII lower case: the same length as the text, so offsets found in it stay valid there."""
    return text.translate(ASCII_LOWER)


def lines_holding(text: str, low: str, needle: str) -> Iterator[Tuple[int, int, int]]:
    """(line number, start, end) of each line of ``text`` that holds ``needle`` (already lower
    case, found in ``low``), in order, each line once."""
    if not needle:
        return
    pos = low.find(needle)
    line_no, counted_to = 1, 0
    while pos != -1:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        line_no += text.count("\n", counted_to, start)
        counted_to = start
        yield line_no, start, end
        pos = low.find(needle, end)


def window_at(text: str, start: int, end: int) -> Tuple[str, int]:
    """The line text[start:end] with the two lines before it and the three after, joined by
    spaces (warnings printed over several lines, or wrapped by a terminal or a mail client), and
    the offset in it where that line begins. Each line is cut at 4 KB, so a pattern's work stays
    bounded whatever the paste's line lengths."""
    lo = start
    for _ in range(WINDOW_BEFORE):
        if lo > 0:
            lo = text.rfind("\n", 0, lo - 1) + 1
    hi = end
    for _ in range(WINDOW_AFTER):
        if hi < len(text):
            nxt = text.find("\n", hi + 1)
            hi = len(text) if nxt == -1 else nxt
    before = text[lo:start].split("\n")[:-1] if start > lo else []
    parts = [p.strip()[:LINE_CAP] if len(p) > LINE_CAP else p.strip() for p in text[lo:hi].split("\n")]
    offset = sum(len(p) + 1 for p in parts[:len(before)])
    return " ".join(parts), offset


def keep_windows(text: str, needles: Iterable[str]) -> str:
    """``text`` with every line blanked that no needle's window reaches. What the matchers read of
    it is unchanged (each needle's line, its window, every line number), and nothing else is kept:
    a snapshot records a kernel log this way, without the network addresses and serial numbers of
    the lines no catalogue reads. ``needles`` are lower case, as lines_holding takes them."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    low = lower(text)
    starts = [0]
    nl = text.find("\n")
    while nl != -1:
        starts.append(nl + 1)
        nl = text.find("\n", nl + 1)
    keep = bytearray(len(starts))
    index = NeedleIndex(low)
    for needle in set(needles):
        pos = low.find(needle) if needle and index.holds(needle) else -1
        while pos != -1:
            n = bisect.bisect_right(starts, pos) - 1
            for k in range(max(0, n - WINDOW_BEFORE), min(len(starts), n + WINDOW_AFTER + 1)):
                keep[k] = 1
            nxt = text.find("\n", pos)
            pos = -1 if nxt == -1 else low.find(needle, nxt + 1)
    lines = text.split("\n")
    return "\n".join(line if keep[i] else "" for i, line in enumerate(lines))


# The needle index's words: ASCII letters and digits, and every byte of a non-ASCII character; any
# other ASCII byte parts two words. Needles and pastes are split the same way, so a word the needle
# holds whole (a separator on each side of it, inside the needle) is a whole word of any text that
# holds the needle.
_WORD_BYTES = bytes(c if c >= 128 or chr(c).isalnum() else 32 for c in range(256))


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass").translate(_WORD_BYTES)


# Sized above every needle a paste is checked for (the catalogues' ~6,200 and the translations' ~2,200,
# each paste asking for all of them in turn): at 8,192 that cycle evicted every entry before its
# next use, and each needle was split again for each paste, a third of a small paste's reading.
@functools.lru_cache(maxsize=1 << 16)
def _needle_words(needle: str) -> Tuple[Tuple[bytes, ...], Tuple[bytes, ...]]:
    """(whole words, edge words) of a lower-case needle: an edge word may run on in the text
    ("cuda" of "CUDA error: " is the end of "libcuda"), so it is only part of some word there."""
    b = _bytes(needle)
    words = b.split()
    if not words:
        return (), ()
    whole = list(words[1:-1])
    edge = []
    first_whole = b[:1] == b" " and (len(words) > 1 or b[-1:] == b" ")
    (whole if first_whole else edge).append(words[0])
    if len(words) > 1:
        (whole if b[-1:] == b" " else edge).append(words[-1])
    return tuple(whole), tuple(edge)


def _distinct_words(b: bytes, step: int = 1 << 20) -> frozenset:
    """The distinct words of ``b``, split a MiB at a time (cut where a separator is): one split of a
    16 MiB line of short words held millions of word objects at once, for a set of a few."""
    words: set = set()
    i, n = 0, len(b)
    while i < n:
        j = min(n, i + step)
        if j < n:
            cut = b.rfind(b" ", i, j)
            if cut <= i:  # a word longer than a step runs on to its end
                cut = b.find(b" ", j)
                cut = n if cut == -1 else cut
            j = cut
        words.update(b[i:j].split())
        i = j if j > i else i + 1
    return frozenset(words)


class NeedleSet:
    """A fixed list of needles (a catalogue's), filed by one word each holds whole, so that a text's
    index answers for all of them from its own distinct words: a needle is tried only where its
    filing word is one of the text's. Needles with no whole word (one word that may run on at an
    edge, "cuda" of "libcuda") are tried each time."""

    def __init__(self, needles: Iterable[str]):
        self.by_word: Dict[bytes, List[str]] = {}
        self.unfiled: List[str] = []
        for needle in dict.fromkeys(n for n in needles if n):
            whole, _edge = _needle_words(needle)
            if whole:
                self.by_word.setdefault(max(whole, key=len), []).append(needle)
            else:
                self.unfiled.append(needle)


class NeedleIndex:
    """Which of a few thousand needles a text holds, in about one pass over it: the text's distinct
    words are taken once, and a needle is looked for in the text only when every word it holds
    whole is one of them and each word at its edges is part of one. Thousands of searches of a
    16 MiB paste, one per catalogue needle, cost seconds where this costs a fraction of one."""

    def __init__(self, low: str):
        self.low = low
        self.words = _distinct_words(_bytes(low))
        self._vocab: "bytes | None" = None

    def _in_some_word(self, part: bytes) -> bool:
        if self._vocab is None:
            self._vocab = b" ".join(self.words)
        return part in self._vocab

    def held(self, needles: NeedleSet) -> FrozenSet[str]:
        """Which of ``needles`` the text holds: holds() for each, asked only of the needles filed
        under one of the text's words (and the unfiled ones)."""
        by_word = needles.by_word
        shared = (self.words & by_word.keys()) if len(self.words) > len(by_word) else (by_word.keys() & self.words)
        out = {n for word in shared for n in by_word[word] if self.holds(n)}
        out.update(n for n in needles.unfiled if self.holds(n))
        return frozenset(out)

    def holds(self, needle: str) -> bool:
        """Whether the text holds ``needle`` (lower case, as lines_holding takes it)."""
        whole, edge = _needle_words(needle)
        if not all(w in self.words for w in whole) or not all(self._in_some_word(e) for e in edge):
            return False
        return needle in self.low
