"""Which Slurm daemon did not answer (rules/slurm_rpc.py) on real public pastes and on output the
Debian slurm-wlm 22.05.8 and munge-0.5.15 programs printed on the development VM
(tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts

@pytest.mark.parametrize("paste", ["chip-seq-pipeline2-150-slurm-controller-busy.txt",
                                   "sdsc-si-2019-55-sbatch-socket-timeout-loop.txt",
                                   "slurm-22.05-controller-unanswered.txt"])
def test_a_submission_the_controller_did_not_answer_is_a_warning(paste):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("slurm-controller-overloaded", gathered)
    assert f.severity == "warning" and "Socket timed out" in f.message and "squeue" in f.message
    assert "sbatch --array" in f.fix and "sdiag" in f.fix
    # the controller took the connection and answered too late: not down
    assert not fired("slurm-controller-unreachable", gathered)


def test_a_controller_nothing_answers_for_is_an_error_not_overload():
    gathered = recorded_paste_facts("slurm-22.05-controller-down.txt")
    (f,) = fired("slurm-controller-unreachable", gathered)
    assert f.severity == "error" and "connect failure" in f.message and "scontrol ping" in f.fix
    assert not fired("slurm-controller-overloaded", gathered)


def test_a_step_launch_timing_out_at_a_node_names_that_slurmd():
    gathered = recorded_paste_facts("batchtools-201-slurmd-launch-timeout.txt")
    (f,) = fired("slurmd-unreachable", gathered)
    assert f.severity == "warning" and "ubuntu4" in f.message and "munge" in f.message.lower()
    assert "munge -n | ssh NODE unmunge" in f.fix
    # the paste never names MUNGE's own reason, so no MUNGE rule is forced on it
    assert not fired("munge-key-mismatch", gathered) and not fired("slurm-controller-overloaded", gathered)


@pytest.mark.parametrize("paste", ["trinity-759-munge-decode-invalid-credential.txt", "munge-0.5.15-wrong-key.txt"])
def test_munges_invalid_credential_is_another_key(paste):
    (f,) = fired("munge-key-mismatch", recorded_paste_facts(paste))
    assert f.severity == "error" and "Invalid credential" in f.message and "munge.key" in f.message


def test_slurms_own_credential_error_alone_is_a_warning():
    (f,) = fired("munge-key-mismatch", recorded_paste_facts("slurm-cluster-6-invalid-authentication-credential.txt"))
    assert f.severity == "warning" and "MESSAGE_NODE_REGISTRATION_STATUS" in f.message and "MUNGE" in f.message


def test_munged_not_running():
    for paste in ("slurm-22.05-munged-not-running.txt", "munge-0.5.15-no-munged.txt"):
        gathered = recorded_paste_facts(paste)
        (f,) = fired("munged-not-running", gathered)
        assert f.severity == "error" and "munged" in f.message
        assert not fired("munge-key-mismatch", gathered)


def test_an_expired_credential_is_the_clock():
    (f,) = fired("munge-clock-skew", recorded_paste_facts("munge-0.5.15-expired.txt"))
    assert f.severity == "error" and "Expired credential" in f.message and "chronyc" in f.fix


def test_a_slurm_job_credential_is_none_of_these():
    gathered = recorded_paste_facts("deepops-1179-invalid-job-credential-healthy.txt")
    for sym in ("slurm-controller-overloaded", "slurm-controller-unreachable", "slurmd-unreachable", "munge-key-mismatch",
                "munged-not-running", "munge-clock-skew"):
        assert not fired(sym, gathered), sym
