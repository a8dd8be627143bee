"""shared-filesystem-fault (rules/shared_fs.py): GPFS's own words are an error; Spack's lock
timeout alone is info (set T's paste); real pastes in tests/fixtures/pastes/SOURCES.md."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts

T = "../tickets_blind_t/"


def test_gpfs_daemon_not_started_on_the_node_is_not_a_cluster_fault():
    # mmremote's words say the node's own daemon is down: shared-filesystem-not-mounted answers it
    # (tests/rules/test_shared_storage.py), and this rule stays silent, one cause, one finding
    assert not fired("shared-filesystem-fault", recorded_paste_facts("cbio-cluster-48-gpfs-not-ready-after-reboot.txt"))


def test_a_spack_lock_timeout_alone_is_only_info():
    (f,) = fired("shared-filesystem-fault", recorded_paste_facts(T + "spack-24641-write-lock-timeout-gpfs-trouble.txt"))
    assert f.severity == "info" and "write lock" in f.message and "cannot tell" in f.message
    assert "db_lock_timeout" in f.fix


def test_silent_on_sruns_timed_out_waiting_for_a_job_step():
    # the same words in another sense: srun's "Timed out waiting for job step to complete"
    assert not fired("shared-filesystem-fault", recorded_paste_facts("deepops-1179-invalid-job-credential-healthy.txt"))
