"""The host's own name resolving to no address: sudo's "unable to resolve host", Java's getLocalHost
(knowledge/messages/own_hostname.toml). network.py's hostname-resolves-to-loopback is the other way a
node's /etc/hosts line for its own name goes wrong (a line there, naming loopback)."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "hostname-not-in-etc-hosts"
_LANGS = ("de", "fr", "it", "pt_BR", "pt", "ru", "pl", "nl", "cs", "sv", "ja", "ko", "zh_CN", "zh_TW")


def _host(s: dict) -> str:
    return str(s.get("host") or next((s.get(k) for k in _LANGS if s.get(k)), "") or "")


@rule("NET040", SYMBOL, "warning", "the host's own name resolves to no address: it is in neither /etc/hosts nor DNS",
      impact=4)
def hostname_not_in_etc_hosts(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program that looked up the name of the host it runs on and found no
        address for it: sudo's "unable to resolve host NAME" (1.8; 1.9 adds the resolver's reason,
        "NAME: Name or service not known"), in English and in sudoers' translations (German,
        French, Italian, Portuguese, Russian, Polish, Dutch, Czech, Swedish, Japanese, Korean,
        Chinese), and Java's "UnknownHostException: NAME: NAME: Name or service not known", which
        InetAddress.getLocalHost() throws; MPICH's ch3 TCP module at MPI_Init, "MPID_nem_tcp_init(384)...:
        gethostbyname failed, NAME (errno 1)" (its processor name, looked up where no interface gave an
        address; src/mpid/ch3/channels/nemesis/netmod/tcp/tcp_init.c GetSockInterfaceAddr). On a live node (or its snapshot): getaddrinfo of the
        node's own name answering that it has no address (EAI_NONAME, EAI_NODATA; a resolver that
        could not answer at all is unknown, not a finding).

    Why it matters:
        gethostname() returns the name in /etc/hostname; getaddrinfo() finds its address in
        /etc/hosts or DNS. A host renamed after its image was made, or an installer that set the
        name without adding it to /etc/hosts, has a name nothing resolves: sudo warns on every
        command (and may wait for DNS), Java's getLocalHost and the frameworks built on it
        (Spark, Hadoop) fail, and MPI and Gloo rendezvous that advertise the host name break.

    How to fix:
        Compare hostname with /etc/hosts; add the name to /etc/hosts (the node's address, or
        Debian's 127.0.1.1 on a machine that never talks to peers by name), or have the site's
        DNS know it. On a multi-node cluster map it to the address other nodes reach, not
        loopback (hostname-resolves-to-loopback). On a Mac (the paste says so), 127.0.0.1 and
        macOS's own commands (scutil, dscacheutil).

    References:
        - https://github.com/sudo-project/sudo/blob/2e18923c2e959fff57b60207a261080daa2ebee9/plugins/sudoers/sudoers_cb.c (cb_fqdn)
        - https://github.com/sudo-project/sudo/blob/SUDO_1_8_21/plugins/sudoers/sudoers.c (set_fqdn)
        - https://docs.oracle.com/en/java/javase/21/docs/api/java.base/java/net/InetAddress.html#getLocalHost()
        - https://man7.org/linux/man-pages/man3/getaddrinfo.3.html (EAI_NONAME, EAI_NODATA, EAI_AGAIN)
        - https://man7.org/linux/man-pages/man5/hosts.5.html
        - https://www.debian.org/doc/manuals/debian-reference/ch05.en.html (the hostname resolution, 127.0.1.1)
        - https://github.com/home-assistant/hassbian-scripts/issues/27
        - https://github.com/pmodels/mpich/blob/05a87d2a5f7043ca879da13d3ac4876218e01c38/src/mpid/ch3/channels/nemesis/netmod/tcp/tcp_init.c (GetSockInterfaceAddr, **gethostbyname)
        - https://github.com/sccn/amica/issues/11 (gethostbyname failed at MPI_Init)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        yield from _live(f)
        return
    s = told[0]
    host = _host(s)
    sid = str(s.get("id"))
    who = ("Java's InetAddress.getLocalHost()" if "java" in sid else
           "MPICH's TCP module (MPI_Init, unless MPICH_INTERFACE_HOSTNAME names another host)" if sid.startswith("mpich:") else "sudo")
    plain = bool(host) and "*" not in host   # a user who masks the name with asterisks
    named = shlex.quote(host) if plain else '"$(hostname)"'
    if any(t.get("id") == "prose:apple-mac" for t in f.get("ticket.symptoms") or []):
        # macOS: no getent and no /etc/hostname, and its loopback answers on 127.0.0.1 alone (not Debian's 127.0.1.1).
        fix = (f"hostname; scutil --get LocalHostName   # the names macOS gives itself\n"
               f"dscacheutil -q host -a name {named}   # no answer: the name resolves to nothing\n"
               f"echo \"127.0.0.1 {host if plain else '$(hostname)'}\" | sudo tee -a /etc/hosts   # a single Mac: its loopback "
               "address; on a cluster use the address the other hosts reach")
    else:
        fix = (f"hostname; cat /etc/hostname   # the name the host gives itself\n"
               f"getent hosts {named} || echo 'the name resolves to nothing'   # what /etc/hosts and DNS answer for it\n"
               f"grep -n -w -- {named} /etc/hosts   # no line: the name is missing from /etc/hosts\n"
               f"echo \"127.0.1.1 {host if plain else '$(hostname)'}\" | sudo tee -a /etc/hosts   # a single machine (Debian's convention); "
               "on a cluster use the address the other nodes reach instead, or have the site's DNS know the name")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {who} looked up this host's own name"
                      f"{f' ({host})' if host else ''} and found no address for it: the name is in neither /etc/hosts "
                      "nor DNS (a host renamed after its image was made, or /etc/hostname changed without /etc/hosts)",
              fix=fix, evidence={**told_evidence(s), **({"host": host} if host else {})})


def _live(f: FactView) -> Iterator[Hit]:
    """The node's own lookup (checks/own_name.py): read only where no pasted message said it."""
    own = f["own_name"]
    if not isinstance(own, dict) or own.get("resolves") is not False:
        return
    host = str(own.get("hostname") or "")
    q = shlex.quote(host)
    yield Hit(message=f"this node's name {host} resolves to no address (getaddrinfo: {own.get('error') or 'no address'}): "
                      "it is in neither /etc/hosts nor DNS; sudo warns on every command, Java's getLocalHost fails, and "
                      "rendezvous that advertise the host name cannot",
              fix=(f"getent hosts {q} || echo 'the name resolves to nothing'   # what /etc/hosts and DNS answer for it\n"
                   f"grep -n -w -- {q} /etc/hosts   # no line: the name is missing from /etc/hosts\n"
                   "ip -brief addr   # the node's addresses: the one the other nodes reach belongs beside the name\n"
                   "# administrators: add 'ADDRESS " + host + "' to /etc/hosts (or the site's DNS), ADDRESS one of the above"),
              evidence={"own_name.hostname": host, "own_name.resolves": False, "own_name.error": own.get("error")})
