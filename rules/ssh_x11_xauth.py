"""The ssh client unable to get the local display's xauth cookie, so X forwarding runs on a made-up
one (knowledge/messages/openssh.toml x11-no-xauth-data, x11-untrusted-setup-failed,
x11-client-no-xauth-program), and sshd without an xauth of its own (x11-server-no-xauth-program,
x11-server-could-not-run-xauth)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, shell_command, told_evidence, told_text

SYMBOL = "ssh-client-xauth-missing"

_FIX = (
    "command -v xauth; xauth list \"$DISPLAY\"   # on your own machine (the ssh client): no xauth, or no line for this "
    "display, is the cause\n"
    "ssh -v -Y HOST true 2>&1 | grep -iE 'xauth|x11'   # the xauth command ssh runs (its XAuthLocation) and what it got\n"
    "echo \"XAuthLocation $(command -v xauth)\" >> ~/.ssh/config   # ssh built to look elsewhere (/usr/X11R6/bin/xauth, "
    "XQuartz's /opt/X11/bin/xauth): point it at the xauth you have\n"
    "# no xauth at all: install it on the client (Debian, Ubuntu: xauth; RHEL: xorg-x11-xauth; macOS: XQuartz), then log "
    "in again with ssh -X or -Y")
# sshd's side (session.c session_setup_x11fwd, do_rc_files @ V_10_5_P1): no xauth where the server looks
_SERVER = ("openssh:x11-server-no-xauth-program", "openssh:x11-server-could-not-run-xauth")
_SERVER_FIX = (
    "ssh -v -Y HOST true 2>&1 | grep -i -e xauth -e x11   # the server's Remote: line names its reason for refusing X11\n"
    "command -v xauth || echo 'no xauth on this host'   # on the REMOTE host: sshd runs xauth there to store the session's cookie\n"
    "sudo sshd -T | grep -i -e x11forwarding -e xauthlocation   # administrators, on the remote host: X11Forwarding yes, "
    "XAuthLocation an existing xauth\n"
    "# administrators, on the remote host: install xauth (Debian, Ubuntu: xauth; RHEL: xorg-x11-xauth), then log in again")


@rule("ENV128", SYMBOL, "warning", "ssh finds no xauth for X11 forwarding: a fake cookie on the client side, or none on the server",
      impact=4)
def ssh_client_xauth_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The OpenSSH client's "Warning: No xauth data; using fake authentication data for X11
        forwarding." and, for ssh -X, "Warning: untrusted X11 forwarding setup failed: xauth key
        data not generated": before forwarding X it runs xauth (XAuthLocation) to read the local
        display's cookie, and got none; at ssh -v, "No xauth program." (nothing at XAuthLocation).
        The server's side: sshd with no xauth of its own, "No xauth program; cannot forward X11."
        (before 7.x "... cannot forward with spoofing.") and "Could not run /usr/bin/xauth -q -".
        A shell's "xauth: command not found" alone is read as a warning that xauth is absent there.

    Why it matters:
        With ssh -Y the session forwards X with a made-up cookie, which the local X server refuses
        where it checks cookies: programs on the cluster then fail with "Invalid MIT-MAGIC-COOKIE-1
        key" or "couldn't connect to display localhost:10.0", which reads like the cluster's fault
        (no display there) while the client machine is what lacks xauth. With ssh -X no X
        forwarding is set up at all.

    How to fix:
        On the client machine: find xauth and the display's cookie (xauth list), point ssh at it
        (XAuthLocation in ~/.ssh/config) or install it (Debian xauth, RHEL xorg-x11-xauth, macOS
        XQuartz), and log in again.

    References:
        - https://github.com/openssh/openssh-portable/blob/master/clientloop.c (client_x11_get_proto)
        - https://github.com/openssh/openssh-portable/blob/V_10_5_P1/session.c (session_setup_x11fwd, do_rc_files: the server's xauth)
        - https://man.openbsd.org/ssh_config#XAuthLocation
        - https://github.com/NixOS/nixpkgs/issues/19246 (ssh looked for /usr/X11R6/bin/xauth; a link there fixed it)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        # the shell's own "xauth: command not found" (shell.toml): xauth is not on PATH where it ran
        shell = next((s for s in f.get("ticket.symptoms") or []
                      if s.get("id") == "shell:command-not-found" and shell_command(s) == "xauth"), None)
        if shell is not None:
            yield Hit(message=f"the shell found no xauth on this host (line {shell.get('line')}: \"{told_text(shell)}\"): ssh's "
                              "X11 forwarding needs xauth on the machine you ssh from (for the local cookie) and on the "
                              "remote host (for sshd to store it there)",
                      fix=_FIX, evidence=told_evidence(shell))
        return
    client = [s for s in told if s.get("id") not in _SERVER]
    if not client:
        s = told[0]
        yield Hit(message=f"sshd on the remote host has no xauth it can run (line {s.get('line')}: \"{told_text(s)}\"): it "
                          "cannot store the session's cookie there, so X11 forwarding is refused (or its cookie missing) "
                          "and X programs on that host find no display they may use",
                  fix=_SERVER_FIX, evidence=told_evidence(s))
        return
    s = client[0]
    yield Hit(message=f"the ssh client got no xauth cookie for the local display (line {s.get('line')}: \"{told_text(s)}\"): "
                      "it forwards X with a made-up cookie (ssh -Y) or not at all (ssh -X), so X programs on the remote "
                      "host are refused by your X server (\"Invalid MIT-MAGIC-COOKIE-1 key\"): the client machine lacks "
                      "xauth where ssh looks, or a cookie for this display",
              fix=_FIX, evidence=told_evidence(s))
