"""ssh-client-xauth-missing (ENV128) on the OpenSSH client's own warnings (client_x11_get_proto)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


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
