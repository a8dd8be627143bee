"""etc-hosts-stale-entries (rules/stale_hosts.py): Grid Engine's commlib naming two hosts for one
address, on set AC's paste (tests/fixtures/pastes/SOURCES.md) and commlib's own formats (msg_commlib.h,
no public paste recorded for them)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts



def test_qrsh_after_spot_instances_restarted():
    # jtriley/StarCluster#570 (set AC)
    (f,) = fired("etc-hosts-stale-entries", recorded_paste_facts("starcluster-570-qrsh-host-name-mismatch-stale-etc-hosts.txt"))
    assert f.severity == "error"
    assert '"node001"' in f.message and '"node028"' in f.message and "stale /etc/hosts" in f.message
    assert "getent hosts node001 node028" in f.fix and "grep -n -w -e node001 -e node028 /etc/hosts" in f.fix
    assert "host_aliases" in f.fix


def test_reverse_mapping_names_the_address():
    # the format of MSG_CL_TCP_FW_ADDR_NAME_RESOLVE_HOST_ERROR_SSSS (85008)
    text = 'error: commlib error: can\'t resolve ip address (reverse mapping of IP "10.1.0.28" returns "node028" while name resolving returns "node001" for host "node028")\n'
    (f,) = fired("etc-hosts-stale-entries", told_facts(text))
    assert "getent hosts 10.1.0.28" in f.fix and "10.1.0.28" in f.message


def test_a_short_name_against_its_domain_is_not_a_stale_entry():
    # the same format with one host's short and fully qualified names: host_aliases / default_domain, not this
    text = ('error: commlib error: local host name error (IP based host name resolving "node001.cluster" '
            'doesn\'t match client host name from connect message "node001")\n')
    assert not fired("etc-hosts-stale-entries", told_facts(text))
    assert not fired("etc-hosts-stale-entries", told_facts("error: commlib error: local host name error\n"))
