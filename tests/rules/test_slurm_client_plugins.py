"""Slurm's client-side lines: a SPANK plugin of plugstack.conf that did not load (slurm_spank.toml,
scheduler-config-broken) and the auth lines around a MUNGE failure on the submitting host
(slurm_rpc.toml, munge.toml), on real public pastes (tests/fixtures/pastes/SOURCES.md). Lines that no
public paste shows are filled in from Slurm's own format strings, and say so."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts


@pytest.mark.parametrize("paste,prog", [("slurm-arjunausers-264-srun-spank-x11-not-found.txt", "srun"),
                                        ("slurm-arjunausers-255-spank-x11-io-error.txt", "sbatch")])
def test_an_optional_spank_plugin_not_installed_on_the_client_is_a_warning(paste, prog):
    (f,) = fired("scheduler-config-broken", recorded_paste_facts(paste))
    assert f.severity == "warning" and "spank: x11.so: Plugin file not found" in f.message
    assert f"not installed on the host where {prog} ran" in f.message and "optional" in f.message
    assert "find / -xdev -name x11.so" in f.fix and "PlugStackConfig" in f.fix


def test_the_library_stays_the_error_beside_a_skipped_spank_plugin():
    gathered = recorded_paste_facts("slurm-arjunausers-264-srun-spank-x11-not-found.txt")
    (f,) = fired("shared-library-not-found", gathered)
    assert "libfftw3.so.3" in f.message


def test_a_required_spank_plugin_that_did_not_load_stops_the_command():
    # Slurm's own format strings filled in (spank.c _spank_stack_process_line, sbatch.c): no public paste
    text = ("sbatch: error: spank: /etc/slurm/plugstack.conf:1: Failed to load plugin x11.so. Aborting.\n"
            "sbatch: error: Failed to initialize plugin stack\n")
    (f,) = fired("scheduler-config-broken", told_facts(text))
    assert f.severity == "error" and "required" in f.message and "the host where sbatch ran" in f.message


def test_a_spank_plugin_of_another_slurm_on_the_node_names_the_node():
    # filled in from spank.c's "spank: %s: %s" with plugin_strerror(EPLUGIN_BAD_VERSION): no public paste
    text = ("slurmstepd: error: spank: /usr/lib64/slurm/spank_pyxis.so: Incompatible plugin version\n"
            "slurmstepd: error: spank: /etc/slurm/plugstack.conf:1: Failed to load plugin /usr/lib64/slurm/spank_pyxis.so. Aborting.\n")
    (f,) = fired("scheduler-config-broken", told_facts(text))
    assert f.severity == "error" and "the compute node (slurmstepd printed it)" in f.message
    assert "another Slurm release" in f.message and "scontrol --version" in f.fix


def test_spank_lines_that_slurm_goes_past_feed_no_rule():
    # filled in from spank.c's format strings: an invalid plugstack.conf line is ignored, an optional load skipped
    text = ("srun: error: spank: /etc/slurm/plugstack.conf:3: Invalid line. Ignoring.\n"
            "srun: spank: /etc/slurm/plugstack.conf:2:Failed to load optional plugin x11.so. Ignored.\n")
    gathered = told_facts(text)
    ids = [s["id"] for s in gathered["facts"]["ticket"]["symptoms"]]
    assert "slurm_spank:spank-invalid-line" in ids and "slurm_spank:spank-optional-load-ignored" in ids
    assert not fired("scheduler-config-broken", gathered)


def test_pyxis_callback_failure_stays_with_enroot_family():
    text = "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed with rc=-1\n"
    ids = [s["id"] for s in told_facts(text)["facts"]["ticket"]["symptoms"]]
    assert "enroot:spank-pyxis-failed" in ids and "slurm_spank:spank-required-callback-failed" not in ids


@pytest.mark.parametrize("paste", ["munge-118-sbatch-auth-g-create-socket-missing.txt",
                                   "uabrc-1242-sbatch-authentication-socket-error.txt"])
def test_munged_socket_missing_on_the_submitting_host(paste):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("munged-not-running", gathered)
    assert f.severity == "error" and "systemctl enable --now munge" in f.fix
    assert not fired("munge-key-mismatch", gathered) and not fired("munge-clock-skew", gathered)


def test_auth_g_create_is_read_and_feeds_no_rule_alone():
    gathered = recorded_paste_facts("munge-118-sbatch-auth-g-create-socket-missing.txt")
    said = [s for s in gathered["facts"]["ticket"]["symptoms"] if s["id"] == "slurm_rpc:rpc-auth-create-failed"]
    assert said and said[0]["rpc"] == "REQUEST_SUBMIT_BATCH_JOB"
    alone = told_facts("sbatch: error: slurm_send_node_msg: auth_g_create: REQUEST_SUBMIT_BATCH_JOB has authentication error\n")
    assert not fired("munged-not-running", alone)


@pytest.mark.parametrize("reason,symbol", [("Invalid credential", "munge-key-mismatch"),
                                           ("Expired credential", "munge-clock-skew"),
                                           ("Rewound credential", "munge-clock-skew"),
                                           ("Socket communication error", "munged-not-running")])
def test_older_slurms_authentication_line_carries_munges_reason(reason, symbol):
    # Slurm up to 18.08: error("authentication: %s", g_slurm_auth_errstr(...)) = munge_strerror (format filled in)
    (f,) = fired(symbol, told_facts(f"sbatch: error: authentication: {reason}\n"))
    assert reason in f.message
