"""home-quota-exceeded on the kernel's quota warnings, the quota tools' over-quota marks
(knowledge/messages/disk_quota.toml) and a user's statement of a file-count quota (prose.toml), on
the emitters' format strings and real pastes (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("text, files", [
    # fs/quota/dquot.c print_warning's forms with touch's EDQUOT line after, as a terminal shows them
    ("sda1: write failed, user file limit reached.\ntouch: cannot touch '3': Disk quota exceeded\n", True),
    ("sdb1: write failed, group block limit reached.\n", False),
    ("sdb1: write failed, user file quota exceeded too long.\n", True),
])
def test_the_kernels_failed_write_is_an_error(text, files):
    (f,) = fired("home-quota-exceeded", told_facts(text))
    assert f.severity == "error"
    assert f.message.startswith("the quota on the number of files (inodes) is used up" if files else "a disk quota is used up")
    assert ("conda config --add envs_dirs" in f.fix) is files


def test_the_kernels_soft_limit_warning_is_read_and_not_fired():
    text = "sda1: warning, user file quota exceeded.\n"
    assert "disk_quota:kernel-file-quota-warning" in {s["id"] for s in find_messages(text)}
    assert not fired("home-quota-exceeded", told_facts(text))


_HEADER = "     Filesystem  blocks   quota   limit   grace   files   quota   limit   grace\n"


def test_a_quota_tables_star_is_a_warning_naming_what_is_over():
    # quota-tools quota.c heading() and a row: the files figure past its soft limit carries '*'
    (f,) = fired("home-quota-exceeded", told_facts("Disk quotas for user alice (uid 1000):\n" + _HEADER
                                               + "      /dev/sdc1      28       0       0             101*    100     120   6days\n"))
    assert f.severity == "warning"
    assert "the number of files on /dev/sdc1 over its soft quota, within the grace time (6days)" in f.message
    # Lustre's lfs quota: kbytes over
    (f,) = fired("home-quota-exceeded", told_facts(
        "Disk quotas for usr bob (uid 1001):\n     Filesystem  kbytes   quota   limit   grace   files   quota   limit   grace\n"
        "        /lustre 10485770*  10485760 11534336  6d23h59m58s    4120       0       0       -\n"))
    assert "the space used on /lustre over its soft quota, within the grace time (6d23h59m58s)" in f.message


def test_a_quota_table_within_its_limits_is_silent():
    text = "Disk quotas for user quser2 (uid 1008):\n" + _HEADER + "      /dev/sdc1      28       0       0               7      20      30\n"
    assert not fired("home-quota-exceeded", told_facts(text))


def test_a_user_saying_the_file_count_limit_is_reached_is_info():
    (f,) = fired("home-quota-exceeded", recorded_paste_facts("noresm-landsites-17-conda-env-file-count-quota.txt"))
    assert f.severity == "info" and "100,000 files limits" in f.message and "conda config --add envs_dirs" in f.fix


@pytest.mark.parametrize("text", [
    "OSError: [Errno 24] Too many open files\n",
    "ulimit -n raises the open files limit for the DataLoader\n",
    "The repository has too many files to list in the web view.\n",
])
def test_silent_on_open_files_and_file_counts_without_a_quota(text):
    assert not fired("home-quota-exceeded", told_facts(text))



def test_mpi_io_quota_class_is_the_quota():
    # MPICH's fatal-error line for MPI_ERR_QUOTA, the class ROMIO's ADIOI_Err_create_code gives EDQUOT
    # (pmodels/mpich src/mpi/romio/adio/common/error.c; errutil.c's "Fatal error in %s: ")
    (f,) = fired("home-quota-exceeded", told_facts("Fatal error in PMPI_File_write: Quota exceeded for files, error stack:\n"))
    assert f.severity == "error" and "a disk quota is used up" in f.message
