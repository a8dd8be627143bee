"""user-unknown-on-compute-node (rules/node_access.py) judged live on real nsswitch.conf files
(tests/fixtures/nsswitch/README.md) beside a directory client set up on the host, and on set T's
report that id misses users getent -s sss finds."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, file_facts, paste_facts, run_rule

NSS = Path(__file__).resolve().parents[1] / "fixtures" / "nsswitch"
SET_T = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_t"


def _node(tmp_path, conf, **files):
    return file_facts(tmp_path, {"/etc/nsswitch.conf": (NSS / conf).read_text(), **files})


def test_sssd_set_up_but_nsswitch_asks_files_only_is_a_warning(tmp_path):
    (f,) = fired("user-unknown-on-compute-node", _node(tmp_path, "debian12-libc-bin-2.36-default.conf",
                                                       **{"/etc/sssd/sssd.conf": "[sssd]\n"}))
    assert f.severity == "warning" and "does not reach sss for passwd and group" in f.message
    assert "getent -s sss passwd USER" in f.fix and "sss_cache -E" in f.fix


def test_ldap_client_beside_a_file_without_ldap(tmp_path):
    (f,) = fired("user-unknown-on-compute-node", _node(tmp_path, "gentoo-baselayout-compat.conf",
                                                       **{"/etc/nslcd.conf": "uri ldap://ldap/\n"}))
    assert "ldap" in f.message and "passwd: compat" in f.message


@pytest.mark.parametrize("conf, client", [
    ("rhcos-sosreport-sss-first.conf", {"/etc/sssd/sssd.conf": "[sssd]\n"}),
    ("kernt-openldap-files-ldap.conf", {"/etc/nslcd.conf": "uri ldap://ldap/\n"}),
    ("debian12-libc-bin-2.36-default.conf", {}),   # no directory client: files only is right
])
def test_silent_where_nsswitch_reaches_the_client(tmp_path, conf, client):
    assert not fired("user-unknown-on-compute-node", _node(tmp_path, conf, **client))


def test_unread_nsswitch_is_skipped_not_passed(tmp_path):
    findings, skipped = run_rule("user-unknown-on-compute-node", file_facts(tmp_path, {"/etc/hostname": "n1\n"}))
    assert findings == [] and [s["reason"] for s in skipped] == [
        "needs name_service.unreached: /etc/nsswitch.conf was not read"]


def test_the_users_report_that_getent_s_sss_finds_them(tmp_path):
    text = (SET_T / "sssd-7613-nsswitch-lost-sss-users-unknown.txt").read_text()
    (f,) = fired("user-unknown-on-compute-node", paste_facts(tmp_path, text))
    assert f.severity == "warning" and "nsswitch.conf" in f.message and "getent -s sss" in f.fix
