"""rdma-peers-unreachable on real NCCL pastes, through the ibv_wc catalogue (rdma-core's enum
ibv_wc_status): status 12 in each wording, and the other statuses read and named without it."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, quoted", [
    # O's ticket: the user's title retells NCCL's WARN without "with" (NVIDIA/nccl#1170)
    ("../tickets_blind_o/nccl-1170-nics-cannot-reach-each-other.txt", "NET/IB Got completion error 12"),
    # NCCL 2.4-2.9's own wording (NVIDIA/nccl#902)
    ("../tickets_blind_c/nccl-902-ib-completion-error-12-roce.txt", "Got completion with error 12, opcode 0"),
])
def test_status_12_is_a_peer_the_fabric_does_not_reach(paste, quoted):
    (f,) = fired("rdma-peers-unreachable", recorded_paste_facts(paste))
    assert f.severity == "error" and quoted in f.message
    assert "IBV_WC_RETRY_EXC_ERR" in f.message and "unreachable over the fabric" in f.message
    assert "ibv_devinfo" in f.fix and "ib_write_bw" in f.fix and "show_gids" in f.fix


def test_another_status_is_named_and_not_judged():
    # NVIDIA/nccl#928: status 4, a local protection error on every host, not the fabric
    text = (PASTES / "nccl-928-ib-completion-error-on-every-host.txt").read_text(encoding="utf-8")
    assert "ibv_wc:IBV_WC_LOC_PROT_ERR" in {s["id"] for s in find_messages(text)}
    assert not fired("rdma-peers-unreachable", recorded_paste_facts("nccl-928-ib-completion-error-on-every-host.txt"))


def test_every_wc_status_is_catalogued_with_its_number_and_text():
    (fam,) = messages.families(("ibv_wc",))
    assert [e.get("code") for e in fam.entries] == list(range(24))
    texts = {e.key: e.get("message") for e in fam.entries}
    assert texts["IBV_WC_RETRY_EXC_ERR"] == "transport retry counter exceeded"
    assert texts["IBV_WC_WR_FLUSH_ERR"] == "Work Request Flushed Error"
    fed = {e.key for e in fam.entries if e.get("rules")}
    assert fed == {"IBV_WC_RETRY_EXC_ERR"}


@pytest.mark.parametrize("line, key", [
    # NCCL 2.21-2.29 and HEAD's formats (net_ib.cc @ v2.21.5-1, net_ib/p2p.cc @ 5067397c), values filled in
    ("NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with status=12 opcode=0 len=0 vendor err 129 (Send)",
     "IBV_WC_RETRY_EXC_ERR"),
    ("NCCL WARN NET/IB: Got completion from peer 10.0.0.2<4242> with status=RNR retry counter exceeded(13) "
     "opcode=Send(0) vendor_err=135", "IBV_WC_RNR_RETRY_EXC_ERR"),
    ("NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4242> with error 5, opcode 0, len 0, vendor err 249",
     "IBV_WC_WR_FLUSH_ERR"),
])
def test_each_nccl_wording_is_decoded_by_its_number(line, key):
    assert f"ibv_wc:{key}" in {s["id"] for s in find_messages(line + "\n")}
