"""A Kubernetes pod (a GPU pod, mostly) that stays Pending, read from what the scheduler and kubectl
print: the FailedScheduling message and its per-plugin reasons (knowledge/messages/k8s_scheduler.toml,
ENV135), DRA's missing DeviceClass or ResourceClass (ENV136), and a bare `kubectl get pods` row in
Pending (knowledge/messages/kubectl_pods.toml: the events say why, ENV135 at info)."""

from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import ticket_read, told_evidence, told_text

SYMBOL = "k8s-pod-unschedulable"
DRA_SYMBOL = "dra-resource-class-missing"

_FIT = "k8s_scheduler:nodes-available"
_NO_NODES = "k8s_scheduler:no-nodes"
_EVENT = "k8s_scheduler:failed-scheduling-event"
# What follows the reasons, not a reason: DefaultPreemption's and DynamicResources' PostFilter words.
_CONTEXT = frozenset({_FIT, _NO_NODES, _EVENT, "k8s_scheduler:preemption-no-victims", "k8s_scheduler:preemption-not-helpful",
                      "k8s_scheduler:preemption-not-eligible", "k8s_scheduler:dra-postfilter"})
# DRA's class that does not exist: dra-resource-class-missing (ENV136) answers it.
_DRA_CLASS = frozenset({"k8s_scheduler:dra-device-class-missing", "k8s_scheduler:dra-resource-class-missing",
                        "k8s_scheduler:dra-class-not-retrieved", "k8s_scheduler:dra-class-notfound-api"})
_AFFINITY = frozenset({"k8s_scheduler:node-affinity-selector", "k8s_scheduler:node-affinity-enforced",
                       "k8s_scheduler:node-affinity-conflict"})
_PENDING = "kubectl_pods:Pending"
_GET_PODS = "kubectl_pods:get-pods-command"
# An accelerator advertised by a device plugin: nvidia.com/gpu, nvidia.com/mig-1g.5gb, amd.com/gpu, gpu.intel.com/i915.
_GPU_RESOURCE = re.compile(r"(?:^|[./])(?:gpu|mig-[0-9a-z.]{1,20})(?:$|[./])|/gpu$")
# The taints the node lifecycle controller and kubectl cordon set: the node's state, not a GPU pool's policy.
_NODE_STATE_TAINTS = ("node.kubernetes.io/", "node.cloudprovider.kubernetes.io/")

_GPU_FIX = ("kubectl describe nodes | grep -A8 -E 'Allocatable|Allocated resources'   # {resource}: how many each node "
            "advertises, how many its pods already requested")
_NVIDIA_PLUGIN = ("kubectl get pods -n gpu-operator   # with the GPU operator: nvidia-device-plugin-daemonset must be Running "
                  "on each GPU node\n"
                  "kubectl get pods -n kube-system | grep nvidia-device-plugin   # a device plugin installed on its own: the same")
_AMD_PLUGIN = ("kubectl get pods -A | grep -i amdgpu   # the AMD device plugin (amdgpu-device-plugin) or GPU operator: "
               "Running on each GPU node")
_LOWER = ("# or lower the pod's resources.limits {resource} to what one node has free (a pod runs on one node: "
          "it cannot have more than one node's GPUs)")
_CPU_FIX = ("kubectl describe nodes | grep -A8 -E 'Allocatable|Allocated resources'   # {resource}: each node's allocatable "
            "and what its pods already request\n"
            "# then lower the pod's resources.requests {resource} below one node's free amount, or add nodes")
_TAINT_FIX = ("kubectl describe nodes | grep -E '^(Name|Taints):'   # which nodes carry {taint}\n"
              "# then give the pod a toleration for it (spec.tolerations):\n"
              "#   - key: \"{key}\"\n#     operator: \"Exists\"\n#     effect: \"NoSchedule\"   # the effect the node's Taints: line shows (NoSchedule or NoExecute)")
_NODE_STATE_FIX = ("kubectl get nodes   # {taint} is the node's own state (NotReady, unreachable, cordoned), not a policy to tolerate\n"
                   "kubectl describe nodes | grep -E '^(Name|Taints):|Ready'   # which node, and its Ready condition; a cordoned "
                   "one: kubectl uncordon NODE")
_AFFINITY_FIX = ("kubectl get nodes --show-labels   # the labels the pod's nodeSelector or node affinity must match\n"
                 "kubectl get pod {pod} -n {ns} -o jsonpath='{{.spec.nodeSelector}}{{\"\\n\"}}{{.spec.affinity.nodeAffinity}}{{\"\\n\"}}'"
                 "   # what the pod asks for")
_CORDON_FIX = ("kubectl get nodes   # SchedulingDisabled: cordoned (kubectl cordon or drain)\n"
               "kubectl uncordon NODE   # once its maintenance is over")
_DESCRIBE = "kubectl describe pod {pod} -n {ns}   # Events: the scheduler's latest FailedScheduling message"


