"""RDMA devices that are not there: a node or pod without the EFA its software expected (the AWS EFA
device plugin, aws-ofi-nccl, fi_info -p efa), and a node whose kernel registered no InfiniBand/RoCE
HCA or whose HCA failed to initialise (infiniband-diags, libibverbs' tools, mlx5_core/mlx4_core).
Catalogues: knowledge/messages/efa_device_plugin.toml, aws_ofi_nccl.toml, libfabric.toml,
ib_subnet.toml, libibverbs.toml, kernel_rdma.toml."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, told_evidence, told_text

EFA = "efa-device-missing"
RDMA = "rdma-device-missing"

_PLUGIN = "efa_device_plugin:no-valid-efa-devices"
_OFI = ("aws_ofi_nccl:couldnt-find-optimal-provider", "aws_ofi_nccl:fi-getinfo-failed",
        "aws_ofi_nccl:no-protocol-worked")
_FI_INFO = "libfabric:fi-info-efa-enodata"

# Dated documents the EFA fix points at (read 2026-11-28).
_EC2_EFA_DOC = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types"
_EKS_EFA_DOC = "https://docs.aws.amazon.com/eks/latest/userguide/device-management-efa.html"

_EFA_NODE_FIX = (
    "fi_info -p efa   # \"fi_getinfo: -61 (No data available)\": libfabric sees no EFA here\n"
    "ls /sys/class/infiniband   # an EFA shows as rdmap<N>s<M> (efa_<N> on older AMIs); empty: no EFA attached\n"
    "lsmod | grep efa   # the efa kernel module (the EFA installer, or the AMI's); none: install it or use an EFA-enabled AMI\n"
    "TOKEN=$(curl -sX PUT http://169.254.169.254/latest/api/token -H 'X-aws-ec2-metadata-token-ttl-seconds: 60'); "
    "curl -sH \"X-aws-ec2-metadata-token: $TOKEN\" http://169.254.169.254/latest/meta-data/instance-type; echo   # this instance type\n"
    "aws ec2 describe-instance-types --filters Name=network-info.efa-supported,Values=true "
    "--query 'InstanceTypes[].InstanceType' --output text   # the types with EFA (from a host with AWS credentials)\n"
    f"# an EFA-capable type still needs its network interface created with InterfaceType efa (launch template, eksctl efaEnabled): {_EC2_EFA_DOC} (read 2026-11-28)")

_EFA_POD_FIX = (
    "kubectl get nodes -o custom-columns='NODE:.metadata.name,TYPE:.metadata.labels.node\\.kubernetes\\.io/instance-type,"
    "EFA:.status.allocatable.vpc\\.amazonaws\\.com/efa'   # which nodes advertise EFA\n"
    "kubectl -n kube-system get pods -o wide | grep efa   # the plugin pod that crash-loops, and its node\n"
    "helm list -A | grep -i efa   # the chart's release (its values: supportedInstanceLabels, nodeSelector)\n"
    "kubectl -n kube-system get daemonset -o yaml | grep -A14 -e nodeSelector -e nodeAffinity   "
    "# where the plugin's DaemonSet may run (the chart renders supportedInstanceLabels as a node affinity)\n"
    "# schedule the plugin only where an EFA is attached: list only EFA-enabled types in supportedInstanceLabels.values, "
    "or give the EFA node pools a label and set the chart's nodeSelector to it (helm upgrade ... -f values.yaml)\n"
    f"# pods that use EFA must request it (resources.limits vpc.amazonaws.com/efa: N): {_EKS_EFA_DOC} (read 2026-11-28)\n"
    "# on the node itself: ls /sys/class/infiniband; lsmod | grep efa; fi_info -p efa")


@rule("NET048", EFA, "error", "the node or pod has no EFA device where the software expected one", impact=7)
def efa_device_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program that looked for an AWS Elastic Fabric Adapter and found none:
        the EFA Kubernetes device plugin's "Error to get IB device: %v. No valid EFA devices
        found", aws-ofi-nccl's NET/OFI failures to find a libfabric provider ("Couldn't find any
        optimal provider", "OFI fi_getinfo() call failed: No data available", "Unable to find a
        protocol that worked"), and fi_info -p efa answering "fi_getinfo: -61 (No data
        available)".

    Why it matters:
        Without an EFA the device plugin exits and its DaemonSet pod crash-loops, the node
        advertises no vpc.amazonaws.com/efa and pods that request it stay Pending; NCCL loses the
        OFI plugin and falls back to TCP sockets or fails. The usual causes: an instance type
        without EFA, an EFA-capable type launched without an EFA interface, the efa kernel
        module not loaded, a pod that did not request vpc.amazonaws.com/efa (so its container
        has no /dev/infiniband), or a chart whose supportedInstanceLabels list types without EFA.

    How to fix:
        On the node: fi_info -p efa, ls /sys/class/infiniband, lsmod | grep efa, and the instance
        type against EC2's EFA list. For the device plugin: restrict its DaemonSet to EFA nodes
        (supportedInstanceLabels or nodeSelector); for a pod: request vpc.amazonaws.com/efa.

    References:
        - https://github.com/aws/sagemaker-hyperpod-cli/issues/367 (the plugin scheduled onto instance types without EFA)
        - https://github.com/aws/eks-charts/issues/1239 (the plugin crash-loops on EFA-capable nodes with no EFA attached)
        - https://github.com/aws/aws-ofi-nccl/blob/v1.21.1/src/nccl_ofi_net.cpp (protocol selection, "Unable to find a protocol that worked")
        - https://github.com/ofiwg/libfabric/blob/v2.6.0/prov/efa/src/efa_device.c (efa_device_list_initialize)
        - https://github.com/ofiwg/libfabric/pull/10794 (fi_info -p efa returns -61 on an instance without an EFA)
        - https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html (supported instance types; read 2026-11-28)
        - https://docs.aws.amazon.com/eks/latest/userguide/device-management-efa.html (read 2026-11-28)
    """
    told = catalogued(f, EFA)
    if not told:
        return
    s = told[0]
    sid = s.get("id")
    if sid == _PLUGIN:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the AWS EFA device plugin found no EFA device on "
                          "its node and exits, so its pod crash-loops and the node advertises no vpc.amazonaws.com/efa; "
                          "the DaemonSet runs on a node without an EFA (an instance type without EFA, or an EFA-capable "
                          "type launched without an EFA interface) or without /sys and /dev/infiniband mounted",
                  fix=_EFA_POD_FIX, evidence=told_evidence(s))
        return
    if sid in _OFI:
        aws = first_symptom(f, "aws_ofi_nccl:provider-filter-efa")
        where = ("on EC2 (the plugin set its provider filter to efa): no EFA device is reachable from this process"
                 if aws else "on EC2 this means no EFA device is reachable from this process (on other fabrics, "
                             "no libfabric provider for them)")
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": aws-ofi-nccl found no libfabric provider, "
                          f"{where}; NCCL cannot use the OFI plugin and falls back to sockets or fails. In a pod, "
                          "it must request vpc.amazonaws.com/efa to get the devices",
                  fix=_EFA_NODE_FIX + "\n" + "kubectl get pods -A -o custom-columns='POD:.metadata.name,EFA:.spec.containers[*].resources.limits.vpc\\.amazonaws\\.com/efa'   # in Kubernetes: which pods requested vpc.amazonaws.com/efa",
                  evidence=told_evidence(s))
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": libfabric's efa provider found no EFA device here "
                      "(an instance type without EFA, no EFA interface attached, the efa kernel module not loaded, or "
                      "a container without /dev/infiniband)",
              fix=_EFA_NODE_FIX, evidence=told_evidence(s))


