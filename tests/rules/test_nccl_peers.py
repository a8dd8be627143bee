"""nccl-peer-unreachable (rules/nccl_peers.py): the public pastes of sglang#3820 (no route to host) and gpustack#2275
(connection aborted, this node's interface named), NCCL 2.30's accept wording, and silence where NCCL found no
interface at all (nccl-socket-ifname answers), on a healthy NCCL run and on a failed accept of one node."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts, run_rule
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages


def test_no_route_to_host_is_an_error_naming_the_peer():
    (f,) = fired("nccl-peer-unreachable", recorded_paste_facts("sglang-3820-nccl-poll-connect-no-route-to-host.txt"))
    assert f.severity == "error" and "peer 10.0.0.4" in f.message and "firewall" in f.message
    assert "ip route get 10.0.0.4" in f.fix and "NCCL_SOCKET_IFNAME" in f.fix


def test_an_aborted_connection_is_a_warning_with_this_nodes_interface():
    gathered = recorded_paste_facts("gpustack-2275-nccl-connect-abort-other-subnet.txt")
    (f,) = fired("nccl-peer-unreachable", gathered)
    assert f.severity == "warning" and "peer 172.21.0.1" in f.message
    assert "this node's NCCL uses ens3 172.16.0.16" in f.message
    assert not run_rule("nccl-socket-ifname", gathered)[0]   # the interface exists: one finding, this one


def test_nccl_2_30_accept_retries_and_a_link_local_peer_are_errors():
    example = messages.families(("nccl",))[0].by_key["socket-accept-retries-exceeded"].get("example")
    (f,) = fired("nccl-peer-unreachable", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(example)}))
    assert f.severity == "error" and "No route to host" in f.message
    line = ("node1:1234:1250 [0] os/linux.cc:328 NCCL WARN ncclOsSocketPollConnect to 169.254.20.10<52597> failed "
            "with error Connection refused")   # NCCL's src/os/linux.cc format with ms-swift#8043's link-local peer
    (g,) = fired("nccl-peer-unreachable", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line)}))
    assert g.severity == "error" and "link-local" in g.message


@pytest.mark.parametrize("paste", ["../emitters_gpu/h100-nccl-healthy-info.txt", "nccl-tests-166-proxy-accept-failed.txt",
                                   "../emitters_gpu/h100-nccl-socket-ifname-missing.txt"])
def test_silent_on_a_healthy_run_a_failed_accept_and_a_missing_interface(paste):
    assert not run_rule("nccl-peer-unreachable", recorded_paste_facts(paste))[0]
