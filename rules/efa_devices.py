"""AWS's Elastic Fabric Adapter (EFA): a node where the software that expected one finds none, read
from AWS's EFA device plugin for Kubernetes (knowledge/messages/efa_device_plugin.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import first_catalogued, ticket_evidence, told_text

SYMBOL = "efa-device-missing"


@rule("NET048", SYMBOL, "warning", "the EFA device plugin found no EFA device on its node", impact=5)
def efa_device_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, AWS's EFA device plugin for Kubernetes saying it found no EFA device on its
        node ("Error to get IB device: %v. No valid EFA devices found"), or that the node's
        instance type has none ("Instance type g6e.12xlarge is not EFA enabled").

    Why it matters:
        The plugin advertises a node's EFA devices as vpc.amazonaws.com/efa; without one its pod
        exits and restarts (CrashLoopBackOff) and no pod that requests EFA can be placed there, while
        NCCL on the node falls back to sockets. The node itself is not broken: the plugin runs where
        no EFA is: an instance type without EFA (a chart whose instance list or nodeSelector is too
        wide), an instance launched without an EFA network interface (Karpenter and node groups
        attach one only when asked), the efa kernel module not loaded, or the plugin's pod without
        the host's /dev/infiniband and /sys mounted.

    How to fix:
        On the node, ls /sys/class/infiniband (EFA devices are rdmap*) and lsmod | grep efa; fi_info
        -p efa lists what libfabric sees. Check that the instance type supports EFA (AWS's list of
        EFA instance types) and that the instance has an EFA interface; keep the DaemonSet off the
        nodes that have none (its nodeSelector, or the chart's supportedInstanceLabels).

    References:
        - https://github.com/aws/sagemaker-hyperpod-cli/issues/367
        - https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html (supported instance types)
        - https://docs.aws.amazon.com/eks/latest/userguide/node-efa.html
    """
    s = first_catalogued(f, SYMBOL)
    if s is None:
        return
    kind = s.get("instance_type")
    which = f" (instance type {kind})" if kind else ""
    yield Hit(message=f"AWS's EFA device plugin found no EFA device on its node{which} (line {s.get('line')}: "
                      f"\"{str(s.get('matched') or '').strip() or told_text(s)}\"): it advertises no vpc.amazonaws.com/efa and its pod restarts; the node "
                      "has no EFA (an instance type or launch without one, the efa module not loaded), or the "
                      "plugin's pod cannot see the host's /dev/infiniband and /sys",
              fix="kubectl get node NODE -L node.kubernetes.io/instance-type   # the node's instance type: AWS's list of "
                  "EFA instance types says whether it has EFA at all\n"
                  "ls /sys/class/infiniband; lsmod | grep -w efa   # on the node: an EFA device is rdmap*, registered by "
                  "the efa module\n"
                  "fi_info -p efa   # what libfabric sees: an error instead of a list is no EFA device it can use\n"
                  "kubectl -n kube-system get ds -o wide | grep -i efa   # the plugin's DaemonSet: keep it off nodes without "
                  "EFA (its nodeSelector, or the chart's supportedInstanceLabels)",
              evidence=ticket_evidence(s))
