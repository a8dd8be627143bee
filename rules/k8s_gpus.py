"""GPUs a Kubernetes node has but will not schedule: the device plugin reports them unhealthy, so the
kubelet counts them in the node's capacity and not in its allocatable (knowledge/messages/
k8s_device_plugin.toml: the node's two blocks as kubectl prints them, and the NVIDIA device plugin's
health-check lines)."""

from __future__ import annotations

from typing import Dict, Iterator, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "k8s-gpus-marked-unhealthy"
_BLOCKS = {"k8s_device_plugin:node-block-allocatable": "allocatable", "k8s_device_plugin:node-block-capacity": "capacity"}
_COUNT = "k8s_device_plugin:node-gpu-count"
_PLUGIN_SAID = ("k8s_device_plugin:xid-critical-unhealthy", "k8s_device_plugin:device-marked-unhealthy",
                "k8s_device_plugin:marking-all-unhealthy", "k8s_device_plugin:marking-device-unhealthy")
# A count belongs to the block header above it only when it is close: a node's resource block is a
# dozen lines at most (cpu, memory, storage, hugepages, pods, the plugins' resources).
_BLOCK_SPAN = 24

_FIX = ("kubectl describe node NODE | grep -A8 -E '^(Capacity|Allocatable):'   # capacity counts every GPU, allocatable the healthy ones\n"
        "kubectl -n kube-system logs -l name=nvidia-device-plugin-ds --tail=200 | grep -iE 'xid|unhealthy'   # which GPU, which XID "
        "(the GPU operator's label: app=nvidia-device-plugin-daemonset)\n"
        "nvidia-smi -q | grep -iE 'Xid|Retired|Remapp|Pending'   # on the node: the GPU's own error state; dmesg | grep -i xid\n"
        "kubectl -n kube-system delete pod -l name=nvidia-device-plugin-ds   # after the GPU is fixed or reset: the restarted plugin "
        "reports it healthy again (it never marks a GPU healthy by itself)")


def _pairs(f: FactView) -> Dict[str, Dict[str, Tuple[int, dict]]]:
    """{resource: {"capacity": (count, symptom), "allocatable": (count, symptom)}} from the listed lines,
    each count under the nearest block header above it."""
    # Every listed line (catalogued() keeps one per entry): each count and each block header.
    told = sorted((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _BLOCKS or s.get("id") == _COUNT),
                  key=lambda s: int(s.get("line") or 0))
    out: Dict[str, Dict[str, Tuple[int, dict]]] = {}
    block: Optional[Tuple[str, int]] = None
    for s in told:
        line = int(s.get("line") or 0)
        if s.get("id") in _BLOCKS:
            block = (_BLOCKS[s["id"]], line)
        elif s.get("id") == _COUNT and block is not None and 0 < line - block[1] <= _BLOCK_SPAN:
            try:
                count = int(str(s.get("count")))
            except ValueError:
                continue
            out.setdefault(str(s.get("resource")), {}).setdefault(block[0], (count, s))
    return out


@rule("ENV074", SYMBOL, "error",
      "the node's device plugin reports GPUs unhealthy: capacity counts them, allocatable does not", impact=8)
def k8s_gpus_marked_unhealthy(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted node (kubectl get node -o yaml, or kubectl describe node), nvidia.com/gpu (or
        amd.com/gpu) in "capacity" above its count in "allocatable" ("16" against "0"); and the
        NVIDIA device plugin's own log lines: "XidCriticalError: Xid=N on Device=...; marking
        device as unhealthy" (and its older wordings "..., the device will go unhealthy"),
        "'nvidia.com/gpu' device marked unhealthy: ...", "Marking all devices as unhealthy".

    Why it matters:
        The kubelet counts every device a plugin advertises in capacity and only the healthy
        ones in allocatable; the scheduler places pods by allocatable. A GPU the plugin marked
        unhealthy (after an XID critical error, or when it could not watch it) stays out of
        scheduling until the plugin is restarted: pods asking for nvidia.com/gpu stay Pending with
        "Insufficient nvidia.com/gpu" although the node shows the GPUs.

    How to fix:
        Read the plugin's log for the XID and the GPU, check that GPU on the node (nvidia-smi -q,
        the kernel log), fix or reset it, then restart the device plugin pod so that it reports
        the GPU again.

    References:
        - https://github.com/NVIDIA/k8s-device-plugin/blob/1b826acc6af3079d8923bac395c3124b8861a9a6/internal/rm/health.go
        - https://github.com/NVIDIA/k8s-device-plugin/issues/58 (the maintainer: allocatable is the number of healthy GPUs)
        - https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/cm/devicemanager/manager.go (GetCapacity)
        - https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/ (device health)
        - https://docs.nvidia.com/deploy/xid-errors/index.html
    """
    said = next((s for s in catalogued(f, SYMBOL) if s.get("id") in _PLUGIN_SAID), None)
    if said is not None:
        xid = f" after XID {said.get('xid')}" if said.get("xid") else ""
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the device plugin marked a GPU unhealthy{xid}; "
                          "the kubelet leaves it out of the node's allocatable GPUs until the plugin reports it again",
                  fix=_FIX, evidence=told_evidence(said))
        return
    for resource, blocks in sorted(_pairs(f).items()):
        if "capacity" not in blocks or "allocatable" not in blocks:
            continue
        (total, cap), (healthy, alloc) = blocks["capacity"], blocks["allocatable"]
        if healthy >= total:
            continue
        yield Hit(message=f"{resource}: capacity {total} (line {cap.get('line')}) but allocatable {healthy} "
                          f"(line {alloc.get('line')}): the device plugin reports {total - healthy} of the node's "
                          f"{total} GPUs unhealthy, and the scheduler places no pod on them",
                  fix=_FIX, evidence={"resource": resource, "capacity": total, "allocatable": healthy,
                                      "ticket.line": alloc.get("line"), "ticket.text": str(alloc.get("text", ""))[:160]})
        return
