"""nccl-shm-unusable on NCCL's attach side: "Error while attaching to shared memory segment" is a
peer opening (open O_RDWR, no O_CREAT) the file another rank created (src/misc/shmutils.cc), not a
/dev/shm too small or unwritable. Real pastes from tests/fixtures/pastes (SOURCES.md); where no public
paste was found for a wording, the text is NCCL's own format string filled in, as each test says."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def test_attach_enoent_says_the_ranks_do_not_share_one_dev_shm():
    g = recorded_paste_facts("nccl-1589-shm-attach-enoent.txt")
    (f,) = fired("nccl-shm-unusable", g)
    assert "attach" in f.message and "may not create" not in f.message
    assert "do not share one /dev/shm" in f.message and "NCCL release bug" in f.message
    assert "--ipc=host" in f.fix and "NCCL_SHM_DISABLE=1" in f.fix and "--shm-size" not in f.fix
    # no NCCL version in the paste: the known-issue rule is not judged (unknown), and does not fire
    findings, skipped = run_rule("nccl-known-issue", g)
    assert findings == [] and skipped


def test_attach_size_zero_is_nccls_descriptor_mix_up():
    (f,) = fired("nccl-shm-unusable", recorded_paste_facts("nccl-2190-shm-attach-size-zero.txt"))
    assert "size 0" in f.message and "NCCL bug" in f.message
    assert f.fix.startswith("NCCL_CUMEM_HOST_ENABLE=0")


def test_attach_without_errno_reads_the_call_line_above(tmp_path):
    # NCCL 2.12-2.15's wording (src/include/checks.h SYSCHECKVAL, src/misc/shmutils.cc @ v2.12.12-1
    # lines 42, 69), format strings filled in: no public paste of it was found.
    text = ("node1:1234:1250 [0] misc/shmutils.cc:42 NCCL WARN Call to open failed : No such file or directory\n"
            "node1:1234:1250 [0] misc/shmutils.cc:69 NCCL WARN Error while attaching to shared memory segment "
            "/dev/shm/nccl-AbC123 (size 9637888)\n")
    (f,) = fired("nccl-shm-unusable", paste_facts(tmp_path, text))
    assert "No such file or directory" in f.message and "do not share one /dev/shm" in f.message


def test_attach_permission_denied_says_different_users(tmp_path):
    # src/misc/shmutils.cc @ v2.22.3-1 line 128, format string filled in (no public paste found)
    text = ("node1:1234:1250 [1] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
            "/dev/shm/nccl-AbC123 (size 9637888), error: Permission denied (13)\n")
    (f,) = fired("nccl-shm-unusable", paste_facts(tmp_path, text))
    assert "different users" in f.message and "0600" in f.message


def test_create_enoent_says_dev_shm_is_missing(tmp_path):
    # src/misc/shmutils.cc @ v2.23.4-1 (mkstemp's WARN), format string filled in (no public paste found)
    text = ("node1:1234:1250 [0] misc/shmutils.cc:73 NCCL WARN Error: failed to create shared memory file "
            "/dev/shm/nccl-XXXXXX, error No such file or directory (2)\n")
    (f,) = fired("nccl-shm-unusable", paste_facts(tmp_path, text))
    assert "/dev/shm does not exist" in f.message and "ls -ld /dev/shm" in f.fix


def test_creating_with_no_space_is_left_to_shm_too_small(tmp_path):
    # the catalogue's example line, from https://github.com/pytorch/ci-infra/pull/490 (real text)
    text = ("[2026-04-22 21:34:20] mt-l-x86iavx512-45-172-t4-4-csmpw-runner-g4sfw-workflow:202016:202235 [0] "
            "misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: "
            "No space left on device (28)\n")
    g = paste_facts(tmp_path, text)
    assert not fired("nccl-shm-unusable", g)  # No space left on device: shm-too-small's


def test_attach_line_is_not_read_as_creating(tmp_path):
    text = ("node1:1234:1250 [1] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
            "/dev/shm/nccl-AbC123 (size 9637888), error: No such file or directory (2)\n")
    g = paste_facts(tmp_path, text)
    assert not fired("nccl-shm-unusable", g)[0].message.startswith("NCCL may not create")
