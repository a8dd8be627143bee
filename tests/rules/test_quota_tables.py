"""home-quota-exceeded (SYS004) read from pasted quota tables (knowledge/messages/disk_quota.toml):
every row of quota(1)/lfs quota with a "*", judged by its grace ("none": spent), and GPFS
mmlsquota's rows judged by their numbers and grace ("expired"); a healthy BeeGFS quota listing stays
silent (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_quota_s_files_over_soft_with_the_grace_spent_is_an_error():
    (f,) = fired("home-quota-exceeded", recorded_paste_facts("sheffield-hpc-1947-quota-s-files-over-grace-none.txt"))
    assert f.severity == "error"
    assert "number of files" in f.message and 'grace spent ("none")' in f.message
    assert "321k used, quota 300k, limit 350k" in f.message
    assert f.evidence["quota_used"] == "321k"


def test_a_row_before_the_quota_heading_is_not_read():
    text = (PASTES / "sheffield-hpc-1947-quota-s-files-over-grace-none.txt").read_text(encoding="utf-8")
    rows = [s for s in find_messages(text) if s["id"] == "disk_quota:quota-row-files-over"]
    assert [r["line"] for r in rows] == [7]   # the "-" line before it has no "*"


def test_mmlsquota_files_over_quota_with_the_grace_expired():
    facts = recorded_paste_facts("../tickets_blind_m/resources-338-scratch-file-count-quota.txt")
    (f,) = fired("home-quota-exceeded", facts)
    assert f.severity == "error"
    assert 'mmlsquota (line 9) shows the number of files on gscratch over its soft quota with the grace spent ("expired")' in f.message
    assert "9074608 used, quota 8250000, limit 9075000" in f.message


def test_a_healthy_beegfs_quota_listing_is_silent():
    text = (PASTES / "macs-424-beegfs-myquota-healthy.txt").read_text(encoding="utf-8")
    assert not [s for s in find_messages(text) if s["id"].startswith("disk_quota:")]
