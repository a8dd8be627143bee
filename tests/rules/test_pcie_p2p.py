"""GPU020 pcie-acs-blocks-p2p on real pastes: NCCL working only with P2P off, between GPUs on a PCIe switch."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts


def test_p2p_off_workaround_between_switch_pairs_is_acs():
    (hit,) = fired("pcie-acs-blocks-p2p", recorded_paste_facts("nccl-667-hang-pxb-pix-vtd.txt"))
    assert "NCCL_P2P_DISABLE=1" in hit.message and "ACSCtl" in hit.fix and "ECAP_ACS+0x6.w=0000" in hit.fix


def test_a_switch_topology_alone_is_a_normal_machine():
    # 2080 Tis sharing PCIe switches (PIX rows) in sglang's check_env, no P2P complaint: nothing to say
    facts = recorded_paste_facts("sglang-748-check_env-10x2080ti-sm75-cut.txt")
    assert "pcie:topo-pair-pix" in {s["id"] for s in facts["facts"]["ticket"]["symptoms"]}
    assert not fired("pcie-acs-blocks-p2p", facts)
    # the legend of nvidia-smi topo -m names PXB and PIX too: it is not a GPU pair
    assert not fired("pcie-acs-blocks-p2p", recorded_paste_facts("vllm-dstack-8xh100-collect_env-indented.txt"))
