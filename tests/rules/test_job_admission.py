"""Batch-system refusals and waits read from real pastes through the paste path `check --from` uses and
the real message catalogues (pbs_access.toml, sge_submit.toml, slurm_submit_filter.toml,
slurm_reasons.toml): each rule on a paste of its class from a public thread, and silent on a near miss
from another thread (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import PASTES, facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_torque_group_acl_refusal_is_an_error_naming_the_queue():
    (f,) = fired("pbs-queue-group-acl-denied", recorded_paste_facts("torque-cbio-cluster-83-qsub-group-acl.txt"))
    assert f.severity == "error" and "queue active" in f.message and "group ACL is not satisfied" in f.message
    assert "qstat -Qf active" in f.fix and "id -Gn" in f.fix


def test_silent_on_a_torque_authentication_failure():
    # trqauthd could not authenticate the user: qsub never reached a queue's ACL. TORQUE's client
    # lines (pbs_clients.toml) read each step of the failed authentication, none of them an ACL
    paste = PASTES / "torque-phy-clusters-34-trqauthd-unable-to-authenticate.txt"
    found = find_messages(paste.read_text())
    told = facts("h100-kvm-1gpu", **{"ticket.symptoms": found})
    assert not fired("pbs-queue-group-acl-denied", told)
    assert {s["family"] for s in found} == {"pbs_clients"}
    said = next(s for s in found if s["id"] == "pbs_clients:pbs-cannot-connect-to-server")
    assert "cannot connect to server cluster" in said["text"]


def test_grid_engine_unknown_pe_is_an_error_naming_it():
    (f,) = fired("sge-parallel-environment-unknown", recorded_paste_facts("sge-skll-269-drmaa-pe-smp-does-not-exist.txt"))
    assert f.severity == "error" and '"smp"' in f.message and "code 17: job rejected" in f.message
    assert "qconf -spl" in f.fix


def test_silent_on_a_pe_request_without_a_range():
    # qsub refused the script's "-pe 1" for its syntax: no PE was looked up
    assert not fired("sge-parallel-environment-unknown", recorded_paste_facts("sge-clustermq-288-pe-option-must-have-range.txt"))


def test_a_site_filter_refusal_quotes_the_sites_words():
    (f,) = fired("slurm-submit-filter-rejected",
                 recorded_paste_facts("slurm-e3sm-diags-284-submit-filter-no-supported-policy.txt"))
    assert f.severity == "error" and "does not match any supported policy for cori" in f.message


def test_silent_on_a_client_error_above_another_failure():
    # a missing SPANK plugin above "I/O error writing script/environment to file": not the site's filter
    # (the SPANK line is slurm_spank's alone, not the client catch-all's unknown line as well)
    gathered = recorded_paste_facts("slurm-arjunausers-255-spank-x11-io-error.txt")
    assert [s["id"] for s in gathered["facts"]["ticket"]["symptoms"]] == [
        "slurm_spank:EPLUGIN_NOTFOUND", "slurm:ESLURM_WRITING_TO_FILE"]
    assert not fired("slurm-submit-filter-rejected", gathered)


def test_pending_reason_priority_is_information():
    (f,) = fired("slurm-fairshare-priority-low", recorded_paste_facts("slurm-qililab-655-squeue-priority.txt"))
    assert f.severity == "info" and "(Priority)" in f.message and "sshare" in f.fix and "sprio -j" in f.fix


def test_pending_reason_resources_alone_is_not_priority():
    # the same listing's job 969 waits for Resources: only the Priority rows say Priority
    text = (PASTES / "slurm-qililab-655-squeue-priority.txt").read_text()
    rows = "".join(line + "\n" for line in text.splitlines() if "(Priority)" not in line)
    told = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(rows)})
    assert [s["id"] for s in told["facts"]["ticket"]["symptoms"]] == ["slurm_reasons:Resources"]
    assert not fired("slurm-fairshare-priority-low", told)
