"""user-unknown-on-compute-node (ENV078) on Apptainer's own lookup of the user running it."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts, told_paste_facts


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


# --- folded from the x-identity-x11 branch: Apptainer's other lookups (v3.0.0 .. v1.5.3), Go's os/user,
# Python 3.13's getpass and ssh's own lookup of the uid running it ---

def test_apptainers_other_lookups_of_the_invoking_uid():
    # the formats of actions_linux.go @ v3.8.7, build_linux.go @ v1.5.3, singularity.go @ v3.0.0 and syfs.go
    # @ v1.5.3, with Go's os/user error filled in (no public paste recorded)
    for text in ("FATAL:   failed to retrieve user information for UID 5123: user: unknown userid 5123\n",
                 "FATAL:   failed to retrieve user information: user: unknown userid 5123\n",
                 "FATAL:   Couldn't determine user home directory: user: unknown userid 5123\n",
                 "WARNING: Could not lookup the current user's information: user: lookup userid 5123: connection refused\n"):
        [hit] = fired("user-unknown-on-compute-node", told_facts(text))
        assert hit.severity == "error" and "Apptainer (Singularity)" in hit.message and "5123" in hit.message, text
        assert "getent passwd UID" in hit.fix


def test_an_image_owner_in_apptainers_configuration_is_not_the_jobs_user():
    # image.go @ v1.5.3 (limit container owners) and Go's own words for a name or a group: not the uid running it
    assert not fired("user-unknown-on-compute-node", told_facts(
        "failed to retrieve user information for builder: user: unknown user builder\n"))
    assert not fired("user-unknown-on-compute-node", told_facts("error: user: unknown user builder\ngroup: unknown group docker\n"))


def test_ssh_go_and_python_without_a_passwd_entry_for_their_uid_are_a_hint():
    [hit] = fired("user-unknown-on-compute-node", told_paste_facts("semaphore-1815-ssh-no-user-exists-for-uid.txt"))
    assert hit.severity == "info" and "uid 1000" in hit.message and "container" in hit.message
    # Go's and Python 3.13's formats filled in (no public paste recorded)
    for text in ("error: user: unknown userid 1000\n", "OSError: No username set in the environment\n"):
        [hit] = fired("user-unknown-on-compute-node", told_facts(text))
        assert hit.severity == "info", text
