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
