"""A Unix-domain socket path too long for sun_path, outside MPI (knowledge/messages/
unix_socket_path.toml): Ray's own check, in real pastes from set Y (unsealed), and the other
emitters' wordings (CPython, Rust's std, PostgreSQL) in real public pastes."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule

VERL = "../tickets_blind_y/verl-1120-ray-socket-path-in-slurm-jobdir-too-long.txt"
PYCISTOPIC = "../tickets_blind_y/pycistopic-93-ray-temp-dir-on-nfs-path-too-long.txt"


def test_ray_socket_under_a_slurm_job_directory_names_the_path_and_its_length():
    (f,) = fired("tmpdir-path-too-long-for-socket", recorded_paste_facts(VERL))
    # the title quotes the error without the path; the line with the path is the one shown
    assert "(line 5)" in f.message and "129 bytes" in f.message and "107 bytes" in f.message
    assert 'export TMPDIR="/tmp/$USER"' in f.fix and "--temp-dir=" in f.fix


def test_a_path_the_user_masked_is_not_claimed_to_be_longer_than_it_reads():
    (f,) = fired("tmpdir-path-too-long-for-socket", recorded_paste_facts(PYCISTOPIC))
    assert "shortened in the paste: 74 bytes as pasted" in f.message


@pytest.mark.parametrize("paste, who, line", [
    # fanc on a CentOS 7 cluster, the user: "it's literally too long path"
    ("fanc-78-af-unix-path-too-long-tmpdir.txt", "Python's socket module", 2),
    # herdr's bridge socket under macOS's per-user TMPDIR (104-byte sun_path)
    ("herdr-102-rust-sun-len-macos-tmpdir.txt", "a Rust program", 4),
    # postgres -k under a deep project directory
    ("gargoyle-14-postgres-socket-path-too-long.txt", "PostgreSQL", 6),
])
def test_other_emitters_of_the_limit_in_real_pastes(paste, who, line):
    (f,) = fired("tmpdir-path-too-long-for-socket", recorded_paste_facts(paste))
    assert f.message.startswith(who) and f"(line {line})" in f.message


def test_postgres_socket_directory_is_named_with_its_length():
    (f,) = fired("tmpdir-path-too-long-for-socket", recorded_paste_facts("gargoyle-14-postgres-socket-path-too-long.txt"))
    assert "129 bytes" in f.message and "unix_socket_directories" in f.fix


def test_a_socket_path_that_exists_is_not_this(tmp_path):
    facts = paste_facts(tmp_path, "OSError: [Errno 98] Address already in use: '/tmp/ray/session_latest/sockets/plasma_store'\n")
    assert run_rule("tmpdir-path-too-long-for-socket", facts)[0] == []
