"""nfs-server-not-responding on real kernel logs from public threads (fixtures/pastes, SOURCES.md): a
hard mount still trying (princeton_ansible), a soft mount timed out (cirros), one that timed out and
answered again (linux-surface), and near misses: an NFS client's healthy boot log, a Lustre client's
own network errors."""

from __future__ import annotations

import pytest

from hpcdoctor.sysroot.replay import SnapshotError
from rulekit import fired, recorded_paste_facts



@pytest.mark.parametrize("paste, server, gets", [
    ("princeton-ansible-6612-nfs-not-responding.txt", "td-mf-cl2.princeton.edu", "blocks until it answers (a hard mount)"),
    ("cirros-9-nfs-not-responding-timed-out.txt", "10.0.0.2", "failed with I/O errors (a soft mount)"),
])
def test_a_server_that_stopped_answering_is_an_error_naming_it(paste, server, gets):
    (f,) = fired("nfs-server-not-responding", recorded_paste_facts(paste))
    assert f.severity == "error" and f"NFS server {server} stopped answering" in f.message and gets in f.message
    assert f"rpcinfo -n 2049 -t {server} nfs" in f.fix and f"ping -c 3 {server}" in f.fix


def test_a_server_that_answered_again_is_a_warning_naming_the_line_it_came_back():
    (f,) = fired("nfs-server-not-responding", recorded_paste_facts("linux-surface-1494-nfs-timed-out-then-ok.txt"))
    assert f.severity == "warning" and "NFS server thinkcentre" in f.message and "answered again at line 8" in f.message


def test_a_lustre_clients_own_network_errors_are_not_an_nfs_server():
    assert not fired("nfs-server-not-responding", recorded_paste_facts("jade-hpc-gpu-14-lustre-client-network-error.txt"))


def test_an_nfs_clients_healthy_boot_log_reads_as_nothing():
    # the NFS client's modules loading (RPC transports, the id_resolver key type): no server named silent
    with pytest.raises(SnapshotError):
        recorded_paste_facts("nfs-ganesha-656-nfs-client-boot-healthy.txt")
