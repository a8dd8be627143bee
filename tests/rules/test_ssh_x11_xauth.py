"""ssh-client-xauth-missing (ENV128) on the OpenSSH client's own warnings (client_x11_get_proto)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts, told_paste_facts


def test_no_xauth_data_then_a_refused_cookie_is_the_clients_xauth():
    g = recorded_paste_facts("nixpkgs-19246-ssh-no-xauth-data.txt")
    [hit] = fired("ssh-client-xauth-missing", g)
    assert hit.severity == "warning" and "XAuthLocation" in hit.fix
    # the Tk line after it is the cookie refused, not a node without a display
    assert not fired("no-display-on-node", g)


def test_a_tk_display_error_without_ssh_words_stays_no_display():
    g = told_facts('application-specific initialization failed: couldn\'t connect to display "localhost:10.0"\n')
    assert not fired("ssh-client-xauth-missing", g)
    assert fired("no-display-on-node", g)


# --- folded from the x-identity-x11 branch: ssh -X's failure in real pastes, the client's -v line,
# sshd's own missing xauth (session.c @ V_10_5_P1) and a shell without xauth ---

def test_untrusted_setup_failing_then_an_x_client_failing_is_the_clients_xauth():
    g = recorded_paste_facts("mikadosoftware-workstation-1-ssh-x-untrusted-xeyes.txt")
    [hit] = fired("ssh-client-xauth-missing", g)
    assert "line 7" in hit.message and "XAuthLocation" in hit.fix
    assert not fired("no-display-on-node", g)


def test_untrusted_setup_failing_alone_fires():
    [hit] = fired("ssh-client-xauth-missing", told_paste_facts("warp-4277-ssh-untrusted-x11-setup-failed.txt"))
    assert "line 4" in hit.message


def test_the_clients_no_xauth_program_at_v_is_the_client():
    # clientloop.c @ V_10_5_P1's debug() line as ssh -v prints it (no public paste recorded)
    [hit] = fired("ssh-client-xauth-missing", told_facts("debug1: No xauth program.\n"
                                                         "Warning: No xauth data; using fake authentication data for X11 forwarding.\n"))
    assert "XAuthLocation" in hit.fix and "remote host has no xauth" not in hit.message


def test_the_servers_missing_xauth_points_at_the_remote_host():
    # session.c @ V_10_5_P1's text as ssh -v shows a Remote: debug line (no public paste recorded)
    [hit] = fired("ssh-client-xauth-missing", told_facts(
        "debug1: Remote: No xauth program; cannot forward X11.\nX11 forwarding request failed on channel 0\n"))
    assert "remote host has no xauth" in hit.message and "sshd -T" in hit.fix
    [hit] = fired("ssh-client-xauth-missing", told_facts("Could not run /usr/bin/xauth -q -\n"))
    assert "remote host has no xauth" in hit.message


def test_a_refused_x11_request_without_xauth_words_is_not_xauth():
    assert not fired("ssh-client-xauth-missing", recorded_paste_facts("azure-k8s-readme-x11-request-failed-healthy.txt"))
    assert not fired("ssh-client-xauth-missing", told_facts("debug1: X11 forwarding disabled in server configuration file.\n"))


def test_the_shell_finding_no_xauth_is_a_warning():
    # bash's "%s: command not found" with xauth filled in (no public paste recorded)
    [hit] = fired("ssh-client-xauth-missing", told_facts("$ xauth list\nbash: xauth: command not found\n"))
    assert hit.severity == "warning" and "no xauth" in hit.message and "xorg-x11-xauth" in hit.fix
    assert not fired("ssh-client-xauth-missing", told_facts("bash: xclock: command not found\n"))