# Messages that say the HCA exists and its driver gave up on it (kernel_rdma.toml).
_HCA_FAILED = ("kernel_rdma:mlx5-init-one-failed", "kernel_rdma:mlx5-pci-init-failed", "kernel_rdma:mlx-probe-failed",
               "kernel_rdma:mlx5-firmware-init-timeout", "kernel_rdma:mlx5-cmdif-rev-mismatch")
# Firmware commands refused: beside an absent device or a failed probe, the firmware/driver pair.
_FW_REFUSED = ("kernel_rdma:mlx5-cmd-failed", "kernel_rdma:mlx4-cmd-failed", "kernel_rdma:mlx5-handle-hca-cap-failed",
               "kernel_rdma:mlx5-cmdif-rev-mismatch")
# libibverbs' provider warnings: "No IB devices found" beside them is a missing provider
# (container-rdma-libs-missing), not a missing device.
_PROVIDER_WARNINGS = ("libibverbs:no-userspace-driver", "libibverbs:config-dir-missing", "libibverbs:driver-load-failed")

_RDMA_FIX = (
    "ls /sys/class/infiniband   # the RDMA devices the kernel registered (mlx5_0 ...); empty or absent: none\n"
    "lspci -nn | grep -i -e mellanox -e infiniband   # is the HCA on the PCI bus at all (vendor 15b3)\n"
    "lsmod | grep -e mlx5_core -e mlx4_core -e ib_core -e ib_uverbs   # the HCA driver and the RDMA core\n"
    "dmesg | grep -i -e mlx5 -e mlx4   # why the driver gave up on it (needs root where dmesg is restricted)\n"
    "sudo modprobe -a mlx5_ib ib_uverbs ib_umad   # the RDMA half of the stack, where the driver loaded but no device shows\n"
    "# a login node or a VM without an HCA has no RDMA device by design: nothing to fix there")

