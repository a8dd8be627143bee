"""mpi-tcp-interface-unreachable on public pastes (tests/fixtures/pastes, SOURCES.md there; set I's
horovod-106) and Open MPI's own format strings (btl_tcp_endpoint.c, the TCP FAQ): a connect() to a
peer's address that does not route, and an exclude list that no longer excludes loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, recorded_paste_facts, told_facts, with_env
from hpcdoctor.triage.messages import find_messages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SYMBOL = "mpi-tcp-interface-unreachable"


@pytest.mark.parametrize("paste, address, why", [
    ("ompi-2168-btl-tcp-no-route-to-host.txt", "10.102.1.194", "No route to host"),
    ("ompi-4963-btl-tcp-multi-nic-connect-fail.txt", "10.10.10.2", "print errno 115 there"),
    ("ompi-6377-btl-tcp-virbr0-docker0.txt", "192.168.122.1", "print errno 115 there"),
])
def test_a_connect_that_does_not_route_is_read_and_the_fix_names_the_interface(paste, address, why):
    (f,) = fired("mpi-tcp-interface-unreachable", recorded_paste_facts(paste))
    assert f.severity == "warning"
    assert f"peer's address {address}: " in f.message and why in f.message
    assert "--mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0" in f.fix and "ip -brief address" in f.fix


@pytest.mark.parametrize("text", [
    # opal/mca/btl/tcp/btl_tcp_endpoint.c @ v4.1.8, mca_btl_tcp_endpoint_start_connect's BTL_PEER_ERROR
    "[[1234,1],0][btl_tcp_endpoint.c:793:mca_btl_tcp_endpoint_start_connect] from node1 to: node2 "
    "Unable to connect to the peer 172.17.0.1 on port 1024: Network is unreachable\n",
    # docs/tuning-apps/networking/tcp.rst @ v5.0.10, the FAQ's own example
    "btl_tcp_endpoint.c:572:mca_btl_tcp_endpoint_complete_connect: connect() failed with errno=113\n",
])
def test_the_other_forms_of_the_connect_failure(text):
    (f,) = fired("mpi-tcp-interface-unreachable", told_facts(text))
    assert "could not connect to a peer's address" in f.message


@pytest.mark.parametrize("text", [
    # a peer that died: the FAQ's "Connection reset by peer" is not routing
    "[n1][[463,1],0][btl_tcp_endpoint.c:803:mca_btl_tcp_endpoint_complete_connect] connect() to 10.0.0.2 failed: "
    "Connection refused (111)\n",
    "btl_tcp_endpoint.c:572:mca_btl_tcp_endpoint_complete_connect: connect() failed with errno=104\n",
])
def test_a_connect_failure_that_is_not_routing_is_left_alone(text):
    assert find_messages(text)
    assert not fired("mpi-tcp-interface-unreachable", told_facts(text))


def test_the_blind_ticket_an_exclude_list_without_loopback():
    text = (FIXTURES / "tickets_blind_i" / "horovod-106-mpirun-hangs-many-network-interfaces.txt").read_text()
    t = told_facts(text)
    (f,) = fired("mpi-tcp-interface-unreachable", t)
    assert "exclude list virbr0,virbr0-nic does not name the loopback device (line 7" in f.message
    assert f.fix.startswith("mpirun --mca btl_tcp_if_exclude lo,virbr0,virbr0-nic ...")
    assert not fired("ssh-between-nodes-refused", t)


def test_an_exclude_list_in_the_environment_pasted_or_live():
    (f,) = fired("mpi-tcp-interface-unreachable", recorded_paste_facts("alphacsc-85-ompi-exclude-docker0-env.txt"))
    assert "exclude list docker0 does not name" in f.message
    (f,) = fired("mpi-tcp-interface-unreachable", with_env("h100-kvm-1gpu", {"OMPI_MCA_btl_tcp_if_exclude": "docker0,virbr0"}))
    assert "OMPI_MCA_btl_tcp_if_exclude=docker0,virbr0 in the job's environment" in f.message
    assert f.evidence == {"env.vars.OMPI_MCA_btl_tcp_if_exclude": "docker0,virbr0"}


def test_an_exclude_list_that_names_loopback_is_healthy():
    assert not fired("mpi-tcp-interface-unreachable", recorded_paste_facts("pbmpi-1-btl-tcp-if-exclude-lo-docker0.txt"))
    assert not fired("mpi-tcp-interface-unreachable", with_env("h100-kvm-1gpu", {"OMPI_MCA_btl_tcp_if_exclude": "127.0.0.1/8,docker0"}))
    assert not fired("mpi-tcp-interface-unreachable", with_env("h100-kvm-1gpu", {"OMPI_MCA_btl_tcp_if_include": "eth0"}))


def test_silent_without_an_mpi_tcp_message():
    assert not fired("mpi-tcp-interface-unreachable", recorded_paste_facts("examl-19-libmpi-40-missing.txt"))
    assert not fired("mpi-tcp-interface-unreachable", recorded_paste_facts("grudge-227-openmpi-not-enough-slots-ci.txt"))


@pytest.mark.parametrize("paste, quoted", [
    ("ompi-users-mail-second-ethernet-interface-hang.txt", "btl_tcp_if_include eth0"),
    ("horovod-106-exclude-cured-hang-comment.txt", "btl_tcp_if_exclude"),
])
def test_a_user_saying_naming_the_interfaces_cured_a_hang_is_a_hint(paste, quoted):
    (f,) = fired("mpi-tcp-interface-unreachable", recorded_paste_facts(paste))
    assert f.severity == "info" and quoted in f.message and "btl_tcp_if_include" in f.fix


def test_silent_where_naming_the_interface_did_not_help():
    # the paste holds no program output, so it is read for its messages only, as check --from would
    text = (FIXTURES / "pastes" / "ompi-9041-include-did-not-help.txt").read_text()
    assert not fired("mpi-tcp-interface-unreachable", told_facts(text))
