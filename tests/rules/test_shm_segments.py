"""stale-shm-segments (rules/shm_segments.py) on real public pastes (tests/fixtures/pastes, SOURCES.md
there) and the emitters' format strings, the live judgement on facts as checks/shm_segments.py records
them, and the check's parser of /proc/sysvipc/shm on the kernel's own layout."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts, run_rule
from hpcdoctor.checks.shm_segments import parse_sysvipc_shm

MIB = 2 ** 20


def test_a_segment_left_by_ctrl_c():
    (f,) = fired("stale-shm-segments", recorded_paste_facts("posix-ipc-6-shm-left-after-ctrl-c.txt"))
    assert f.severity == "warning" and "line 10" in f.message and "already exists" in f.message
    assert "fuser -v /dev/shm/*" in f.fix and "ipcs -m" in f.fix


def test_python_shared_memory_names_the_segment(tmp_path):
    text = ('  File "/usr/lib/python3.11/multiprocessing/shared_memory.py", line 104, in __init__\n'
            '    self._fd = _posixshmem.shm_open(\n'
            "FileExistsError: [Errno 17] File exists: '/psm_run0_frames'\n")
    (f,) = fired("stale-shm-segments", paste_facts(tmp_path, text))
    assert "rm -f /dev/shm/psm_run0_frames" in f.fix


def test_shmget_enospc_is_system_v_not_a_full_disk(tmp_path):
    g = paste_facts(tmp_path, "shmget: No space left on device\n")
    (f,) = fired("stale-shm-segments", g)
    assert "System V" in f.message and "ipcrm -m" in f.fix
    findings, _ = run_rule("disk-full", g)
    assert findings == []


@pytest.mark.parametrize("paste", ["dumprx-4-go-write-tmp-no-space.txt", "sbws-195-thread-start-fails-low-ram.txt"])
def test_no_claim_without_a_segment_in_the_paste(paste):
    findings, _ = run_rule("stale-shm-segments", recorded_paste_facts(paste))
    assert findings == []


def _live(orphan_bytes, size=1024 * MIB, sysv_bytes=0, orphans=2):
    posix = {"uid": 1000, "files": 3, "complete": True, "orphans": orphans if orphan_bytes else 0, "orphan_bytes": orphan_bytes,
             "largest": [{"path": "/dev/shm/psm_a1", "bytes": orphan_bytes}] if orphan_bytes else []}
    sysv = {"orphans": 1 if sysv_bytes else 0, "orphan_bytes": sysv_bytes, "shmids": [32770] if sysv_bytes else []}
    return facts("cpu-kvm-2core", **{"shm_segments.posix": posix, "shm_segments.sysv": sysv, "memory.shm_size_bytes": size})


def test_live_leftovers_holding_a_quarter_of_dev_shm():
    (f,) = fired("stale-shm-segments", _live(200 * MIB, sysv_bytes=100 * MIB))
    assert "29% of /dev/shm" in f.message and "rm -f /dev/shm/psm_a1" in f.fix and "ipcrm -m" in f.fix


@pytest.mark.parametrize("orphan_bytes", [0, 16 * MIB])
def test_live_small_or_no_leftovers_say_nothing(orphan_bytes):
    assert not fired("stale-shm-segments", _live(orphan_bytes))


def test_live_unread_dev_shm_is_skipped_not_passed():
    from hpcdoctor.facts import Unknown
    g = facts("cpu-kvm-2core")
    g["facts"].setdefault("shm_segments", {})["posix"] = Unknown("/dev/shm not read: timed out")
    g["unknown"]["shm_segments.posix"] = "/dev/shm not read: timed out"
    findings, skipped = run_rule("stale-shm-segments", g)
    assert findings == [] and skipped


def test_sysvipc_keeps_the_users_unattached_segments_only():
    # recorded on the development VM (tests/fixtures/pastes/SOURCES.md): uid 0 held one 4 MiB segment
    # detached (shmid 0) and one 1 MiB segment attached (shmid 1)
    from rulekit import PASTES
    text = (PASTES / "sysvipc-shm-debian12-two-segments.txt").read_text()
    assert parse_sysvipc_shm(text, 0) == {"orphans": 1, "orphan_bytes": 4194304, "shmids": [0]}
    assert parse_sysvipc_shm(text, 1000) == {"orphans": 0, "orphan_bytes": 0, "shmids": []}


def test_sysvipc_without_its_header_is_refused():
    with pytest.raises(ValueError):
        parse_sysvipc_shm("garbage\n1 2 3\n", 1000)
