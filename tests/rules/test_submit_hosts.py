"""slurm-submit-from-compute-node-refused on public pastes (tests/fixtures/pastes, SOURCES.md there):
a site's refusal naming the submitting host; silent where sbatch was refused for a QOS limit."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages

S = "../tickets_blind_s/"   # set S, unsealed: recorded_paste_facts reads fixtures/pastes/<name>


@pytest.mark.parametrize("paste", ["tailseeker-3-job-submission-refused-on-compute-node.txt",
                                   "radical-pilot-51-tacc-submission-not-allowed.txt"])
def test_taccs_filter_refusing_a_compute_node(paste):
    (f,) = fired("slurm-submit-from-compute-node-refused", recorded_paste_facts(paste))
    assert f.severity == "error" and "only from its login nodes" in f.message
    assert f.fix.startswith("sbatch job.sh   # from a login node") and "tmux" in f.fix


def test_grid_engines_submit_host_list():
    # marbl/canu#156's title, as Grid Engine printed it
    text = 'Unable to run job: denied: host "nodexxx" is not submit host\n'
    (f,) = fired("slurm-submit-from-compute-node-refused", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "(nodexxx)" in f.message and f.fix.startswith("qconf -ss")


def test_silent_where_sbatch_is_refused_for_another_cause():
    assert not fired("slurm-submit-from-compute-node-refused", recorded_paste_facts("asgs-552-sbatch-qosminnode.txt"))


@pytest.mark.parametrize("paste, host", [
    ("tigrlab-admin-1270-sge-no-submit-host.txt", "tigrsrv.camhres.ca"),   # an admin's record, in backquotes
    ("canu-404-sge-no-submit-host.txt", "omega-1-4.local"),                # a workflow's submit log
])
def test_grid_engines_own_words_no_submit_host(paste, host):
    # qmaster's MSG_SGETEXT_NOSUBMITHOST_S ("is no submit host"), as qsub prints it
    (f,) = fired("slurm-submit-from-compute-node-refused", recorded_paste_facts(paste))
    assert f.severity == "error" and f"({host})" in f.message and "is no submit host" in f.message
    assert f.fix.startswith("qconf -ss") and "qconf -as HOST" in f.fix


def test_grid_engines_admin_host_refusal_is_not_a_submission_refusal():
    # MSG_SGETEXT_NOADMINHOST_S refuses qconf's changes; it is read, and feeds nothing
    told = find_messages('denied: host "node01" is no admin host\n')
    assert [s["id"] for s in told] == ["submit_host:sge-no-admin-host"]
    assert not fired("slurm-submit-from-compute-node-refused", facts("h100-kvm-1gpu", **{"ticket.symptoms": told}))


# PBS/TORQUE and Grid Engine refusals on set S's tickets (unsealed) and other threads' pastes
def test_pbs_bad_uid_bare_names_every_cause_and_not_a_missing_user():
    facts = recorded_paste_facts(S + "canu-288-compute-nodes-cannot-submit-bad-uid.txt")
    (f,) = fired("slurm-submit-from-compute-node-refused", facts)
    assert f.severity == "warning" and "not trusted" in f.message and "passwd entry on the PBS server" in f.message
    assert run_rule("user-unknown-on-compute-node", facts)[0] == []


def test_torque_ruserok_names_the_host():
    (f,) = fired("slurm-submit-from-compute-node-refused",
                 recorded_paste_facts("canu-104-torque-ruserok-failed-from-compute-node.txt"))
    assert f.severity == "error" and "(r3node4)" in f.message and "allow_node_submit" in f.fix


def test_torque_user_missing_on_server_is_not_a_host_refusal():
    facts = recorded_paste_facts("phy-clusters-19-torque-user-not-in-server-passwd.txt")
    assert not fired("slurm-submit-from-compute-node-refused", facts)


def test_grid_engine_refusal_cut_short():
    (f,) = fired("slurm-submit-from-compute-node-refused",
                 recorded_paste_facts(S + "canu-1846-compute-node-not-a-submit-host.txt"))
    assert f.severity == "error" and "qconf -ss" in f.fix
    # the full text still reads through its own entry, not the cut one
    (g,) = fired("slurm-submit-from-compute-node-refused", recorded_paste_facts("canu-404-sge-no-submit-host.txt"))
    assert g.evidence["message"] == "submit_host:sge-no-submit-host"
