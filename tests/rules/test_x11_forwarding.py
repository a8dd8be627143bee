"""ssh-x11-forwarding-timeout on OpenSSH's own refusals (channels.c) and on an Xt client failing on
ssh's forwarded display, replayed from public pastes (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_xterms_that_stop_opening_on_the_forwarded_display_are_the_timeout_at_warning():
    (f,) = fired("ssh-x11-forwarding-timeout", recorded_paste_facts("unix-se-117159-xterm-forwarded-display-refused.txt"))
    assert f.severity == "warning" and "localhost:10.0" in f.message and "line 3" in f.message
    assert "ssh -Y" in f.fix and "ForwardX11Timeout=" in f.fix


def test_a_wrong_cookie_is_named_before_the_display_it_broke():
    (f,) = fired("ssh-x11-forwarding-timeout", recorded_paste_facts("ompi-users-7721-x11-wrong-authentication.txt"))
    assert f.severity == "error" and "cookie" in f.message and "line 5" in f.message
    assert "xauth list" in f.fix


def test_a_session_without_x11_forwarding_that_opens_no_window_is_healthy():
    assert not fired("ssh-x11-forwarding-timeout", recorded_paste_facts("azure-k8s-readme-x11-request-failed-healthy.txt"))


def test_a_node_without_any_display_is_not_ssh_forwarding():
    # xdpyinfo with DISPLAY unset (no-display-on-node's), not ssh's forwarded display
    assert not fired("ssh-x11-forwarding-timeout", recorded_paste_facts("debian12-xdpyinfo-no-display.txt"))
