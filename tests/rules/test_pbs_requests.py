"""pbs-select-syntax-unsupported (rules/pbs_requests.py): a site's qsub refusing chunk requests, on
set U's ticket and the same refusal in another thread (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts

U = "../tickets_blind_u/"   # set U, unsealed (issue 24)


@pytest.mark.parametrize("paste", [U + "dpdispatcher-406-site-refuses-pbs-select-syntax.txt",
                                   "dpgen-1373-qsub-refuses-select.txt"])
def test_a_site_refusing_select_is_an_error(paste):
    (f,) = fired("pbs-select-syntax-unsupported", recorded_paste_facts(paste))
    assert f.severity == "error" and "doesn't support the use of \"-l select\"" in f.message
    assert "#PBS -l ncpus=\\1" in f.fix and "mem=" in f.fix and "nodes=1:ppn=N" in f.fix


def test_pbs_pro_refusing_torque_nodes_is_another_fault():
    # visit-dav/visit#1272: PBS Pro's PBSE_INVALNODEPLACE, the opposite dialect (nodes= on a select server)
    assert not fired("pbs-select-syntax-unsupported", told_facts("qsub: Cannot be used with select or place: nodes\n"))
