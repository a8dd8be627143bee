"""fuse-mount-client-died on real public pastes (tests/fixtures/pastes/SOURCES.md, set M's tickets)
through the real catalogue (knowledge/messages/fuse.toml) and the paste path."""

from __future__ import annotations

from pathlib import Path

from rulekit import facts, fired, paste_facts, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

SET_M = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_m"


def _ticket(tmp_path, name):
    return paste_facts(tmp_path, (SET_M / f"{name}.txt").read_text(encoding="utf-8"))


def test_ls_on_a_dead_ossfs_mount_is_an_error(tmp_path):
    (f,) = fired("fuse-mount-client-died", _ticket(tmp_path, "ossfs-40-fuse-mount-client-segfault"))
    assert f.severity == "error" and "edu is on a FUSE mount" in f.message
    assert "findmnt -T edu" in f.fix and "fusermount -u" in f.fix


def test_ls_on_a_dead_s3fs_mount_is_an_error():
    (f,) = fired("fuse-mount-client-died", recorded_paste_facts("s3fs-fuse-635-ls-transport-endpoint-not-connected.txt"))
    assert f.severity == "error" and "/mnt/naip" in f.message


def test_the_words_alone_are_quoted_at_info(tmp_path):
    (f,) = fired("fuse-mount-client-died", _ticket(tmp_path, "moosefs-274-fuse-mount-client-died"))
    assert f.severity == "info" and "socket" in f.message


def test_df_and_the_client_own_check_name_the_mount():
    # s3fs-fuse #373 (df) and #2176 (s3fs's start-up check), as pasted there
    for line, path in (("df: ‘/backup/tapes’: Transport endpoint is not connected", "/backup/tapes"),
                       ("May 29 09:16:58 prod-main-zemtu s3fs[2017306]: s3fs: unable to access MOUNTPOINT "
                        "/var/www/zemtu/public/media: Transport endpoint is not connected", "/var/www/zemtu/public/media")):
        (f,) = fired("fuse-mount-client-died", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line + "\n")}))
        assert f.severity == "error" and path in f.message


def test_silent_on_a_socket_that_is_not_connected():
    # hpcdoctor refuses this paste as a whole (nothing it reads): the catalogue finds nothing in it either
    text = (Path(__file__).resolve().parent.parent / "fixtures" / "pastes" / "ossfs-40-socket-read-not-connected-comment.txt").read_text()
    assert not fired("fuse-mount-client-died", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    # the same words on a path do fire: the test can fail
    assert fired("fuse-mount-client-died", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(
        "ls: cannot access /mnt/naip: Transport endpoint is not connected\n")}))