def _where(f: FactView) -> Dict[str, str]:
    """The Pending pod's name and namespace where the paste shows them (a kubectl get pods row, the
    kubectl get po -n NS line above it); POD and NAMESPACE where it does not."""
    syms = ticket_read(f)
    row = next((s for s in syms if s.get("id") == _PENDING), None)
    # kubectl get events names the pod in its OBJECT column ("pod/NAME") before the message
    row = row or next((s for s in syms if s.get("id") == _EVENT and s.get("pod")), None)
    cmd = next((s for s in syms if s.get("id") == _GET_PODS and (s.get("namespace") or s.get("ns_first"))), None)
    ns = (row or {}).get("namespace") or (cmd or {}).get("namespace") or (cmd or {}).get("ns_first")
    return {"pod": (row or {}).get("pod") or "POD", "ns": ns or "NAMESPACE"}


def _said(s: dict) -> str:
    return str(s.get("matched") or told_text(s)).strip()


def _fixes(reasons: List[dict], where: Dict[str, str]) -> List[str]:
    out: List[str] = []

    def add(text: str) -> None:
        if text not in out:
            out.append(text)

    for r in reasons:
        rid = r.get("id")
        if rid == "k8s_scheduler:insufficient-resource":
            resource = str(r.get("resource") or "")
            if _GPU_RESOURCE.search(resource):
                add(_GPU_FIX.format(resource=resource))
                add(_AMD_PLUGIN if resource.startswith("amd.com/") else _NVIDIA_PLUGIN)
                add(_LOWER.format(resource=resource))
            else:
                add(_CPU_FIX.format(resource=resource))
        elif rid == "k8s_scheduler:too-many-pods":
            add(_CPU_FIX.format(resource="pods"))
        elif rid == "k8s_scheduler:untolerated-taint":
            taint = str(r.get("taint") or r.get("taint_old") or "").strip()
            key = taint.split(":", 1)[0].strip()
            if key.startswith(_NODE_STATE_TAINTS):
                add(_NODE_STATE_FIX.format(taint=key))
            else:
                add(_TAINT_FIX.format(taint=("{" + taint + "}") if taint else "the taint", key=key or "KEY"))
        elif rid in _AFFINITY:
            add(_AFFINITY_FIX.format(**where))
        elif rid == "k8s_scheduler:node-unschedulable":
            add(_CORDON_FIX)
    add(_DESCRIBE.format(**where))
    return out


@rule("ENV135", SYMBOL, "error", "a Kubernetes pod stays Pending: the scheduler finds no node for it", impact=7,
      also={"info": "only a kubectl get pods row in Pending is pasted, no event: the events say why"})
