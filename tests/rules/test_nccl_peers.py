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
    assert not fired("nccl-peer-unreachable", recorded_paste_facts(paste))


def test_ipc_peer_access_refused_of_ray_lightning_24_is_nccls_finding_not_the_programs():
    gathered = recorded_paste_facts("ray-lightning-24-nccl-ipc-peer-access-unsupported.txt")
    (f,) = fired("nccl-p2p-unusable", gathered)
    assert f.severity == "error" and "advertises P2P" in f.message and "export NCCL_P2P_DISABLE=1" in f.fix
    assert not run_rule("gpu-peer-access-unsupported", gathered)[0]   # one finding for the line: NCCL asked first
    assert not run_rule("nccl-system-error", gathered)[0]             # the cause is pasted


def test_nvlink_without_p2p_names_the_links_and_fabric():
    example = messages.families(("nccl",))[0].by_key["p2p-disabled-nvlink"].get("example") or (
        "node1:1234:1250 [0] graph/paths.cc:396 NCCL WARN P2P is disabled between NVLINK connected GPUs 1 and 3. This "
        "should not be the case given their connectivity, and is probably due to a hardware issue.")  # paths.cc format
    (f,) = fired("nccl-p2p-unusable", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(example)}))
    assert "hardware fault" in f.message and "nvidia-smi nvlink -s" in f.fix


@pytest.mark.parametrize("paste", ["nanoflow-22-rtx-3090-no-peer-access.txt", "nccl-258-cuda-gdb-p2p-warnings-healthy.txt",
                                   "../emitters_gpu/h100-nccl-healthy-info.txt"])
def test_p2p_silent_on_a_programs_own_peer_access_and_healthy_runs(paste):
    assert not fired("nccl-p2p-unusable", recorded_paste_facts(paste))


def test_an_ipc_failure_with_another_code_is_not_p2p():
    example = messages.families(("nccl",))[0].by_key["cuda-ipc-open-failed"].get("example")   # code 11
    assert not fired("nccl-p2p-unusable", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(example)}))
