"""The ticket corpus claims its pastes are the verbatim text of public issue threads. That claim is
only as good as its check: fixtures/tickets/verification.toml records, per ticket, what a line-by-line
comparison against the stored thread found, and these tests keep that record complete, consistent
with the pastes as they are on disk, and truthfully summarised in the folder's README."""

from __future__ import annotations

import re
try:
    import tomllib
except ImportError:  # Python < 3.11: the same parser as hpcdoctor's own (pyproject: tomli)
    import tomli as tomllib

from conftest import FIXTURES

TICKETS = FIXTURES / "tickets"
RESULTS = {"verbatim", "differs", "not found in the stored corpus"}
FENCE = re.compile(r"^\s*(```+|~~~+)\s*[\w+-]*\s*$")

MANIFEST = tomllib.loads((TICKETS / "tickets.toml").read_text(encoding="utf-8"))["ticket"]
VERIFIED = tomllib.loads((TICKETS / "verification.toml").read_text(encoding="utf-8"))["ticket"]


def _compared_lines(tid: str) -> int:
    """The lines the verification compares: non-blank, not a Markdown fence."""
    text = (TICKETS / f"{tid}.txt").read_text(encoding="utf-8")
    return sum(1 for line in text.splitlines() if line.strip() and not FENCE.match(line))


def _counts() -> dict[str, int]:
    counts = {r: 0 for r in RESULTS}
    for entry in VERIFIED.values():
        counts[entry["result"]] += 1
    return counts


def test_every_ticket_has_exactly_one_verification_entry():
    ids = {t["id"] for t in MANIFEST}
    assert set(VERIFIED) == ids, (
        f"missing: {sorted(ids - set(VERIFIED))}; stale: {sorted(set(VERIFIED) - ids)}")


def test_entries_are_well_formed():
    for tid, entry in VERIFIED.items():
        assert set(entry) == {"checked", "result", "lines_checked", "note"}, (tid, set(entry))
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry["checked"]), tid
        assert entry["result"] in RESULTS, (tid, entry["result"])
        assert len(entry["note"].strip()) > 40, f"{tid}: say what was compared and what was found"


def test_checked_pastes_are_still_the_text_that_was_checked():
    """A paste edited after its check no longer has the line count the check recorded."""
    for tid, entry in VERIFIED.items():
        if entry["result"] == "not found in the stored corpus":
            assert entry["lines_checked"] == 0, f"{tid}: nothing was compared"
            continue
        assert entry["lines_checked"] == _compared_lines(tid), (
            f"{tid}: paste has {_compared_lines(tid)} lines to compare, the check recorded "
            f"{entry['lines_checked']}; re-verify it against the thread")


def test_differences_say_whether_the_paste_was_corrected():
    for tid, entry in VERIFIED.items():
        if entry["result"] == "differs":
            assert re.search(r"\b(Corrected|Not corrected)\b", entry["note"]), tid


def test_readme_reports_the_verification_counts():
    readme = (TICKETS / "README.md").read_text(encoding="utf-8")
    m = re.search(r"(\d+) of (\d+) pastes checked line by line against the stored thread on "
                  r"(\d{4}-\d{2}-\d{2}) \(([\d,]+) lines\): (\d+) verbatim, (\d+) corrected, "
                  r"(\d+) not found in the stored corpus", readme)
    assert m, "README must state the verification counts"
    checked, total, _day, lines, verbatim, corrected, not_found = m.groups()
    counts = _counts()
    assert int(total) == len(MANIFEST)
    assert int(checked) == counts["verbatim"] + counts["differs"]
    assert int(verbatim) == counts["verbatim"]
    assert int(corrected) == counts["differs"]
    assert int(not_found) == counts["not found in the stored corpus"]
    assert int(lines.replace(",", "")) == sum(e["lines_checked"] for e in VERIFIED.values())
