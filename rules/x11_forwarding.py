"""X11 forwarding over ssh that stops opening windows: the OpenSSH client's own refusals
(knowledge/messages/openssh.toml) and an Xt client failing on ssh's forwarded display (display.toml)."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ssh-x11-forwarding-timeout"
# sshd's X11DisplayOffset is 10 by default (sshd_config(5)): a forwarded display is localhost:10 and up.
_FORWARDED = re.compile(r"^(?:localhost)?:(?P<n>[0-9]{1,4})(?:\.[0-9]{1,3})?$")
_TIMEOUT_FIX = ("ssh -Y user@host   # trusted forwarding: ForwardX11Timeout applies only to untrusted (-X) forwarding\n"
                "ssh -X -o ForwardX11Timeout=24h user@host   # or keep -X and allow new windows for longer (ssh_config(5))\n"
                "# in ~/.ssh/config for that host: ForwardX11 yes and ForwardX11Trusted yes (or ForwardX11Timeout 24h)")
_COOKIE_FIX = ("xauth list \"$DISPLAY\"   # on the remote host: ssh's cookie for this display must be listed\n"
               "ls -l ~/.Xauthority; echo \"$XAUTHORITY\"   # xauth must be able to write it (not locked, not full, home not read-only)\n"
               "sudo -E env XAUTHORITY=\"$HOME/.Xauthority\" PROGRAM   # another user (sudo) or a container needs this cookie file too")


def _forwarded(display: str) -> bool:
    m = _FORWARDED.match(display or "")
    return bool(m) and int(m.group("n")) >= 10


@rule("NET025", SYMBOL, "error", "ssh's X11 forwarding refuses new windows: ForwardX11Timeout or a wrong cookie", impact=3,
      also={"warning": "an Xt client failed on ssh's forwarded display (localhost:10 and up) and ssh's reason is not pasted"})
def ssh_x11_forwarding_timeout(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the OpenSSH client refusing forwarded X11 connections: "Rejected X11
        connection after ForwardX11Timeout expired" (ssh -v) and "X11 connection rejected
        because of wrong authentication."; as a warning, an Xt client (xterm, xclock) failing with
        "Can't open display: localhost:10.0", a display that is ssh's forwarded one (sshd's
        X11DisplayOffset, 10 by default), with no reason pasted.

    Why it matters:
        With untrusted forwarding (ssh -X), ssh refuses every new X11 connection once the session
        is older than ForwardX11Timeout, twenty minutes by default: windows open for a while, then
        none do, while the shell still works. A cookie ssh did not hand out (xauth failing to
        write ~/.Xauthority, sudo, a container) is refused the same way from the start.

    How to fix:
        Use trusted forwarding (ssh -Y, ForwardX11Trusted yes), or raise ForwardX11Timeout; for a
        wrong cookie, make the program read the cookie ssh wrote (xauth list, XAUTHORITY).

    References:
        - https://man.openbsd.org/ssh_config#ForwardX11Timeout
        - https://man.openbsd.org/sshd_config#X11DisplayOffset
        - https://github.com/openssh/openssh-portable/blob/master/channels.c (x11_open_helper, channel_pre_x11_open)
        - https://man.openbsd.org/ssh#X (-X, -Y and the X11 SECURITY extension)
    """
    told = catalogued(f, SYMBOL)
    timeout = next((s for s in told if s.get("id") == "openssh:x11-rejected-after-timeout"), None)
    cookie = next((s for s in told if s.get("id") == "openssh:x11-rejected-wrong-authentication"), None)
    if timeout is not None:
        yield Hit(message=f"ssh refused a new X11 connection: this -X session is older than ForwardX11Timeout (line "
                          f"{timeout.get('line')}: \"{told_text(timeout)}\")", fix=_TIMEOUT_FIX, evidence=told_evidence(timeout))
        return
    if cookie is not None:
        yield Hit(message=f"ssh refused an X11 connection whose cookie is not the one it gave the server (line "
                          f"{cookie.get('line')}: \"{told_text(cookie)}\"): the program read another ~/.Xauthority, or xauth "
                          "could not write it", fix=_COOKIE_FIX, evidence=told_evidence(cookie))
        return
    failed = next((s for s in f.get("ticket.symptoms") or []
                   if s.get("id") == "display:xt-cant-open-display" and _forwarded(str(s.get("display") or ""))), None)
    if failed is None:
        return
    yield Hit(message=f"an X client could not open ssh's forwarded display {failed.get('display')} (line {failed.get('line')}: "
                      f"\"{told_text(failed)}\"): the usual cause (ssh_config(5)) when windows opened earlier in the same "
                      "session is ForwardX11Timeout, after which ssh -X refuses new X11 connections (twenty minutes by default)",
              severity="warning", fix=_TIMEOUT_FIX + "\n" + _COOKIE_FIX.split("\n")[0], evidence=told_evidence(failed))
