"""slingshot-hw-tag-matching-fails on set Q's paste (a warning: UNDELIVERABLE has more than one cause) and
silent on another CXI return code (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import PASTES, facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_undeliverable_is_a_warning_that_names_the_match_mode():
    (f,) = fired("slingshot-hw-tag-matching-fails", recorded_paste_facts("quokka-353-slingshot-hw-tag-matching-fails.txt"))
    assert f.severity == "warning" and "UNDELIVERABLE" in f.message
    assert "export FI_CXI_RX_MATCH_MODE=hybrid" in f.fix


def test_the_providers_own_le_exhaustion_is_an_error():
    # libfabric prov/cxi's FC_SW_ONLOAD_MSG_FATAL as a LUMI job printed it (quoted verbatim in a public README,
    # code index id 53748572796; cxi.toml's example)
    text = ("libfabric:177010:1728372637::cxi:core:cxip_ux_onload_cb():2659<warn> nid001056: RXC (0x3892:79) PtlTE 375:"
            "[Fatal] LE resources not recovered during flow control. FI_CXI_RX_MATCH_MODE=[hybrid|software] is required\n")
    (f,) = fired("slingshot-hw-tag-matching-fails", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "error" and "hardware tag matching" in f.message


def test_a_peer_endpoint_gone_is_not_this_rule():
    gathered = recorded_paste_facts("libfabric-10072-ofi-poll-failed-ptlte-not-found.txt")
    text = (PASTES / "libfabric-10072-ofi-poll-failed-ptlte-not-found.txt").read_text()
    assert "cxi:poll-failed-ptlte-not-found" in {s["id"] for s in find_messages(text)}
    assert not fired("slingshot-hw-tag-matching-fails", gathered)
