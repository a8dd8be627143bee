"""Linear scanning of a paste: the lines that hold a literal, and the window of lines around one.

Every matcher of pasted text goes through these two, which is what keeps a 16 MiB paste linear:
a pattern runs only where its literal needle is, over a window whose lines are each cut at 4 KB."""

from __future__ import annotations

import bisect
from typing import Iterable, Iterator, Tuple

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
    for needle in set(needles):
        pos = low.find(needle) if needle else -1
        while pos != -1:
            n = bisect.bisect_right(starts, pos) - 1
            for k in range(max(0, n - WINDOW_BEFORE), min(len(starts), n + WINDOW_AFTER + 1)):
                keep[k] = 1
            nxt = text.find("\n", pos)
            pos = -1 if nxt == -1 else low.find(needle, nxt + 1)
    lines = text.split("\n")
    return "\n".join(line if keep[i] else "" for i, line in enumerate(lines))
