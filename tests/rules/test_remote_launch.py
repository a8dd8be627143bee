"""ssh-between-nodes-refused on the OpenSSH client's own output (recorded on the project's VM) and
public pastes of launchers that start ranks over ssh (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, words, remedy", [
    # nothing listens on port 22: an sshd to start, not keys to set up
    ("openssh-9.2-connection-refused.txt", "(to localhost): no ssh server answered", "sshd -D"),
    ("virtualclient-752-host-key-orte-daemons.txt", "host key is not in known_hosts", "ssh-keygen -t ed25519"),   # Open MPI's mpiexec
    ("mpich-4712-host-key-verification-failed.txt", "host key is not in known_hosts", "ssh-keygen -t ed25519"),   # MPICH's Hydra
])
def test_each_refusal_is_read_and_the_fix_starts_ranks_without_ssh(paste, words, remedy):
    (f,) = fired("ssh-between-nodes-refused", recorded_paste_facts(paste))
    assert words in f.message and "launcher that starts ranks over ssh" in f.message
    assert f.fix.startswith('for h in $(scontrol show hostnames "$SLURM_JOB_NODELIST")')
    assert "srun" in f.fix and remedy in f.fix and "StrictHostKeyChecking=no" not in f.fix



def test_an_unresolvable_name_is_the_host_lists_not_a_refused_login():
    # ssh never reached a server: keys and host keys are not the matter, the name is
    (f,) = fired("ssh-between-nodes-refused", recorded_paste_facts("openssh-9.2-unresolvable-host.txt"))
    assert "ssh could not start a rank on nosuchhost: the node name given to ssh does not resolve here" in f.message
    assert f.fix.startswith("getent hosts nosuchhost") and "ssh-keygen" not in f.fix and "srun" in f.fix


def test_the_launcher_named_in_the_paste_chooses_the_fix():
    # pdsh's line after ssh's own (DeepSpeed's default runner), in pdsh's format
    text = ("node002: ssh: connect to host node002 port 22: No route to host\n"
            "pdsh@node001: node002: ssh exited with exit code 255\n")
    (f,) = fired("ssh-between-nodes-refused", told_facts(text))
    assert "(to node002): no ssh server answered" in f.message and "deepspeed --launcher slurm" in f.fix
    # Open MPI's daemon-launch topic beside ssh's refusal
    orte = ("Host key verification failed.\n"
            "--------------------------------------------------------------------------\n"
            "ORTE was unable to reliably start one or more daemons.\n"
            "This usually is caused by:\n\n"
            "* not finding the required libraries and/or binaries on\n")
    (f,) = fired("ssh-between-nodes-refused", told_facts(orte))
    assert "Open MPI built with Slurm support" in f.fix


def test_the_daemon_failure_alone_is_not_this_rule():
    orte = ("ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n\n"
            "* not finding the required libraries and/or binaries on\n")
    assert "openmpi:errmgr-base:failed-daemon-launch" in {s["id"] for s in find_messages(orte)}
    assert not fired("ssh-between-nodes-refused", told_facts(orte))


def test_ssh_to_a_code_forge_is_gits_not_a_launchers():
    assert not fired("ssh-between-nodes-refused", recorded_paste_facts("openssh-9.2-git-ls-remote-github-offline.txt"))
    assert not fired("ssh-between-nodes-refused", told_facts("git@github.com: Permission denied (publickey).\n"))
    (f,) = fired("ssh-between-nodes-refused", told_facts("alice@gpu017: Permission denied (publickey,gssapi-keyex,gssapi-with-mic).\n"))
    assert "(to gpu017): the other node refused the login" in f.message


def test_silent_without_an_ssh_message():
    assert not fired("ssh-between-nodes-refused", recorded_paste_facts("h5py-1082-nfs-no-locks-available.txt"))
    assert not fired("ssh-between-nodes-refused", told_facts((PASTES / "noexec-tmpfs-bash-exec.txt").read_text()))


def test_openssh_75_and_older_refusal_names_no_host():
    # radical.pilot#1146: Stampede's OpenSSH printed "Permission denied (methods)." without user@host
    (f,) = fired("ssh-between-nodes-refused", recorded_paste_facts("radical-pilot-1146-ssh-publickey-denied-stampede.txt"))
    assert "ssh between nodes was refused: the other host refused the login" in f.message and "(line 5" in f.message
    # the same words before git's own "fatal: Could not read from remote repository." are git's ssh, not a launcher's
    git = "Permission denied (publickey).\nfatal: Could not read from remote repository.\n"
    assert not fired("ssh-between-nodes-refused", told_facts(git))
    # a program's "Permission denied (os error 13)" is an errno, not ssh's list of methods
    assert not fired("ssh-between-nodes-refused", told_facts("error: IO Error: Permission denied (os error 13)\n"))


def test_a_timeout_in_the_bsd_libcs_words_is_the_users_mac_not_a_node():
    # set M's healthy control: ssh from the user's Mac to a renamed login host ("Operation timed out"
    # is macOS's strerror(ETIMEDOUT); a Linux node prints "Connection timed out")
    paste = recorded_paste_facts("arjunausers-283-ssh-timeout-from-macos-healthy.txt")
    said = [s for s in paste["facts"]["ticket"]["symptoms"] if s.get("id") == "openssh:connect-to-host-failed"]
    assert [s.get("reason") for s in said] == ["Operation timed out"]   # read, and kept out of the rule
    assert not fired("ssh-between-nodes-refused", paste)


def test_a_refused_login_to_a_public_name_without_a_launcher_is_not_a_launch():
    # set M: ssh from outside to the cluster's public name refused while the site's NIS server was down
    paste = recorded_paste_facts("phy-clusters-28-nis-server-down.txt")
    said = [s for s in paste["facts"]["ticket"]["symptoms"] if s.get("id") == "openssh:connect-to-host-failed"]
    assert [s.get("host") for s in said] == ["cluster.phy.cuhk.edu.hk"]   # read, and kept out of the rule
    assert not fired("ssh-between-nodes-refused", paste)


# clush's and Intel MPI's words for ssh's exit status 255 (issue 24 audit; real pastes, SOURCES.md)
def test_clush_exit_255_is_sshs_own_failure():
    (f,) = fired("ssh-between-nodes-refused", recorded_paste_facts("clush-224-exited-with-exit-code-255.txt"))
    assert "(to localhost): clush's ssh to that node failed" in f.message


def test_clush_exit_1_is_the_remote_commands():
    assert not fired("ssh-between-nodes-refused", recorded_paste_facts("clush-117-exited-with-exit-code-1.txt"))


def test_intel_mpi_wait_status_65280_is_ssh_255():
    (f,) = fired("ssh-between-nodes-refused", recorded_paste_facts("intel-mpi-volcano-2398-bstrap-proxy-ssh-exit-65280.txt"))
    assert "(to mpi-test-worker-0.mpi-test)" in f.message and "65280" in f.message and "srun" in f.fix


def test_intel_mpi_exit_code_256_is_the_proxys_not_ssh():
    assert not fired("ssh-between-nodes-refused", recorded_paste_facts("intel-mpi-az-hop-906-bstrap-proxy-exit-256.txt"))
