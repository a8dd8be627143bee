"""ssh-client-banned-by-fail2ban on public pastes (tests/fixtures/pastes, SOURCES.md there): fail2ban's
own Ban line with the sshd refusals it counted; a ban fail2ban's maintainers call ineffective ("already
banned") is info; failures counted without a ban are silent."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_a_ban_of_the_clients_address_is_a_warning_with_its_end_and_its_cause():
    # urmasrehkalt/ilmajaam#25: "[sshd] Ban 90.191.21.38", the Unban an hour later, AllowUsers refusals before it
    (f,) = fired("ssh-client-banned-by-fail2ban", recorded_paste_facts("ilmajaam-25-fail2ban-sshd-ban.txt"))
    assert f.severity == "warning" and "fail2ban banned 90.191.21.38 in jail sshd" in f.message
    assert "[sshd] Unban 90.191.21.38" in f.message and "not allowed because not listed in AllowUsers" in f.message
    assert "sudo fail2ban-client set sshd unbanip 90.191.21.38" in f.fix
    assert not fired("ssh-between-nodes-refused", recorded_paste_facts("ilmajaam-25-fail2ban-sshd-ban.txt"))


def test_a_ban_that_does_not_take_effect_is_info():
    # fail2ban/fail2ban#2923: Ban, then "already banned" for the same address; the maintainer: the action is not working
    (f,) = fired("ssh-client-banned-by-fail2ban", recorded_paste_facts("fail2ban-2923-ban-already-banned.txt"))
    assert f.severity == "info" and "not taking effect" in f.message and "iptables -S" in f.fix


def test_failures_without_a_ban_are_silent():
    # fail2ban/fail2ban#2888's Found lines: failures counted, no ban logged
    assert not fired("ssh-client-banned-by-fail2ban", recorded_paste_facts("fail2ban-2888-found-lines-only.txt"))
