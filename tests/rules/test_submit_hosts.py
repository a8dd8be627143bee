"""slurm-submit-from-compute-node-refused on public pastes (tests/fixtures/pastes, SOURCES.md there):
a site's refusal naming the submitting host; silent where sbatch was refused for a QOS limit."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


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