_FW_FIX = (
    "sudo mlxfwmanager --query   # MLNX_OFED / NVIDIA firmware tools: each HCA's firmware version and PSID, and the available update\n"
    "for d in $(lspci -D -d 15b3: | awk '{print $1}'); do sudo mstflint -d \"$d\" q; done   # without MFT: each Mellanox/NVIDIA adapter's firmware (mstflint -d <pci> q)\n"
    "modinfo mlx5_core | grep -e ^version -e ^vermagic   # the driver (inbox kernel or MLNX_OFED/DOCA-OFED) paired with it\n"
    "# compare with the driver's release notes (their list of supported firmware versions): update the firmware "
    "(the server vendor's package for an OEM PSID, else NVIDIA's image for the PSID) or use a driver that supports it, then cold-reboot")


@rule("NET049", RDMA, "warning", "the kernel registered no RDMA device, or the HCA failed to initialise", impact=7,
      also={"error": "the kernel log shows the HCA's driver giving up on it (a failed probe, firmware stuck in "
                     "initialisation), or firmware commands refused beside the absent device"})
def rdma_device_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log or command output: no RDMA device registered by the kernel, as
        infiniband-diags (ibstatus's "Fatal error: device '*': sys files not found
        (/sys/class/infiniband/*/ports)", "Fatal error: No devices", ibstat's panics) and
        libibverbs' tools ("No IB devices found", "Failed to get IB devices list") report it; and
        the kernel's ConnectX driver giving up on the adapter (mlx5_core's "mlx5_init_one failed",
        "probe of ... failed", a firmware stuck in initialisation, a command-interface revision
        the driver does not speak). Where firmware commands failed beside it (mlx5's "failed,
        status ..., syndrome", mlx4's "command 0x.. failed: fw status = 0x.."), the HCA's
        firmware/driver pair is named as the suspect. "No IB devices found" beside libibverbs'
        provider warnings is a missing user-space provider (container-rdma-libs-missing), not this.

    Why it matters:
        MPI, NCCL and every verbs program fall back to TCP or fail when the node has no RDMA
        device. A driver that gave up on its HCA is a node fault (an error): the adapter is there
        and unusable, most often a firmware the driver will not work with. A listing tool that
        finds no device is only a fault where the node should have one: a login node or a VM
        without RDMA has none by design, so that case is a warning until the node's role says.

    How to fix:
        ls /sys/class/infiniband, lspci for the HCA, lsmod for mlx5_core/ib_core, dmesg for the
        driver's reason; with firmware command failures, query the firmware (mlxfwmanager --query,
        mstflint -d <pci> q) and check it against the driver's release notes, then update one or
        the other.

    References:
        - https://github.com/linux-rdma/rdma-core/blob/v64.0/infiniband-diags/scripts/ibstatus
        - https://github.com/linux-rdma/rdma-core/blob/v64.0/libibverbs/examples/devinfo.c
        - https://github.com/clustervision/trinity/issues/219 (no IB device on some nodes; fixed by the HCAs' firmware update)
        - https://github.com/pocopico/rp-ext/issues/129 (mlx5_core: handle_hca_cap failed, probe failed -22)
    """
    told = catalogued(f, RDMA)
    if not told:
        return
    provider_warned = first_symptom(f, *_PROVIDER_WARNINGS) is not None
    told = [s for s in told if not (s.get("id") == "libibverbs:no-ib-devices-found" and provider_warned)]
    if not told:
        return
    failed = next((s for s in told if s.get("id") in _HCA_FAILED), None)
    refused = first_symptom(f, *_FW_REFUSED)
    s = failed or told[0]
    firmware = ""
    fix = _RDMA_FIX
    if refused:
        firmware = (f"; line {refused.get('line')} \"{told_text(refused)}\": the HCA's firmware refused the driver's "
                    "command, so the firmware/driver pair is the suspect (a firmware older or newer than this driver "
                    "supports, or an OEM firmware it does not know)")
        fix = _FW_FIX + "\n" + _RDMA_FIX
    if failed:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": the kernel's ConnectX driver gave up on the HCA, so "
                          f"no RDMA device is registered for it{firmware}",
                  fix=fix, severity="error", evidence=told_evidence(s))
        return
    what = ("/sys/class/infiniband exists, so the RDMA core is loaded, but holds no device: the kernel registered no "
            "HCA" if s.get("id") == "ib_subnet:ibstatus-sys-files-not-found" and s.get("device") == "*"
            else "the kernel registered no RDMA device (none under /sys/class/infiniband)")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}{firmware}. A fault where this node should have an HCA (a compute node of "
                      "an InfiniBand/RoCE cluster: the HCA absent, or its driver failed to initialise it); expected on a "
                      "login node or a VM without RDMA, hence a warning: the listing alone cannot tell which",
              fix=fix, severity="error" if refused else None, evidence=told_evidence(s))
