"""hostname-not-in-etc-hosts (rules/hostname_lookup.py) on set S's tickets and other threads' pastes
(tests/fixtures/pastes/SOURCES.md): sudo's and Java's own-name lookups, and the live lookup of the
node's own name (checks/own_name.py)."""

from __future__ import annotations

import json

import pytest

from rulekit import PASTES, facts, fired, recorded_paste_facts, run_rule, told_facts
from hpcdoctor.checks import own_name
from hpcdoctor.facts import Unknown

S = "../tickets_blind_s/"   # set S, unsealed: recorded_paste_facts reads fixtures/pastes/<name>


@pytest.mark.parametrize("paste, host", [
    (S + "dietpi-2932-etc-hosts-has-old-hostname.txt", "hostname"),
    (S + "hassbian-scripts-27-hostname-not-in-etc-hosts.txt", "hassbian"),
    ("terry-21-sudo-unable-to-resolve-host.txt", "string-string"),
])
def test_sudo_unable_to_resolve_its_own_host(paste, host):
    (f,) = fired("hostname-not-in-etc-hosts", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"({host})" in f.message and "/etc/hosts" in f.message
    assert f"getent hosts {host}" in f.fix


def test_sudo_translated_and_java_getlocalhost():
    # sudoers' it.po msgstr, and InetAddress.getLocalHost's "<name>: <name>: <gai_strerror>"
    (f,) = fired("hostname-not-in-etc-hosts", told_facts("sudo: impossibile risolvere l'host nodo01\n"))
    assert "(nodo01)" in f.message
    (j,) = fired("hostname-not-in-etc-hosts", told_facts(
        "java.net.UnknownHostException: node17: node17: Name or service not known\n"))
    assert "getLocalHost" in j.message


def test_wget_unable_to_resolve_a_server_is_not_the_own_host():
    # wget's "unable to resolve host address 'download.pytorch.org'": a server's name, not this host's
    findings, _skipped = run_rule("hostname-not-in-etc-hosts", recorded_paste_facts("offline-vm-wget.txt"))
    assert findings == []


    assert not fired("user-unknown-on-compute-node",
                     recorded_paste_facts(S + "bitnami-docker-airflow-53-arbitrary-uid-no-passwd-entry-healthy.txt"))


UNRESOLVED = json.loads((PASTES / "getaddrinfo-debian12-vm-name-unresolved.json").read_text())


def test_the_own_name_lookup_on_a_node():
    # the resolver's real answers on the development VM: localhost from /etc/hosts, and a name nothing knows
    assert own_name.lookup("localhost")["resolves"] is True
    assert UNRESOLVED == {"resolves": False, "error": "Name or service not known"}
    got = own_name.facts_of("node-renamed-s2", UNRESOLVED)
    (f,) = fired("hostname-not-in-etc-hosts", facts("h100-kvm-1gpu", own_name=got))
    assert f.severity == "warning" and "node-renamed-s2" in f.message and "Name or service not known" in f.message
    assert not fired("hostname-not-in-etc-hosts",
                     facts("h100-kvm-1gpu", own_name=own_name.facts_of("vm", own_name.lookup("localhost"))))


def test_an_unreadable_lookup_is_unknown_not_a_pass():
    assert isinstance(own_name.facts_of("vm", {"addresses": []}), Unknown)
    findings, skipped = run_rule("hostname-not-in-etc-hosts", facts("h100-kvm-1gpu", own_name=Unknown("not recorded")))
    assert findings == [] and skipped
