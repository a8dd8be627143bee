"""shared-filesystem-fault (rules/shared_fs.py): GPFS's own words are an error; Spack's lock
timeout alone is info (set T's paste); real pastes in tests/fixtures/pastes/SOURCES.md."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts

T = "../tickets_blind_t/"


def test_gpfs_not_ready_on_the_node_is_an_error():
    (f,) = fired("shared-filesystem-fault", recorded_paste_facts("cbio-cluster-48-gpfs-not-ready-after-reboot.txt"))
    assert f.severity == "error" and "GPFS is not ready to handle commands yet" in f.message
    assert "mmgetstate -a" in f.fix and "mmstartup" in f.fix


def test_a_spack_lock_timeout_alone_is_only_info():
    (f,) = fired("shared-filesystem-fault", recorded_paste_facts(T + "spack-24641-write-lock-timeout-gpfs-trouble.txt"))
    assert f.severity == "info" and "write lock" in f.message and "cannot tell" in f.message
    assert "db_lock_timeout" in f.fix


def test_silent_on_sruns_timed_out_waiting_for_a_job_step():
    # the same words in another sense: srun's "Timed out waiting for job step to complete"
    assert not fired("shared-filesystem-fault", recorded_paste_facts("deepops-1179-invalid-job-credential-healthy.txt"))
