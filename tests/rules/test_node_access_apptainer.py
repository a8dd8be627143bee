"""user-unknown-on-compute-node (ENV078) on Apptainer's own lookup of the user running it."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


def test_apptainers_unknown_userid_on_a_compute_node():
    [hit] = fired("user-unknown-on-compute-node", recorded_paste_facts("singularity-5598-apptainer-unknown-userid.txt"))
    assert hit.severity == "error" and "Apptainer (Singularity)" in hit.message and "the user 606" in hit.message
    assert "getent passwd USER" in hit.fix


def test_a_lookup_that_failed_is_read_too_and_a_normal_start_is_not():
    # Go's os/user lookup error in Apptainer's FATAL line, the format filled in by hand
    g = told_facts("FATAL:   Couldn't determine user account information: user: lookup userid 64102: "
                   "connection refused\n")
    assert fired("user-unknown-on-compute-node", g)
    g = told_facts("INFO:    Converting SIF file to temporary sandbox...\nApptainer> \n")
    assert not fired("user-unknown-on-compute-node", g)
