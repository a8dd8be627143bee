"""logind-kills-user-processes on real public pastes (set U, tests/fixtures/pastes/SOURCES.md): the user's
words that tmux/screen die with the SSH session (an info alone), with KillUserProcesses=yes beside them (a
warning); silent on a user service killed while KillUserProcesses=no, and on a commented default."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts, told_paste_facts

SET_U = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_u"


def test_the_users_words_alone_are_an_info(tmp_path):
    text = (SET_U / "ltsp-community-92-logind-kills-user-processes.txt").read_text()
    (f,) = fired("logind-kills-user-processes", paste_facts(tmp_path, text))
    assert f.severity == "info" and "screen and tmux processes are terminated" in f.message
    assert "systemd-run --scope --user tmux" in f.fix and "loginctl enable-linger" in f.fix


def test_words_and_the_setting_together_are_a_warning():
    (f,) = fired("logind-kills-user-processes", recorded_paste_facts("optimus-manager-108-tmux-killed-kill-user-processes.txt"))
    assert f.severity == "warning" and "KillUserProcesses=yes (line 5)" in f.message


def test_silent_where_the_setting_is_no_and_a_service_died():
    assert not fired("logind-kills-user-processes", told_paste_facts("systemd-8486-user-service-killed-kill-user-processes-no.txt"))


def test_silent_on_the_shipped_logind_conf():
    # Debian 12's /etc/systemd/logind.conf as its systemd package installs it (copied from the development VM): the defaults commented out
    assert not fired("logind-kills-user-processes", told_paste_facts("debian12-systemd-logind-conf-shipped.txt"))


def test_a_commented_yes_is_not_the_setting():
    # the same file's line with its value changed but still commented: logind does not read it
    assert not fired("logind-kills-user-processes", told_facts("#KillUserProcesses=yes\n"))
