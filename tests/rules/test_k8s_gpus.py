"""k8s-gpus-marked-unhealthy (rules/k8s_gpus.py) on real pasted nodes (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_capacity_above_allocatable_is_gpus_marked_unhealthy():
    (f,) = fired("k8s-gpus-marked-unhealthy", recorded_paste_facts("k8s-device-plugin-58-allocatable-zero-gpus-unhealthy.txt"))
    assert f.severity == "error" and "capacity 16" in f.message and "allocatable 0" in f.message
    assert "16 of the node's 16" in f.message and "device-plugin" in f.fix


def test_a_node_whose_gpus_are_all_allocatable_is_healthy():
    assert not fired("k8s-gpus-marked-unhealthy",
                     recorded_paste_facts("k8s-device-plugin-112-allocatable-equals-capacity-healthy.txt"))


def test_the_plugins_own_xid_line_names_the_xid():
    # NVIDIA/k8s-device-plugin internal/rm/health.go's format, with an XID and a GPU UUID filled in
    line = "I0101 00:00:00.000000 1 health.go:169] XidCriticalError: Xid=79 on Device=GPU-5f1b; marking device as unhealthy.\n"
    (f,) = fired("k8s-gpus-marked-unhealthy", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line)}))
    assert "XID 79" in f.message