def k8s_pod_unschedulable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The scheduler's FailedScheduling message, "0/N nodes are available: <count> <reason>, ...",
        as kubectl describe pod prints it under Events (or kubectl get events, a pod's
        PodScheduled condition), and each reason in it from the in-tree filter plugins:
        "Insufficient nvidia.com/gpu" (and cpu, memory, amd.com/gpu...), "node(s) had untolerated
        taint {key: value}", "node(s) didn't match Pod's node affinity/selector", "node(s) were
        unschedulable", the volume, topology, affinity and DRA reasons; a FailedScheduling event
        cut before its "0/N" part with a reason on its line; "no nodes available to schedule pods".
        A bare `kubectl get pods` row in Pending, with no event pasted, is answered at info: the
        events say why.

    Why it matters:
        A pod the scheduler cannot place stays Pending for ever, with no error in its logs (it has
        none): the reason is only in its events. For a GPU pod the usual ones are a node that
        advertises no free nvidia.com/gpu (the device plugin is not running there, or every GPU is
        taken, or the pod asks for more GPUs than one node has), a GPU node pool tainted for GPU
        pods only, and a nodeSelector naming a label no node carries.

    How to fix:
        For Insufficient nvidia.com/gpu: compare each node's allocatable GPUs with what is
        allocated, check that the device plugin (GPU operator) pod runs on the GPU nodes, and ask
        for no more GPUs than one node has free. For a taint: a toleration for it (or, for the
        node.kubernetes.io taints, the node's own state: NotReady, cordoned). For node selector or
        affinity: the nodes' labels against the pod's. In every case kubectl describe pod shows
        the scheduler's latest message.

    References:
        - https://github.com/kubernetes/kubernetes/blob/master/pkg/scheduler/framework/types.go (FitError.Error)
        - https://github.com/kubernetes/kubernetes/tree/master/pkg/scheduler/framework/plugins (each plugin's reasons)
        - https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/
        - https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
        - https://github.com/NVIDIA/k8s-device-plugin/issues/430 (Insufficient nvidia.com/gpu with the preemption suffix)
    """
    syms = ticket_read(f)
    where = _where(f)
    fit = next((s for s in syms if s.get("id") in (_FIT, _NO_NODES)), None)
    event_lines = {s.get("line") for s in syms if s.get("id") == _EVENT}
    if fit is None:
        # A FailedScheduling event the paste cut before its "0/N nodes are available" part: a reason on its line.
        fit = next((s for s in syms if s.get("line") in event_lines and str(s.get("id", "")).startswith("k8s_scheduler:")
                    and s.get("id") not in _CONTEXT), None)
    if fit is not None:
        on_line = [s for s in syms if s.get("line") == fit.get("line") and str(s.get("id", "")).startswith("k8s_scheduler:")
                   and s.get("id") not in _CONTEXT]
        reasons = [s for s in on_line if s.get("id") not in _DRA_CLASS]
        if on_line and not reasons:
            return   # only DRA's missing class: dra-resource-class-missing says it
        if fit.get("id") == _NO_NODES:
            told = "the scheduler has no node at all to try"
        elif reasons:
            told = "; ".join(dict.fromkeys(_said(r) for r in reasons))
            nodes = f" of {fit.get('total')}" if fit.get("total") else ""
            told = f"no node{nodes} fits the pod: {told}"
        else:
            told = f"no node fits the pod: {str(fit.get('reasons') or '').strip()[:200]}"
        fix = _fixes(reasons, where)
        if fit.get("id") == _NO_NODES:
            fix.insert(0, "kubectl get nodes   # the cluster's nodes and their state: none is Ready")
        yield Hit(message=f"line {fit.get('line')}: \"{told_text(fit)}\": {told}",
                  fix="\n".join(fix), evidence=dict(told_evidence(fit), reasons=[r.get("id") for r in reasons]))
        return
    pending = [s for s in syms if s.get("id") == _PENDING]
    if pending:
        s = pending[0]
        yield Hit(message=f"line {s.get('line')}: pod {where['pod']} is Pending and the paste holds no event that says why: "
                          "the scheduler's FailedScheduling event (or the kubelet's, once it is scheduled) does",
                  fix=_DESCRIBE.format(**where) + "\n"
                      + f"kubectl get events -n {where['ns']} --field-selector involvedObject.name={where['pod']}   # the same events alone",
                  evidence=told_evidence(s), severity="info")


@rule("ENV136", DRA_SYMBOL, "error",
      "a DRA resource claim names a DeviceClass (ResourceClass) the cluster does not have", impact=7)
def dra_resource_class_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The scheduler's DRA plugin saying that the class a claim asks for does not exist: "request
        gpu: device class gpu.nvidia.com does not exist" (Kubernetes v1.31 and later, DeviceClass),
        "resource class gpu.nvidia.com does not exist" (v1.26 to v1.30, ResourceClass), the
        allocator's "could not retrieve device class ...: ... not found", and the API server's
        'deviceclasses.resource.k8s.io "gpu.nvidia.com" not found'.

    Why it matters:
        A ResourceClaim (or its template) names a DeviceClass by deviceClassName; the DRA driver
        installs its classes. Without the class the scheduler cannot allocate the claim on any node
        and the pod stays Pending (preemption is "not helpful"): the driver is not installed, was
        installed without the part that creates that class, or the name is wrong.

    How to fix:
        List the classes the cluster has (kubectl get deviceclasses; resourceclasses on the older
        API), check that the DRA driver's pods run and its chart is installed with the class the
        claim names, or put a listed class in the claim's deviceClassName.

    References:
        - https://github.com/kubernetes/kubernetes/blob/master/pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go (validateDeviceClass)
        - https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/
        - https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/338 (device class gpu.nvidia.com does not exist)
        - https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/dra-intro-install.html
    """
    syms = ticket_read(f)
    told = [x for x in syms if DRA_SYMBOL in (x.get("rules") or [])]   # every line, not one per entry
    # the scheduler's own line ("0/N nodes are available: request gpu: ...") before a title retelling it
    fit_lines = {x.get("line") for x in syms if x.get("id") in (_FIT, _EVENT)}
    s: Optional[dict] = next((x for x in told if x.get("line") in fit_lines), None) or next(iter(told), None)
    if s is None:
        return
    old = s.get("id") == "k8s_scheduler:dra-resource-class-missing" or str(s.get("kind") or "").startswith("resourceclass")
    name = str(s.get("deviceclass") or s.get("resourceclass") or "").strip() or "the class"
    kind, listing = ("ResourceClass", "resourceclasses") if old else ("DeviceClass", "deviceclasses")
    other = "deviceclasses" if old else "resourceclasses"
    fix = (f"kubectl get {listing}   # the classes the cluster has; {name} is not among them "
           f"(kubectl get {other} on {'v1.31 and later' if old else 'Kubernetes v1.26-v1.30'})\n"
           "kubectl get pods -A | grep -i dra   # the DRA driver's controller and kubelet plugin: its Helm chart creates its classes\n"
           "helm list -A | grep -i dra   # the driver's release, if it was installed with Helm\n"
           f"# then install (or upgrade) the DRA driver with the part that creates {name} (NVIDIA's nvidia-dra-driver-gpu "
           "creates gpu.nvidia.com only with its GPU resources enabled: helm get values RELEASE -n NAMESPACE shows them), "
           f"or put a class kubectl get {listing} lists in the claim's deviceClassName")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the claim asks for the {kind} {name}, which the cluster "
                      "does not have, so the scheduler cannot allocate it on any node and the pod stays Pending",
              fix=fix, evidence=dict(told_evidence(s), deviceclass=name))
