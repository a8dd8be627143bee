"""batch-system-not-in-service (rules/batch_daemons.py): LSF's, Grid Engine's and TORQUE's clients
finding no daemon to answer them, on set S's ticket and the emitters' formats."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts, told_paste_facts

S = "../tickets_blind_s/"   # set S, unsealed: recorded_paste_facts reads fixtures/pastes/<name>


def test_lsf_lim_down():
    (f,) = fired("batch-system-not-in-service", recorded_paste_facts(S + "fics-cluster-guide-14-lsf-replaced-by-slurm.txt"))
    assert f.severity == "error" and "LSF" in f.message and "no longer runs" in f.message and "lsid" in f.fix


def test_grid_engine_and_torque_daemons_not_answering():
    # the formats of daimh/sge's MSG_GDI_UNABLE_TO_CONNECT_SUS and TORQUE's qstat.c with PBSE_SERVER_NOT_FOUND
    (f,) = fired("batch-system-not-in-service", told_facts('error: unable to contact qmaster using port 6444 on host "master"\n'))
    assert "Grid Engine" in f.message and "act_qmaster" in f.fix
    (t,) = fired("batch-system-not-in-service",
                 told_facts("qstat: cannot connect to server head (errno=15133) Could not connect to batch server\n"))
    assert "TORQUE" in t.message


def test_trqauthd_refusing_the_user_is_not_a_server_down():
    # "cannot connect to server ... (errno=15008) trqauthd unable to authenticate": the user's lookup, not pbs_server
    assert not fired("batch-system-not-in-service", told_paste_facts("phy-clusters-34-trqauthd-cannot-authenticate.txt"))


U = "../tickets_blind_u/"   # set U, unsealed (issue 24)


def test_grid_engine_qmaster_refusing_names_host_port_and_commlib_reason():
    # set U's ticket and Kaldi's queue.pl log: MSG_GDI_GENERAL_COM_ERROR_SS then MSG_GDI_CANT_SEND_MSG_TO_PORT_ON_HOST_SUSS
    for paste, host in ((U + "tigrlab-admin-167-sge-master-move-broken.txt", "mrsdti.kimel.ric"),
                        ("kaldi-3220-qsub-qmaster-connection-refused.txt", "ghost")):
        (f,) = fired("batch-system-not-in-service", recorded_paste_facts(paste))
        assert f.severity == "error" and f"host {host} port 6444" in f.message
        assert "got select error (Connection refused)" in f.message and "CL_RETVAL_SELECT_ERROR" in f.message
        assert f"qping -info {host} 6444 qmaster 1" in f.fix and "act_qmaster" in f.fix and f"nc -zv {host} 6444" in f.fix


def test_a_commlib_error_alone_names_no_qmaster():
    # the first of the two lines Kaldi's qsub printed: a failed connection to some Grid Engine daemon, no host named
    assert not fired("batch-system-not-in-service",
                     told_facts("Output of qsub was: error: commlib error: got select error (Connection refused)\n"))
