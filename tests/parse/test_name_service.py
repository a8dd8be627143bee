"""checks/name_service.py's reading of real /etc/nsswitch.conf files (tests/fixtures/nsswitch/README.md)
and of nsswitch.conf(5)'s action items, and the check over a replayed file system."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.checks.name_service import parse_nsswitch
from hpcdoctor.facts import Unknown
from rulekit import file_facts

NSS = Path(__file__).resolve().parents[1] / "fixtures" / "nsswitch"


def _read(name):
    return (NSS / name).read_text()


@pytest.mark.parametrize("name, passwd", [
    ("debian12-libc-bin-2.36-default.conf", ["files"]),
    ("gentoo-baselayout-compat.conf", ["compat"]),
    ("rhcos-sosreport-sss-first.conf", ["sss", "files", "altfiles", "systemd"]),
    ("kernt-openldap-files-ldap.conf", ["files", "ldap"]),
])
def test_real_files_services_in_order(name, passwd):
    got = parse_nsswitch(_read(name))
    assert got["passwd"]["services"] == passwd and got["passwd"]["reached"] == passwd
    assert got["group"]["services"] == passwd


def test_comments_naming_services_are_not_read():
    # the RHCOS file's comments list "[NOTFOUND=return]" and "passwd:    db files": neither is a line
    got = parse_nsswitch(_read("rhcos-sosreport-sss-first.conf"))
    assert "db" not in got["passwd"]["services"] and got["netgroup"]["services"] == ["sss"]


@pytest.mark.parametrize("action, reached", [
    ("[NOTFOUND=return]", ["files"]),        # nsswitch.conf(5): stop when files does not know the name
    ("[!SUCCESS=return]", ["files"]),        # a negated test of another status also ends on NOTFOUND
    ("[UNAVAIL=return]", ["files", "sss"]),  # only an unavailable files ends it: sss still asked
    ("[!NOTFOUND=return]", ["files", "sss"]),
    ("[SUCCESS=merge]", ["files", "sss"]),
])
def test_actions_that_end_a_lookup_of_an_unknown_name(action, reached):
    # the Debian default's passwd line with sss placed after an action item
    text = _read("debian12-libc-bin-2.36-default.conf").replace("passwd:         files", f"passwd:         files {action} sss")
    assert parse_nsswitch(text)["passwd"]["reached"] == reached


def test_check_reads_the_file_and_a_configured_sssd(tmp_path):
    g = file_facts(tmp_path, {"/etc/nsswitch.conf": _read("debian12-libc-bin-2.36-default.conf"),
                              "/etc/sssd/sssd.conf": "[sssd]\n"})
    ns = g["facts"]["name_service"]
    assert ns["clients"] == {"sss": "/etc/sssd/sssd.conf present"}
    assert ns["unreached"] == {"sss": ["passwd", "group"]}


def test_check_sees_a_running_sssd_by_its_pid_file(tmp_path):
    g = file_facts(tmp_path, {"/etc/nsswitch.conf": _read("kernt-openldap-files-ldap.conf"),
                              "/run/sssd.pid": "4242\n", "/proc/4242/comm": "sssd\n"})
    ns = g["facts"]["name_service"]
    assert ns["clients"] == {"sss": "sssd running (pid 4242, /run/sssd.pid)"} and ns["unreached"] == {"sss": ["passwd", "group"]}


def test_unread_file_is_unknown(tmp_path):
    g = file_facts(tmp_path, {"/etc/hostname": "n1\n"})
    assert "name_service" in g["unknown"] or isinstance(g["facts"].get("name_service"), Unknown)
