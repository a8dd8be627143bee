"""The ssh client unable to get the local display's xauth cookie, so X forwarding runs on a made-up
one (knowledge/messages/openssh.toml x11-no-xauth-data, x11-untrusted-setup-failed)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ssh-client-xauth-missing"

_FIX = (
    "command -v xauth; xauth list \"$DISPLAY\"   # on your own machine (the ssh client): no xauth, or no line for this "
    "display, is the cause\n"
    "ssh -v -Y HOST true 2>&1 | grep -iE 'xauth|x11'   # the xauth command ssh runs (its XAuthLocation) and what it got\n"
    "echo \"XAuthLocation $(command -v xauth)\" >> ~/.ssh/config   # ssh built to look elsewhere (/usr/X11R6/bin/xauth, "
    "XQuartz's /opt/X11/bin/xauth): point it at the xauth you have\n"
    "# no xauth at all: install it on the client (Debian, Ubuntu: xauth; RHEL: xorg-x11-xauth; macOS: XQuartz), then log "
    "in again with ssh -X or -Y")


@rule("ENV128", SYMBOL, "warning", "the ssh client has no xauth cookie for the local display: X forwarding uses a fake one",
      impact=4)
def ssh_client_xauth_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The OpenSSH client's "Warning: No xauth data; using fake authentication data for X11
        forwarding." and, for ssh -X, "Warning: untrusted X11 forwarding setup failed: xauth key
        data not generated": before forwarding X it runs xauth (XAuthLocation) to read the local
        display's cookie, and got none.

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
        - https://man.openbsd.org/ssh_config#XAuthLocation
        - https://github.com/NixOS/nixpkgs/issues/19246 (ssh looked for /usr/X11R6/bin/xauth; a link there fixed it)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    yield Hit(message=f"the ssh client got no xauth cookie for the local display (line {s.get('line')}: \"{told_text(s)}\"): "
                      "it forwards X with a made-up cookie (ssh -Y) or not at all (ssh -X), so X programs on the remote "
                      "host are refused by your X server (\"Invalid MIT-MAGIC-COOKIE-1 key\"): the client machine lacks "
                      "xauth where ssh looks, or a cookie for this display",
              fix=_FIX, evidence=told_evidence(s))
