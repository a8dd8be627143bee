"""disk-full (SYS005) read from a pasted df or df -i table (knowledge/messages/df_tables.toml): a
row at 100% of its space or of its inodes, the kind taken from the header above it; file systems
full by design (snaps' squashfs loop images) and healthy tables stay silent
(tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_a_df_h_row_at_100_percent_is_a_full_file_system():
    (f,) = fired("disk-full", recorded_paste_facts("cmc-csci143-688-df-h-root-100-percent.txt"))
    assert f.severity == "error"
    assert "/dev/mapper/ubuntu--vg-ubuntu--lv on / 100% used (1.7T of 1.8T, 0 available)" in f.message
    assert f.evidence["kind"] == "blocks" and f.evidence["mount"] == "/"
    assert f.fix.startswith("df -h /; df -i /")


def test_a_df_i_row_at_100_percent_is_out_of_inodes_with_blocks_free():
    (f,) = fired("disk-full", recorded_paste_facts("psf-chef-43-df-i-root-out-of-inodes.txt"))
    assert f.severity == "error" and f.evidence["kind"] == "inodes"
    assert "588672 of 588672 inodes used" in f.message and "out of inodes" in f.message
    assert "no full row for /: blocks are free" in f.message   # df -h above shows / at 56%
    assert "du --inodes -x /" in f.fix


def test_df_hi_suffixed_inode_counts_are_read():
    (f,) = fired("disk-full", recorded_paste_facts("kubo-3444-df-hi-root-inodes-100.txt"))
    assert f.evidence["kind"] == "inodes" and "640K of 640K inodes used" in f.message


def test_snap_loop_images_at_100_percent_are_full_by_design():
    text = (PASTES / "codesearch-195-snap-loops-100-inodes-54.txt").read_text(encoding="utf-8")
    rows = [s for s in find_messages(text) if s["id"] == "df_tables:df-row-full"]
    assert len(rows) == 6 and all(r["fs"].startswith("/dev/loop") for r in rows)   # read, then left out
    (f,) = fired("disk-full", recorded_paste_facts("codesearch-195-snap-loops-100-inodes-54.txt"))
    assert "/snap" not in f.message and "java.io.IOException: No space left on device" in f.message


def test_healthy_df_tables_are_silent():
    # ProTECT's df -h (set P) and returnn's CI runner: every row below 100%
    for paste in (PASTES.parent / "tickets_blind_p" / "protect-62-tmp-too-small-for-aligners.txt",
                  PASTES / "returnn-1773-df-h-healthy-runner.txt"):
        text = paste.read_text(encoding="utf-8")
        assert [s for s in find_messages(text) if s["id"] == "df_tables:df-header-blocks"]
        assert not [s for s in find_messages(text) if s["id"].startswith("df_tables:df-row")]
