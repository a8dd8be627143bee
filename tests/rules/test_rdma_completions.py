"""rdma-peers-unreachable on real NCCL pastes, through the ibv_wc catalogue (rdma-core's enum
ibv_wc_status): status 12 in each wording, and the other statuses read and named without it."""

from __future__ import annotations

import pytest

from rulekit import PASTES, facts, fired, recorded_paste_facts
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


@pytest.mark.parametrize("paste, said", [
    # UCX 1.8 (src/uct/ib/mlx5/ib_mlx5_log.c): the mlx5 syndrome 0x15, the same status in UCX's words
    ("ucx-5199-mlx5-transport-retry-exceeded.txt", "syndrome 0x15 = transport retry count exceeded"),
    # UCX before 1.6: "Error on QP ... (synd 0x15 vend 0x81) opcode SEND"
    ("ucx-2483-mlx5-error-on-qp-retry-exceeded-old.txt", "syndrome 0x15 = transport retry count exceeded"),
])
def test_ucx_mlx5_retry_exceeded_is_the_same_unreachable_peer(paste, said):
    (f,) = fired("rdma-peers-unreachable", recorded_paste_facts(paste))
    assert f.severity == "error" and said in f.message and "unreachable over the fabric" in f.message
    assert "ib_write_bw" in f.fix


def test_ucx_ud_timeout_and_openib_retry_box_are_read_as_the_same_fault():
    # ucx.toml ud-endpoint-timeout's example (openucx/ucx#6522) and the openib box's first line as
    # show_help prints it (help-mpi-btl-openib.txt [pp retry exceeded])
    ud = "[x1000c5s2b1n0:83417:0:83417]       ud_ep.c:263  Fatal: UD endpoint 0x20c1da0 to <no debug data>: unhandled timeout error\n"
    box = "The InfiniBand retry count between two MPI processes has been\nexceeded.  \"Retry count\" is defined in the InfiniBand spec 1.2\n"
    for text, said in ((ud, "UD transport: the peer did not acknowledge"), (box, "Open MPI's openib BTL")):
        (f,) = fired("rdma-peers-unreachable", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
        assert said in f.message


def test_ucx_rnr_retry_is_read_not_judged():
    # syndrome 0x16: the receiver was not ready, not a fabric that drops packets
    text = "ib_mlx5_log.c:139  Receive-no-ready retry count exceeded on mlx5_0:1/IB (synd 0x16 vend 0x81 hw_synd 0/0)\n"
    said = find_messages(text)
    assert [s["id"] for s in said] == ["ucx:mlx5-rnr-retry-exceeded"]
    assert not fired("rdma-peers-unreachable", facts("h100-kvm-1gpu", **{"ticket.symptoms": said}))
