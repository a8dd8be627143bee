"""k8s-pod-unschedulable and dra-resource-class-missing (rules/k8s_scheduling.py) on real pasted
FailedScheduling events and kubectl get pods tables (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_insufficient_gpu_with_the_preemption_suffix_names_the_gpu_and_the_device_plugin():
    (f,) = fired("k8s-pod-unschedulable", recorded_paste_facts("geti-1876-failedscheduling-insufficient-gpu.txt"))
    assert f.severity == "error" and "1 Insufficient nvidia.com/gpu" in f.message
    assert "No preemption victims" not in f.message.split(": ", 2)[-1]   # context, not a reason
    assert "kubectl describe nodes | grep -A8 -E 'Allocatable|Allocated resources'" in f.fix
    assert "kubectl get pods -n gpu-operator" in f.fix and "grep nvidia-device-plugin" in f.fix
    assert "resources.limits nvidia.com/gpu" in f.fix


def test_an_event_cut_to_its_taint_reason_gives_the_toleration_and_the_pending_pods_name():
    (f,) = fired("k8s-pod-unschedulable", recorded_paste_facts("aibrix-909-untolerated-gpu-taint-pending.txt"))
    assert f.severity == "error" and "untolerated taint {nvidia.com/gpu: present}" in f.message
    assert 'key: "nvidia.com/gpu"' in f.fix and "Taints" in f.fix
    assert "kubectl describe pod deepseek-coder-7b-kvcache-7c984cdff8-xq5pk" in f.fix


def test_every_reason_of_an_older_message_is_named_with_its_own_fix():
    (f,) = fired("k8s-pod-unschedulable", recorded_paste_facts("triton-4761-gpu-taint-and-node-selector.txt"))
    for said in ("Insufficient nvidia.com/gpu", "taint {protect: no_schedule}", "didn't match Pod's node affinity/selector"):
        assert said in f.message
    assert "kubectl get nodes --show-labels" in f.fix and 'key: "protect"' in f.fix
    assert "kubectl get pod model-2-79d7d6786c-bprm8" in f.fix   # kubectl get events' OBJECT column


def test_a_cordoned_node_beside_the_gpu_shortage_is_uncordoned():
    (f,) = fired("k8s-pod-unschedulable", recorded_paste_facts("k8s-device-plugin-119-insufficient-gpu-and-cordoned.txt"))
    assert "node(s) were unschedulable" in f.message and "kubectl uncordon NODE" in f.fix


def test_a_node_state_taint_is_the_node_not_a_toleration():
    # kube-scheduler's format (taint_toleration.go, FitError.Error) with the node lifecycle
    # controller's taint, as hystax/optscale#568 pasted it from kubectl get events
    line = ("2m57s       Warning   FailedScheduling          pod/keeper-577cccc7db-s4r4v          0/1 nodes are available: 1 "
            "node(s) had untolerated taint {node.kubernetes.io/unreachable: }. preemption: 0/1 nodes are available: "
            "1 Preemption is not helpful for scheduling.\n")
    (f,) = fired("k8s-pod-unschedulable", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line)}))
    assert "node.kubernetes.io/unreachable" in f.fix and "kubectl get nodes" in f.fix and "tolerations" not in f.fix


def test_a_bare_pending_row_is_read_at_info_with_its_own_name_and_namespace():
    (f,) = fired("k8s-pod-unschedulable", recorded_paste_facts("dra-driver-nvidia-gpu-136-pending-table-only.txt"))
    assert f.severity == "info" and "pod1" in f.message
    assert "kubectl describe pod pod1 -n gpu-test3" in f.fix


def test_a_pending_table_alone_never_claims_a_missing_class():
    assert not fired("dra-resource-class-missing", recorded_paste_facts("dra-driver-nvidia-gpu-136-pending-table-only.txt"))


def test_a_table_of_running_pods_is_healthy():
    healthy = recorded_paste_facts("gpu-operator-1397-get-pods-all-running-healthy.txt")
    assert not fired("k8s-pod-unschedulable", healthy)
    assert not fired("dra-resource-class-missing", healthy)


def test_a_missing_device_class_is_dra_resource_class_missing_and_not_also_unschedulable():
    got = recorded_paste_facts("dra-driver-nvidia-gpu-338-device-class-missing.txt")
    (f,) = fired("dra-resource-class-missing", got)
    assert f.severity == "error" and "gpu.nvidia.com" in f.message and "0/2 nodes are available" in f.message
    assert "kubectl get deviceclasses" in f.fix and "helm list -A" in f.fix
    assert not fired("k8s-pod-unschedulable", got)


def test_the_older_resource_class_wording_asks_for_resourceclasses():
    # dynamicresources.go's v1alpha2-era format, filled in with the NVIDIA driver's class
    line = "  Warning  FailedScheduling  3s  default-scheduler  0/1 nodes are available: resource class gpu.nvidia.com does not exist.\n"
    (f,) = fired("dra-resource-class-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line)}))
    assert "ResourceClass gpu.nvidia.com" in f.message and f.fix.startswith("kubectl get resourceclasses")


def test_scheduler_text_in_an_unrelated_paste_fires_nothing():
    line = "The node has 8 GPUs and the job runs fine; no scheduler message here.\n"
    got = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(line)})
    assert not fired("k8s-pod-unschedulable", got)
    assert not fired("dra-resource-class-missing", got)
