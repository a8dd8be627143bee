"""ssh refused because fail2ban banned the client's address: read from fail2ban's own log lines and
the sshd refusals it counts (knowledge/messages/fail2ban.toml). A refused port 22 alone is what a
stopped sshd also gives (ssh-between-nodes-refused's reading); only the ban line states the ban."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ssh-client-banned-by-fail2ban"
# the sshd lines fail2ban's sshd filter counts as failures
_FAILURES = ("fail2ban:sshd-not-in-allowusers", "fail2ban:sshd-invalid-user", "fail2ban:found")


def _told(f: FactView, sid: str) -> list:
    return [s for s in f.get("ticket.symptoms") or [] if isinstance(s, dict) and s.get("id") == sid]


@rule("NET039", SYMBOL, "warning",
      "fail2ban banned the client's address: its ssh is refused or dropped until the ban ends", impact=4,
      also={"info": "fail2ban logged the ban, but failures from the banned address are still counted: the ban is not taking effect"})
def ssh_client_banned_by_fail2ban(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a paste, fail2ban's "[sshd] Ban <ip>" (fail2ban.log or its journal; "Restore Ban" after
        a restart), with the "Unban" that ended it and the sshd lines its sshd filter counted
        ("User <u> from <ip> not allowed because not listed in AllowUsers", "Invalid user <u> from
        <ip>", fail2ban's own "[sshd] Found <ip>"). Where fail2ban then logs "<ip> already banned",
        the ban is not stopping that address (the fail2ban maintainers' reading): info, not a
        warning.

    Why it matters:
        After maxretry failures within findtime (a mistyped password, a script trying account
        names, AllowUsers refusing a name) fail2ban adds a firewall rule for the address for
        bantime: ssh from it is refused ("Connection refused", a REJECT action) or times out
        (DROP), while sshd runs and every other address logs in. It ends by itself, which makes it
        look like an intermittent sshd or network fault. A warning: the ban is stated, the
        refusal the user saw is inferred from it.

    How to fix:
        On the server (from another address or the console): fail2ban-client status sshd lists
        the banned addresses; fail2ban-client set sshd unbanip <ip> ends the ban; ignoreip in
        jail.local keeps trusted addresses out of it. Or wait for bantime. Use the right account
        name and key, so the failures stop.

    References:
        - https://github.com/fail2ban/fail2ban/blob/bceb35ab34e7d4cbee499826dd7827b2e603d431/fail2ban/server/actions.py
        - https://github.com/fail2ban/fail2ban/blob/bceb35ab34e7d4cbee499826dd7827b2e603d431/config/jail.conf (bantime, findtime, maxretry, ignoreip)
        - https://github.com/fail2ban/fail2ban/issues/2923 (the maintainer: "already banned" means the ban action is not working)
        - https://github.com/urmasrehkalt/ilmajaam/issues/25
    """
    bans = catalogued(f, SYMBOL)
    if not bans:
        return
    s = bans[0]
    ip, jail = s.get("ip"), s.get("jail")
    still = [a for a in _told(f, "fail2ban:already-banned") if a.get("ip") == ip]
    unban = [u for u in _told(f, "fail2ban:unban") if u.get("ip") == ip]
    failures = [x for sid in _FAILURES for x in _told(f, sid)]
    fix = (f"sudo fail2ban-client status {jail}   # on the server: the addresses banned now (Banned IP list)\n"
           f"sudo fail2ban-client set {jail} unbanip {ip}   # ends this ban now (or wait for bantime)\n"
           "# keep a trusted address out of bans: ignoreip = <address> in /etc/fail2ban/jail.local, then "
           "sudo fail2ban-client reload; and log in with the right account name and key, so the failures stop")
    if still:
        a = still[0]
        yield Hit(message=f"fail2ban banned {ip} in jail {jail} (line {s.get('line')}: \"{told_text(s)}\"), then still "
                          f"counted failures from it (line {a.get('line')}: \"{told_text(a)}\"): the ban is not taking "
                          "effect, so it does not explain a refused connection",
                  severity="info", fix=(f"sudo fail2ban-client status {jail}\n"
                                        "sudo iptables -S | grep -i f2b   # the ban action's rules: missing, or on other ports "
                                        "than the service's"),
                  evidence=told_evidence(s))
        return
    ended = f"; the ban ended at line {unban[0].get('line')} (\"{told_text(unban[0])}\")" if unban else ""
    first = min(failures, key=lambda x: x.get("line") or 0) if failures else None
    earned = (f"; the failures it counts begin at line {first.get('line')} (\"{told_text(first)}\")") if first else ""
    yield Hit(message=f"fail2ban banned {ip} in jail {jail} (line {s.get('line')}: \"{told_text(s)}\"): while the ban lasts "
                      f"the firewall refuses or drops that address's connections, though sshd runs{ended}{earned}",
              fix=fix, evidence={**told_evidence(s), "ip": ip, "jail": jail})
