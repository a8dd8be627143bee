"""ssh-between-nodes-refused on the server's side: sshd in debug mode (-d, one connection then exit),
sshd dropping connections past MaxStartups (openssh.toml, sshd.c @ V_10_5_P1), and a user saying the
other node's sshd quits (prose.toml), on real pastes (tests/fixtures/pastes) and sshd's format strings."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages



def test_sshd_in_debug_mode_alone_is_a_warning_with_the_daemons_fix():
    (f,) = fired("ssh-between-nodes-refused", recorded_paste_facts("win32-openssh-451-sshd-debug-mode-log.txt"))
    assert f.severity == "warning" and "sshd -d serves one connection and exits" in f.message
    assert "/usr/sbin/sshd -D -p 12345 &" in f.fix and "never -d" in f.fix


def test_sshd_in_debug_mode_beside_a_refusal_is_an_error():
    text = ("debug1: Server will not fork when running in debugging mode.\n"
            "ssh: connect to host worker-1 port 12345: Connection refused\n")
    (f,) = fired("ssh-between-nodes-refused", told_facts(text))
    assert f.severity == "error" and "Connection refused" in f.message


def test_maxstartups_drop_names_the_limit_and_fewer_connections_at_once():
    text = "sshd[1234]: drop connection #10 from [10.0.0.12]:51832 on [10.0.0.11]:22 past MaxStartups\n"
    (f,) = fired("ssh-between-nodes-refused", told_facts(text))
    assert f.severity == "error" and "(MaxStartups)" in f.message and "(from 10.0.0.12)" in f.message
    assert "plm_rsh_num_concurrent" in f.fix and "sshd -T | grep -i maxstartups" in f.fix


def test_a_user_saying_the_other_sshd_quits_is_info():
    (f,) = fired("ssh-between-nodes-refused", recorded_paste_facts("horovod-1226-sshd-quits-on-secondary-worker.txt"))
    assert f.severity == "info" and "sshd process quits" in f.message and "horovodrun -p 12345" in f.fix


def test_a_banner_closed_by_a_code_forge_is_read_and_not_fired():
    text = ("kex_exchange_identification: Connection closed by remote host\n"
            "Connection closed by 140.82.121.4 port 22\n"
            "fatal: Could not read from remote repository.\n")
    assert "openssh:banner-exchange-closed" in {s["id"] for s in find_messages(text)}
    assert not fired("ssh-between-nodes-refused", told_facts(text))


def test_words_about_sshd_that_say_nothing_stopped_are_silent():
    assert not fired("ssh-between-nodes-refused", told_facts("Install openssh-server and start sshd on every node.\n"))
